import { deliverCapture } from "../lib/http/deliver.js";
import { htmlScreenshotRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";
import { capture } from "../lib/render/capture.js";

// POST /api/v1/html-to-screenshot: render a raw HTML document, same options and answers as a URL.
export const handler = withHttp({ route: "html-to-screenshot", schema: htmlScreenshotRequest }, async ({ body, deadline }) => {
  const { html, responseFormat, ...options } = body;
  return deliverCapture(await capture({ kind: "html", html }, options, deadline), responseFormat);
});
