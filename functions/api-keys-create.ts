import { apiKeyRequest } from "../lib/api/schemas.js";
import { createApiKey } from "../lib/billing/api-keys.js";
import { apiKeyAnswer } from "../lib/http/api-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/api-keys: another API key for the account (at most 10), optionally named; the key is
// in this answer only. No body is the same as `{}`.
export const handler = withHttp({ route: "api-keys-create", schema: apiKeyRequest, emptyBody: {}, access: keyAccess }, async ({ account, body }) => {
  const { apiKey, ...created } = await createApiKey(account.accountId, body.name ?? null);
  return json({ ...apiKeyAnswer(created), api_key: apiKey }, 201);
});
