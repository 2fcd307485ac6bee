import { topupRequest } from "../lib/api/schemas.js";
import { usageReport } from "../lib/billing/usage.js";
import { keyAccess } from "../lib/http/key-access.js";
import { json } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { topUpWithX402 } from "../lib/payments/topup.js";

// POST /api/v1/topup {amount_cents >= 500}: pay the amount in USDC with x402; the balance is credited
// (200), or, when the transfer is still being mined, credited once it is confirmed on chain (202).
export const handler = withHttp(
  { route: "topup", access: keyAccess, schema: topupRequest },
  async ({ account, body, headers, resource, requestId, deadline }) => {
    const settlement = await topUpWithX402(account, body.amount_cents, { headers, resource, requestId }, deadline);
    const topup = { status: settlement.state === "settled" ? "credited" : "pending", transaction: settlement.transaction };
    return json({ ...(await usageReport(account.accountId)), topup }, settlement.state === "settled" ? 200 : 202, settlement.headers);
  },
);
