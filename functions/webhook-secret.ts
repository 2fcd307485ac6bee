import { emptyRequest } from "../lib/api/schemas.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { rotateWebhookSecret } from "../lib/jobs/webhooks.js";

// POST /api/v1/webhook-secret: makes (or replaces) the secret that signs the account's job
// webhooks (Standard Webhooks' whsec_ form). Shown in this answer only; the old one stops at once.
// No body, or `{}` (JSON, as every route that takes a body: a form or text is 415).
export const handler = withHttp({ route: "webhook-secret", schema: emptyRequest, emptyBody: {}, access: keyAccess }, async ({ account }) =>
  json({ secret: await rotateWebhookSecret(account.accountId) }, 201),
);
