import type { Account } from "../billing/accounts.js";
import { creditAccount } from "../billing/ledger.js";
import { MICRO_PER_CENT } from "../billing/money.js";
import { describeError, log } from "../log.js";
import { type Resource, releasePayment, settlePayment, verifyPayment } from "./x402.js";

/**
 * Tops an account up with USDC over x402: without a payment, 402 with the requirements for exactly
 * that amount; with one, verify, settle, then credit the balance through the ledger (a `topup`
 * usage entry). Returns the settlement's response headers.
 */
export async function topUpWithX402(
  account: Account,
  amountCents: number,
  request: { headers: Readonly<Record<string, string>>; resource: Resource; requestId: string },
): Promise<Record<string, string>> {
  const amount = amountCents * MICRO_PER_CENT;
  const payment = await verifyPayment(request.headers, amount, request.resource, request.requestId);
  let receipt: Record<string, string>;
  try {
    receipt = await settlePayment(payment, request.resource, request.requestId);
  } catch (error) {
    await releasePayment(payment).catch(() => undefined);
    throw error;
  }
  try {
    await creditAccount(account.accountId, amount, { reference: request.requestId, endpoint: "topup" });
  } catch (error) {
    // The USDC has moved but the balance did not: the settlement record (SETTLE#tx) and this line
    // are what an operator needs to credit it by hand (npm run admin -- credit).
    log.error("top-up settled but not credited", { requestId: request.requestId, accountId: account.accountId, amount, error: describeError(error) });
    throw error;
  }
  return receipt;
}
