import { llmsTxt } from "../lib/http/discovery.js";
import { text } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /llms.txt: a short plain-text guide for agents (llmstxt.org): what the service does, its
// endpoints and prices, how to pay, where the machine descriptions are.
export const handler = withHttp({ route: "llms-txt" }, async ({ resource }) =>
  text(llmsTxt(new URL(resource.url).origin), "text/plain; charset=utf-8", { "Cache-Control": "public, max-age=300" }),
);
