import { signingKeyRequest } from "../lib/api/schemas.js";
import { createSigningKey } from "../lib/billing/signing-keys.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// POST /api/v1/signing-keys: a new signing key for signed links, with an optional daily limit; its
// secret is in this answer only. No body is the same as `{}`.
export const handler = withHttp({ route: "signing-keys-create", schema: signingKeyRequest, emptyBody: {}, access: keyAccess }, async ({ account, body }) =>
  json(await createSigningKey(account.accountId, body.dailyLimitCents ?? null), 201),
);
