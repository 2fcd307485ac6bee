import { turnOffAutoTopup } from "../lib/billing/auto-topup.js";
import { autoTopupAnswer } from "../lib/http/auto-topup.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// DELETE /api/v1/auto-topup: turns auto-topup off (a pull already sent is still credited) and lets
// its payer go, so that another account may prove and bind it. The allowance stays on chain:
// revoking it there is the customer's final word.
export const handler = withHttp({ route: "auto-topup-delete", access: keyAccess }, async ({ account, deadline }) => {
  await turnOffAutoTopup(account.accountId, { release: true });
  return json(await autoTopupAnswer(account.accountId, deadline.signal));
});
