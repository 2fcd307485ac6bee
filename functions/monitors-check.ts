import { emptyRequest } from "../lib/api/schemas.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { checkNow } from "../lib/monitors/store.js";
import { routeById } from "../lib/routes.js";

// POST /api/v1/monitors/{monitorId}/check: a check now, besides the schedule, queued in the
// account's share of the workers and charged when it runs. 202 with its id; its outcome is in
// GET .../checks. A paused monitor runs nothing: 409 MONITOR_PAUSED.
export const handler = withHttp({ route: "monitors-check", schema: emptyRequest, emptyBody: {}, access: keyAccess }, async ({ account, params }) => {
  const { monitor, checkId } = await checkNow(account.accountId, params.monitorId ?? "");
  return json({ monitor_id: monitor.id, check_id: checkId, status: "queued" }, 202, {
    Location: routeById("monitors-checks").path.replace("{monitorId}", monitor.id),
  });
});
