import { updateAccount } from "../lib/billing/accounts.js";
import { usageReport } from "../lib/billing/usage.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { accountUpdateRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";

// PATCH /api/v1/account: settings of the calling key's account; answers like GET /api/v1/usage.
export const handler = withHttp({ route: "account", access: keyAccess, schema: accountUpdateRequest }, async ({ account, body, deadline }) => {
  await updateAccount(account.accountId, { autoTopupEnabled: body.auto_topup_enabled }, deadline.signal);
  return json(await usageReport(account.accountId, deadline.signal));
});
