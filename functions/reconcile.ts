import { reconcileCharges } from "../lib/billing/ledger.js";
import { config } from "../lib/config.js";
import { log } from "../lib/log.js";

// Scheduled every minute (lib/routes.ts, jobs): refunds charges whose request died before it
// answered (a crash, an out-of-memory kill, a hard timeout). Idempotent; two runs at once are safe.
export async function handler(): Promise<{ refunded: number }> {
  const refunded = await reconcileCharges(Date.now(), config.RECONCILE_GRACE_SECONDS * 1000);
  if (refunded > 0) log.warn("reconciler refunded charges that were never delivered", { refunded });
  return { refunded };
}
