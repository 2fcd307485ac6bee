import { accountUpdateRequest } from "../lib/api/schemas.js";
import { getAutoTopup, saveAutoTopup, turnOffAutoTopup } from "../lib/billing/auto-topup.js";
import { usageReport } from "../lib/billing/usage.js";
import { invalidParams } from "../lib/errors.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// PATCH /api/v1/account: settings of the calling key's account; answers like GET /api/v1/usage.
// `auto_topup_enabled`: false turns auto-topup off; true turns a configuration back on (after a
// pause, or after it was turned off) as it was set; there is nothing to turn on without one.
export const handler = withHttp({ route: "account", access: keyAccess, schema: accountUpdateRequest }, async ({ account, body, deadline }) => {
  if (!body.auto_topup_enabled) await turnOffAutoTopup(account.accountId);
  else {
    const current = await getAutoTopup(account.accountId, deadline.signal);
    if (!current)
      throw invalidParams(
        "Invalid request: auto_topup_enabled: auto-topup has no configuration yet; set one with PUT /api/v1/auto-topup (threshold_cents, amount_cents, monthly_cap_cents, payer, and an allowance for the top-up address: GET /api/v1/auto-topup names it), or in the dashboard.",
      );
    // Nothing is proven here: the account must still hold its payer (PAYER_TAKEN otherwise).
    await saveAutoTopup(account.accountId, current, { proven: false });
  }
  return json(await usageReport(account.accountId, deadline.signal));
});
