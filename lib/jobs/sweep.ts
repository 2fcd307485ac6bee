import { ignoreFailedCondition } from "../billing/dynamodb.js";
import { diedError, sweepDead } from "./attempt.js";
import { announce } from "./events.js";
import { finishItem, getJob, type JobItem, readJob, releaseItemHold } from "./store.js";

// The reconciler's sweep of job items (lib/payments/reconcile.ts; lib/jobs/attempt.ts, sweepDead),
// apart from lib/jobs/run.ts: the reconciler renders nothing, so its bundle holds no part of a render.

/**
 * The sweeper's round of items (the reconciler's, each minute: lib/jobs/attempt.ts, sweepDead): an
 * item whose worker died on its last delivery ends failed, its hold given back when it was never
 * charged, announced (its job's job.completed when it was the last). How many it ended.
 */
export const sweepItems = (now: number): Promise<number> =>
  sweepDead("item", now, async ({ open, lease, charge }) => {
    const job = await getJob(open.owner);
    if (!job) return;
    const index = Number(open.id);
    if (charge.state === "none") await releaseItemHold(job, { ...(lease as JobItem), index });
    const error = diedError("item", charge);
    const outcome = {
      status: "failed" as const,
      charged: charge.state === "delivered" ? charge.amount : 0,
      error: { code: error.code, message: error.message },
    };
    // Ended meanwhile by another sweep: it stands, and is announced again (announcing is idempotent).
    await finishItem(job.id, index, outcome).catch(ignoreFailedCondition);
    const ended = (await readJob(job.id))?.items.find((i) => i.index === index);
    await announce(job, [ended ?? { index, ...outcome }]);
  });
