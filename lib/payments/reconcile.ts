import { reconcileCharges } from "../billing/ledger.js";
import { config } from "../config.js";
import { feedAll } from "../jobs/feed.js";
import { reconcileHolds } from "../jobs/store.js";
import { sweepItems } from "../jobs/sweep.js";
import { log } from "../log.js";
import { RECONCILER_METRICS } from "../packaging.js";
import { reconcileAutoTopups } from "./auto-topup-reconcile.js";
import { confirmSettlements } from "./settlement.js";

/** A pass ends its work within this (the scheduled function's time limit is 50 s: lib/routes.ts). */
const RECONCILE_BUDGET_MS = 40_000;

/** What one pass of the reconciler did. */
export interface ReconcilerPass {
  /** Charges refunded because their request died before it answered. */
  readonly refunded: number;
  /** x402 settlements left pending, now confirmed on chain and recorded (top-ups credited). */
  readonly confirmed: number;
  /** x402 settlements closed unpaid: never mined within their authorisation's validity. */
  readonly expired: number;
  /** x402 settlements still waiting for the chain after this pass (an alarm watches it: stacks/Monitoring.ts). */
  readonly pending: number;
  /** What job holds gave back to balances because their job had ended or was gone (micro-USD). */
  readonly released: number;
  /** Job items sent to the queue for accounts whose feed a crash (or a lapsed slot) left waiting. */
  readonly fed: number;
  /** Job items whose worker died on their last delivery, ended failed (lib/jobs/attempt.ts). */
  readonly swept: number;
  /** Auto-topup pulls this pass credited, closed as failed, and started (for accounts a launch missed). */
  readonly autoTopups: { readonly credited: number; readonly failed: number; readonly started: number };
}

/**
 * The reconciler's pass at `now`: refunds charges neither delivered nor refunded after the grace
 * period, then confirms pending x402 settlements on chain, ends job items whose worker died on their
 * last delivery, gives back what ended jobs still hold, sends job items a feed missed, then follows auto-topup pulls (and starts those a launch missed). Idempotent; two passes at once are safe.
 * The stack schedules it every minute (lib/routes.ts, schedules); `npm run dev` runs it on a timer.
 */
export async function reconcile(now: number, until = now + RECONCILE_BUDGET_MS): Promise<ReconcilerPass> {
  const refunded = await reconcileCharges(now, config.RECONCILE_GRACE_SECONDS * 1000);
  const { confirmed, expired, pending } = config.X402_PAY_TO ? await confirmSettlements(now) : { confirmed: 0, expired: 0, pending: 0 };
  // Dead items first: their holds given back and their slots let go before the holds' round and the feed.
  const swept = config.JOBS_QUEUE_URL ? await sweepItems(now) : 0;
  const released = await reconcileHolds(now);
  const fed = config.JOBS_QUEUE_URL ? await feedAll(now) : 0;
  const autoTopups = await reconcileAutoTopups(now, until);
  const pass = { refunded, confirmed, expired, pending, released, fed, swept, autoTopups };
  if (refunded + confirmed + expired + released + swept + autoTopups.credited + autoTopups.failed > 0)
    log.warn("the reconciler put the ledger right", { ...pass });
  if (config.AWS_LAMBDA_FUNCTION_NAME) process.stdout.write(`${JSON.stringify(metricsLine(pass, now))}\n`);
  return pass;
}

/** A pass as CloudWatch's embedded metric format: the log line becomes the metrics, by stage. */
export function metricsLine(pass: ReconcilerPass, now: number) {
  const { namespace, refunded, pending } = RECONCILER_METRICS;
  return {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [["Stage"]],
          Metrics: [
            { Name: refunded, Unit: "Count" },
            { Name: pending, Unit: "Count" },
          ],
        },
      ],
    },
    Stage: config.STAGE,
    [refunded]: pass.refunded,
    [pending]: pass.pending,
  };
}
