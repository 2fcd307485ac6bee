import { config } from "../lib/config.js";
import { referencePage } from "../lib/http/reference-page.js";
import { text } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /docs: the API reference for people, rendered from the OpenAPI document (no script).
export const handler = withHttp({ route: "docs" }, async ({ resource }) => {
  const { html, headers } = referencePage(new URL(resource.url).origin, config.SHOTLINE_VERSION);
  return text(html, "text/html; charset=utf-8", headers);
});
