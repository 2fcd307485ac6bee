import { keyAccess } from "../lib/http/key-access.js";
import { monitorRequest } from "../lib/http/monitor-schemas.js";
import { createMonitorAnswer } from "../lib/http/monitors.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/monitors: a page to check every `every` (docs/api.md, "Monitors"); its first check
// (its baseline) is queued at once, and charged when it runs. 201 with the monitor as GET shows it.
export const handler = withHttp({ route: "monitors-create", schema: monitorRequest, access: keyAccess }, async ({ account, body }) =>
  createMonitorAnswer(account.accountId, body),
);
