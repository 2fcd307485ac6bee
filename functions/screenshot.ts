import { screenshotRequest } from "../lib/api/schemas.js";
import { captureOptionsOf, deliverCapture } from "../lib/http/deliver.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { renderThrough } from "../lib/http/render-cache.js";
import { withHttp } from "../lib/http/with-http.js";
import { capture } from "../lib/render/capture.js";

// POST /api/v1/screenshot: render a URL (or answer it from the render cache) with the image/PDF or its JSON envelope.
export const handler = withHttp({ route: "screenshot", access: paidAccess, schema: screenshotRequest }, async ({ body, deadline, cache }) => {
  const { url, ...rest } = body;
  const shot = await renderThrough(cache, () => capture({ kind: "url", url }, captureOptionsOf(rest), deadline));
  return deliverCapture(shot.capture, body.responseFormat, shot.headers);
});
