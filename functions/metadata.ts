import { metadataRequest } from "../lib/api/schemas.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { extractMetadata } from "../lib/metadata/extract.js";

// POST /api/v1/metadata: free, no key needed (limited per IP, or per key when one is sent).
export const handler = withHttp({ route: "metadata", access: keyAccess, schema: metadataRequest }, async ({ body, deadline }) =>
  json(await extractMetadata(body.url, deadline)),
);
