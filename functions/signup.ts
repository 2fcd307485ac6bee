import { createAccount } from "../lib/billing/accounts.js";
import { toCents } from "../lib/billing/money.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { signupRequest } from "../lib/http/schemas.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/signup: a new account with the signup bonus; the API key is shown only in this answer.
export const handler = withHttp({ route: "signup", access: keyAccess, schema: signupRequest }, async ({ body, requestId }) => {
  const { apiKey, account } = await createAccount(body.email, requestId);
  return json({ api_key: apiKey, account_id: account.accountId, balance_cents: toCents(account.balance), balance_micro_usd: account.balance }, 201);
});
