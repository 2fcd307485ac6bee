import { revokeSigningKey } from "../lib/billing/signing-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// DELETE /api/v1/signing-keys/{keyId}: revokes a key; links signed with it stop working at once.
export const handler = withHttp({ route: "signing-keys-revoke", access: keyAccess }, async ({ account, params }) => {
  const keyId = params.keyId ?? "";
  await revokeSigningKey(account.accountId, keyId);
  return json({ keyId, revoked: true });
});
