import { notImplemented } from "../lib/http/errors.js";
import { metadataRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";

// Validation is real; the work itself lands with its issue.
export const handler = withHttp({ route: "metadata", schema: metadataRequest }, async () => {
  throw notImplemented("Metadata extraction");
});
