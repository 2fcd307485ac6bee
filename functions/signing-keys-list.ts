import { listSigningKeys } from "../lib/billing/signing-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /api/v1/signing-keys: the account's signing keys (ids and dates, never secrets).
export const handler = withHttp({ route: "signing-keys-list", access: keyAccess }, async ({ account }) =>
  json({ signingKeys: await listSigningKeys(account.accountId) }),
);
