import { allAutoTopups, notePullStuck, type PullInFlight, pullFailed } from "../billing/auto-topup.js";
import { describeError, log } from "../log.js";
import { autoTopupOffer, pullIfLow, settlePull, signer } from "./auto-topup.js";
import { hex } from "./chain.js";

// The reconciler's round of auto-topup (lib/payments/reconcile.ts), apart from the pull itself so
// that a function that launches pulls in process holds no scan of every account's auto-topup.

/** A pull sent this long ago and still not mined is told to the customer as stuck. */
const STUCK_AFTER_MS = 10 * 60_000;

/** A pull claimed this long ago with no transfer broadcast is closed as never sent (a live pull broadcasts within seconds). */
const UNSENT_AFTER_MS = 2 * 60_000;

/** A round leaves this much of its time limit unused (the last account's calls, the answer). */
const ROUND_RESERVE_MS = 5_000;

/**
 * Whether a pull's noted transfer can no longer be mined: the chain does not know it, and either
 * its nonce was taken by another transaction of the top-up address, or nothing of the top-up
 * address is waiting to be mined (the process died between noting and broadcasting, and only it
 * held the signed transaction).
 */
async function neverMined(pull: PullInFlight, transaction: string): Promise<boolean> {
  const { rpc, account } = await signer();
  if (await rpc.getTransaction({ hash: hex(transaction) }).catch(() => null)) return false;
  const mined = await rpc.getTransactionCount({ address: account.address, blockTag: "latest" });
  if (typeof pull.nonce === "number" && mined > pull.nonce) return true;
  return !(await spenderHasPending());
}

/** Whether the top-up address has transactions sent and not yet mined. */
async function spenderHasPending(): Promise<boolean> {
  const { rpc, account } = await signer();
  const [mined, sent] = await Promise.all([
    rpc.getTransactionCount({ address: account.address, blockTag: "latest" }),
    rpc.getTransactionCount({ address: account.address, blockTag: "pending" }),
  ]);
  return sent > mined;
}

/**
 * The reconciler's round of auto-topup, done by `until` (epoch ms: the reconciler's own time limit):
 * every pull in flight is followed to its end (credited once its noted transfer is mined, failed if
 * reverted, never broadcast, or overtaken), and every active account below its threshold with no
 * pull in flight gets one: the safety net for a launch that never ran. A pull is matched only to
 * the transaction it noted before broadcasting. What the time limit leaves is the next round's.
 */
export async function reconcileAutoTopups(now: number, until = Number.POSITIVE_INFINITY): Promise<{ credited: number; failed: number; started: number }> {
  const done = { credited: 0, failed: 0, started: 0 };
  if (!(await autoTopupOffer())) return done;
  for (const current of await allAutoTopups()) {
    const left = until - Date.now() - ROUND_RESERVE_MS;
    if (left <= 0) break;
    try {
      const pull = current.inFlight;
      if (!pull) {
        if (current.status !== "active") continue;
        const outcome = await pullIfLow(current.accountId, Math.min(left, 60_000));
        if (outcome !== "none") done.started++;
        if (outcome === "credited") done.credited++;
        continue;
      }
      const age = now - Date.parse(pull.startedAt);
      if (!pull.transaction) {
        if (age < UNSENT_AFTER_MS) continue; // its pull is still running
        // Nothing was noted, so nothing was broadcast: a transfer is noted before it is sent.
        if (await pullFailed(current, pull, "the transfer was never sent (the pull was interrupted)", new Date(now))) done.failed++;
        continue;
      }
      const outcome = await settlePull(current, pull, pull.transaction, 0);
      if (outcome === "credited") done.credited++;
      if (outcome === "failed") done.failed++;
      if (outcome !== "pending") continue;
      if (age >= UNSENT_AFTER_MS && (await neverMined(pull, pull.transaction))) {
        if (await pullFailed(current, pull, `the transfer ${pull.transaction} never reached the chain (the pull was interrupted)`, new Date(now)))
          done.failed++;
      } else if (age > STUCK_AFTER_MS && !current.lastFailure?.reason.includes(pull.transaction)) {
        // Stuck: not closed (it may yet be mined, and must then be credited), but the customer is told.
        await notePullStuck(
          current.accountId,
          pull,
          `the transfer ${pull.transaction} is not mined after ${STUCK_AFTER_MS / 60_000} minutes; it is still followed, and no other pull is made meanwhile`,
          new Date(now),
        );
      }
    } catch (error) {
      log.error("reconciling an auto-topup failed", { accountId: current.accountId, error: describeError(error) });
    }
  }
  return done;
}
