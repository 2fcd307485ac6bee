import { deliverCapture } from "../lib/http/deliver.js";
import { screenshotRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";
import { capture } from "../lib/render/capture.js";

// POST /api/v1/screenshot: render a URL and answer with the image/PDF or its JSON envelope.
export const handler = withHttp({ route: "screenshot", schema: screenshotRequest }, async ({ body, deadline }) => {
  const { url, responseFormat, ...options } = body;
  return deliverCapture(await capture({ kind: "url", url }, options, deadline), responseFormat);
});
