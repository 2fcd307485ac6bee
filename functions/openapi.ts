import { config } from "../lib/config.js";
import { openApiDocument } from "../lib/http/openapi.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /openapi.json: the OpenAPI 3.1 document, made from the route table and the zod schemas.
export const handler = withHttp({ route: "openapi" }, async ({ resource }) =>
  json(openApiDocument(new URL(resource.url).origin, config.SHOTLINE_VERSION), 200, { "Cache-Control": "public, max-age=300" }),
);
