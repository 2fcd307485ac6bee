import { htmlScreenshotRequest } from "../lib/api/schemas.js";
import { captureOptionsOf, deliverCapture } from "../lib/http/deliver.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { renderThrough } from "../lib/http/render-cache.js";
import { withHttp } from "../lib/http/with-http.js";
import { capture } from "../lib/render/capture.js";

// POST /api/v1/html-to-screenshot: render a raw HTML document, same options, cache and answers as a URL.
export const handler = withHttp({ route: "html-to-screenshot", access: paidAccess, schema: htmlScreenshotRequest }, async ({ body, deadline, cache }) => {
  const { html, ...rest } = body;
  const shot = await renderThrough(cache, () => capture({ kind: "html", html }, captureOptionsOf(rest), deadline));
  return deliverCapture(shot.capture, body.responseFormat, shot.headers);
});
