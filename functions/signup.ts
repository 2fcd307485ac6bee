import { signupRequest } from "../lib/api/schemas.js";
import { createAccount } from "../lib/billing/accounts.js";
import { toCents } from "../lib/billing/money.js";
import { publicOrigin } from "../lib/http/hosts.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/signup: a new account, whether or not the address has one (the answer is the same
// either way), and its API key, shown only in this answer. The signup bonus is credited now, or
// when the address is verified by the link mailed to it (SIGNUP_VERIFICATION; docs/api.md).
export const handler = withHttp({ route: "signup", access: keyAccess, schema: signupRequest }, async ({ body, requestId, headers, domain }) => {
  // The link names the service's own origin, never a Host the client chose (lib/http/hosts.ts).
  const linkTo = (token: string) => `${publicOrigin(headers, domain)}/api/v1/verify-email?token=${token}`;
  const { apiKey, account, bonus } = await createAccount(body.email, requestId, linkTo);
  return json({ api_key: apiKey, account_id: account.accountId, balance_cents: toCents(account.balance), balance_micro_usd: account.balance, bonus }, 201);
});
