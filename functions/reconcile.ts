import { reconcileCrawls } from "../lib/crawl/reconcile.js";
import { type ReconcilerPass, reconcile } from "../lib/payments/reconcile.js";

// Scheduled every minute (lib/routes.ts, schedules): refunds charges whose request died before it
// answered (a crash, an out-of-memory kill, a hard timeout) and confirms x402 settlements left
// pending; sweeps crawls' dead pages and ends the crawls nothing runs for. Idempotent; two runs at
// once are safe.
export async function handler(): Promise<ReconcilerPass & { crawls: Awaited<ReturnType<typeof reconcileCrawls>> }> {
  const now = Date.now();
  const pass = await reconcile(now);
  return { ...pass, crawls: await reconcileCrawls(now) };
}
