import { type ReconcilerPass, reconcile } from "../lib/payments/reconcile.js";

// Scheduled every minute (lib/routes.ts, schedules): refunds charges whose request died before it
// answered (a crash, an out-of-memory kill, a hard timeout) and confirms x402 settlements left
// pending. Idempotent; two runs at once are safe.
export async function handler(): Promise<ReconcilerPass> {
  return reconcile(Date.now());
}
