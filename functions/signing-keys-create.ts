import { createSigningKey } from "../lib/billing/signing-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/signing-keys: a new signing key for signed links; its secret is in this answer only.
export const handler = withHttp({ route: "signing-keys-create", access: keyAccess }, async ({ account }) =>
  json(await createSigningKey(account.accountId), 201),
);
