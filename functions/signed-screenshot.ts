import { screenshotRequest } from "../lib/api/schemas.js";
import { captureOptionsOf, deliverCapture } from "../lib/http/deliver.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { renderThrough } from "../lib/http/render-cache.js";
import { withHttp } from "../lib/http/with-http.js";
import { capture } from "../lib/render/capture.js";

// GET /api/v1/screenshot?<fields>&keyId&expires&signature: a signed link, for <img src> (docs/api.md, "Signed links").
// Charged to the signing key's account like a POST; with cacheTtl, answered from the cache, and
// cacheable by a CDN for as long (the answer is the same for the same signed query).
export const handler = withHttp({ route: "signed-screenshot", access: paidAccess, schema: screenshotRequest }, async ({ body, deadline, cache }) => {
  const { url, ...rest } = body;
  const shot = await renderThrough(cache, () => capture({ kind: "url", url }, captureOptionsOf(rest), deadline));
  // Others (a CDN) may keep the answer as long as its cacheTtl, no longer than a link in it lives.
  return deliverCapture(shot.capture, body.responseFormat, shot.headers, { publicFor: body.cacheTtl });
});
