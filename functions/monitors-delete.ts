import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { deleteObjects } from "../lib/monitors/objects.js";
import { deleteMonitor, ownMonitor } from "../lib/monitors/store.js";

// DELETE /api/v1/monitors/{monitorId}: no more checks (one running ends as it would, a queued one is
// dropped); its baseline is deleted now, its history expires with its time (docs/api.md, "Monitors").
export const handler = withHttp({ route: "monitors-delete", access: keyAccess }, async ({ account, params }) => {
  const monitor = await ownMonitor(account.accountId, params.monitorId ?? "");
  await deleteMonitor(monitor);
  await deleteObjects([monitor.baseline?.imageKey, monitor.baseline?.textKey]);
  return json({ id: monitor.id, deleted: true });
});
