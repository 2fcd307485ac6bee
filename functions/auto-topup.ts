import { describeError, log } from "../lib/log.js";
import { type PullOutcome, pullIfLow } from "../lib/payments/auto-topup.js";

// Invoked asynchronously by a charge that left a balance below its auto-topup threshold
// (lib/payments/auto-topup-launch.ts): one pull for the account, if one is still due.
export async function handler(event: { accountId?: unknown }): Promise<PullOutcome> {
  if (typeof event.accountId !== "string") {
    log.error("auto-topup invoked without an account", {});
    return "none";
  }
  try {
    return await pullIfLow(event.accountId);
  } catch (error) {
    // Not retried by Lambda (a second pull is the reconciler's decision, once this one's state is known).
    log.error("an auto-topup pull failed", { accountId: event.accountId, error: describeError(error) });
    return "none";
  }
}
