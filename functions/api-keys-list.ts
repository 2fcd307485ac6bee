import { listApiKeys } from "../lib/billing/api-keys.js";
import { apiKeyAnswer } from "../lib/http/api-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /api/v1/api-keys: the account's API keys: id, name, first and last characters, when made and last used.
export const handler = withHttp({ route: "api-keys-list", access: keyAccess }, async ({ account }) =>
  json({ api_keys: (await listApiKeys(account.accountId)).map(apiKeyAnswer) }),
);
