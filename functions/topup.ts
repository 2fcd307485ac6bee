import { notImplemented } from "../lib/http/errors.js";
import { topupRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";

// Validation is real; the work itself lands with its issue.
export const handler = withHttp({ route: "topup", schema: topupRequest }, async () => {
  throw notImplemented("Top-up");
});
