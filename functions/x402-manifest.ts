import { config } from "../lib/config.js";
import { discoveryManifest } from "../lib/http/discovery.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { requirementsV2 } from "../lib/payments/requirements.js";
import { routes } from "../lib/routes.js";

// GET /.well-known/x402.json: the paid routes, their prices and how to call them, for agents that
// find a service by its origin (docs/agents.md). Empty where x402 is not enabled.
const STARTED_AT = Math.floor(Date.now() / 1000);

export const handler = withHttp({ route: "x402-manifest" }, async ({ resource }) => {
  const origin = new URL(resource.url).origin;
  const manifest = discoveryManifest(origin, config.X402_PAY_TO ? routes : [], requirementsV2, STARTED_AT);
  return json(manifest, 200, { "Cache-Control": "public, max-age=300" });
});
