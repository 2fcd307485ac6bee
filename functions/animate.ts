import { animateRequest, animationOf, sourceOf } from "../lib/api/schemas.js";
import { deliverAnimation } from "../lib/http/deliver.js";
import { paidAccess } from "../lib/http/paid-access.js";
import { withHttp } from "../lib/http/with-http.js";
import { animate } from "../lib/render/animate/animate.js";

// POST /api/v1/animate: a page (or an HTML document) scrolled as MP4, WebM, GIF or animated WebP. $0.02 (docs/api.md, "Animate").
export const handler = withHttp({ route: "animate", access: paidAccess, schema: animateRequest }, async ({ body, deadline }) => {
  const { responseFormat, ...request } = body;
  const { options, animation } = animationOf(request);
  return deliverAnimation(await animate(sourceOf(request), options, animation, deadline), responseFormat);
});
