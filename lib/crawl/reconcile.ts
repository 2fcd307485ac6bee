import { allHolds } from "../billing/holds.js";
import { diedError, sweepDead } from "../jobs/attempt.js";
import { describeError, log } from "../log.js";
import { count, endPage, finishIfIdle, getCrawl, requeueLost, unmark, wrapUp } from "./store.js";

// The reconciler's round of crawls (functions/reconcile.ts, each minute): a page whose worker died
// on its last delivery ends failed (lib/jobs/attempt.ts, sweepDead: its charge refunded unless its
// output was kept), and a crawl that nothing runs or waits for any more ends (a worker that ended
// its last page died before it could end the crawl), its hold given back.

/** A hold whose crawl cannot be found is left this long: its crawl may still be being recorded. */
const ORPHAN_HOLD_MS = 10 * 60_000;

/** Sweeps dead pages, puts lost ones back, and ends idle crawls: how many of each. */
export async function reconcileCrawls(now: number): Promise<{ swept: number; ended: number; requeued: number }> {
  const swept = await sweepDead("page", now, async ({ open, charge }) => {
    const crawlId = open.owner;
    const charged = charge.state === "delivered" ? charge.amount : 0;
    const ended = await endPage(crawlId, String(open.id), { status: "failed", charged, error: diedError("page", charge).message });
    await Promise.all([unmark(crawlId, String(open.id)), ended && count(crawlId, { failed: 1, ...(charged ? { charged } : {}) })]);
  });
  let ended = 0;
  let requeued = 0;
  for (const hold of await allHolds()) {
    if (hold.kind !== "crawl") continue;
    try {
      // Pages sent whose messages were lost wait again (else the crawl would run for ever).
      const running = await getCrawl(hold.jobId);
      if (running?.status === "running") requeued += await requeueLost(running, now);
      const crawl = await finishIfIdle(hold.jobId, now);
      // Ended, its hold still there: its wrapping up stopped part way; again. Gone (never recorded,
      // or expired) for ORPHAN_HOLD_MS: its hold goes back (sooner, it may still be being recorded).
      if (crawl && crawl.status !== "running") await wrapUp(crawl);
      else if (!crawl && now - Date.parse(hold.createdAt) > ORPHAN_HOLD_MS)
        await wrapUp({ id: hold.jobId, accountId: hold.accountId, createdAt: hold.createdAt });
      if (crawl && crawl.status !== "running") ended++;
    } catch (error) {
      log.error("a crawl could not be ended; the next round will", { crawlId: hold.jobId, error: describeError(error) });
    }
  }
  return { swept, ended, requeued };
}
