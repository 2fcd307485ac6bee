import { keyAccess } from "../lib/http/key-access.js";
import { monitorChecksQuery } from "../lib/http/monitor-schemas.js";
import { checkAnswer, historyNote } from "../lib/http/monitors.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { listChecks, ownMonitor } from "../lib/monitors/store.js";

// GET /api/v1/monitors/{monitorId}/checks?limit=&before=: the monitor's checks, newest first (at
// most `limit`, 20 by default), each with its outcome, changed share and regions, text lines added
// and removed, and links to its before, after and diff images; `next` pages on (docs/api.md, "Monitors").
export const handler = withHttp({ route: "monitors-checks", schema: monitorChecksQuery, access: keyAccess }, async ({ account, params, body }) => {
  const monitor = await ownMonitor(account.accountId, params.monitorId ?? "");
  const { checks, next } = await listChecks(monitor.id, body.limit, body.before);
  return json({ monitor_id: monitor.id, ...historyNote, checks: await Promise.all(checks.map(checkAnswer)), next });
});
