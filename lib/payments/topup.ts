import type { Account } from "../billing/accounts.js";
import { MICRO_PER_CENT } from "../billing/money.js";
import type { Deadline } from "../deadline.js";
import type { Resource } from "./requirements.js";
import { type Settlement, settlePayment } from "./settlement.js";
import { verifyPayment } from "./x402.js";

/**
 * Tops an account up with USDC over x402: without a payment, 402 with the requirements for exactly
 * that amount; with one, verify and settle it by the deadline. Settled, the balance is credited in
 * the transaction that records the transfer (once, ever); pending, the reconciler credits it once
 * the transfer is confirmed on chain.
 */
export async function topUpWithX402(
  account: Account,
  amountCents: number,
  request: { headers: Readonly<Record<string, string>>; resource: Resource; requestId: string },
  deadline: Deadline,
): Promise<Settlement> {
  const payment = await verifyPayment(request.headers, amountCents * MICRO_PER_CENT, request.resource, request.requestId);
  return settlePayment(payment, { kind: "topup", accountId: account.accountId }, { resource: request.resource, at: new Date() }, deadline.at);
}
