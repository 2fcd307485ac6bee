import { revokeApiKey } from "../lib/billing/api-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// DELETE /api/v1/api-keys/{keyId}: revokes a key (not the account's last); it answers 401 within seconds.
export const handler = withHttp({ route: "api-keys-revoke", access: keyAccess }, async ({ account, params }) => {
  const id = params.keyId ?? "";
  await revokeApiKey(account.accountId, id);
  return json({ id, revoked: true });
});
