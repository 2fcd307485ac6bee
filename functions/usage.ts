import { usageReport } from "../lib/billing/usage.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /api/v1/usage: balance, spending and recent usage of the calling API key's account.
export const handler = withHttp({ route: "usage", access: keyAccess }, async ({ account, deadline }) =>
  json(await usageReport(account.accountId, deadline.signal)),
);
