import { notImplemented } from "../lib/http/errors.js";
import { withHttp } from "../lib/http/with-http.js";

// Lands with its issue; until then it answers 501 through the full pipeline.
export const handler = withHttp({ route: "usage" }, async () => {
  throw notImplemented("Usage");
});
