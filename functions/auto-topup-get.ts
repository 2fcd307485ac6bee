import { autoTopupAnswer } from "../lib/http/auto-topup.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /api/v1/auto-topup: the account's auto-topup (or null), the top-up address to grant an
// allowance to, the token and network, and the allowance the chain shows.
export const handler = withHttp({ route: "auto-topup-get", access: keyAccess }, async ({ account, deadline }) =>
  json(await autoTopupAnswer(account.accountId, deadline.signal)),
);
