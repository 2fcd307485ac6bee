import { config } from "../lib/config.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// Public liveness check; touches nothing (no browser, no database) so it stays fast and cheap.
export const handler = withHttp({ route: "health" }, async () => json({ status: "ok", version: config.SHOTLINE_VERSION }));
