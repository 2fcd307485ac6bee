import { keyAccess } from "../lib/http/key-access.js";
import { monitorAnswer } from "../lib/http/monitors.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { ownMonitor } from "../lib/monitors/store.js";

// GET /api/v1/monitors/{monitorId}: the monitor, its state, last check and change, and its webhook's
// recent deliveries. Another account's monitor is as unknown as one that does not exist.
export const handler = withHttp({ route: "monitors-get", access: keyAccess }, async ({ account, params }) =>
  json(await monitorAnswer(await ownMonitor(account.accountId, params.monitorId ?? ""), true)),
);
