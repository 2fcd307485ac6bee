import { notImplemented } from "../lib/http/errors.js";
import { htmlScreenshotRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";

// Validation is real; the work itself lands with its issue.
export const handler = withHttp({ route: "html-to-screenshot", schema: htmlScreenshotRequest }, async () => {
  throw notImplemented("HTML rendering");
});
