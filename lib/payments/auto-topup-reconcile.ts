import { type AutoTopup, allAutoTopups, notePullStuck, type PullInFlight, pullFailed } from "../billing/auto-topup.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { autoTopupOffer, pullIfLow, settlePull, signer } from "./auto-topup.js";
import { hex } from "./chain.js";

// The reconciler's round of auto-topup (lib/payments/reconcile.ts), apart from the pull itself so
// that a function that launches pulls in process holds no scan of every account's auto-topup.

/** A pull sent this long ago and still not mined is told to the customer as stuck. */
const STUCK_AFTER_MS = 10 * 60_000;

/** A pull claimed this long ago with no transaction noted is looked for on chain (a crash between sending and noting). */
const UNNOTED_AFTER_MS = 2 * 60_000;

/**
 * Finds a pull's transfer that was sent but never noted (the process died between the two): a
 * Transfer of exactly its amount from the payer to the pay-to address, after the block it was
 * claimed at, in a transaction the top-up address sent. Null when there is none (yet). An earlier
 * pull's transfer is never taken for it: that one was mined, then credited, before this pull read
 * the chain's block number (pullIfLow claims only once the earlier pull is closed).
 */
async function unnotedTransfer(current: AutoTopup, pull: PullInFlight): Promise<string | null> {
  const { rpc, abi, account } = await signer();
  const logs = await rpc.getLogs({
    address: hex(config.X402_ASSET),
    event: abi.find((item) => item.type === "event" && item.name === "Transfer") as never,
    args: { from: hex(current.payer), to: hex(config.X402_PAY_TO!) } as never,
    fromBlock: BigInt(pull.fromBlock ?? "0") + 1n,
    toBlock: "latest",
  });
  for (const entry of logs as unknown as { transactionHash: `0x${string}`; args: { value: bigint } }[]) {
    if (entry.args.value !== BigInt(pull.amount)) continue;
    const sent = await rpc.getTransaction({ hash: entry.transactionHash });
    if (sent.from.toLowerCase() === account.address.toLowerCase()) return entry.transactionHash;
  }
  return null;
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
 * The reconciler's round of auto-topup: every pull in flight is followed to its end (credited once
 * mined, failed if reverted or never sent), and every active account below its threshold with no
 * pull in flight gets one: the safety net for a launch that never ran. Returns what it did.
 */
export async function reconcileAutoTopups(now: number): Promise<{ credited: number; failed: number; started: number }> {
  const done = { credited: 0, failed: 0, started: 0 };
  if (!(await autoTopupOffer())) return done;
  for (const current of await allAutoTopups()) {
    try {
      const pull = current.inFlight;
      if (!pull) {
        if (current.status !== "active") continue;
        const outcome = await pullIfLow(current.accountId);
        if (outcome !== "none") done.started++;
        if (outcome === "credited") done.credited++;
        continue;
      }
      if (now - Date.parse(pull.startedAt) < UNNOTED_AFTER_MS && !pull.transaction) continue; // its pull is still running
      const transaction = pull.transaction ?? (await unnotedTransfer(current, pull));
      if (transaction) {
        const outcome = await settlePull(current, pull, transaction, 0);
        if (outcome === "credited") done.credited++;
        if (outcome === "failed") done.failed++;
        // Stuck: not closed (it may yet be mined, and must then be credited), but the customer is told.
        if (outcome === "pending" && now - Date.parse(pull.startedAt) > STUCK_AFTER_MS && !current.lastFailure?.reason.includes(transaction))
          await notePullStuck(
            current.accountId,
            pull,
            `the transfer ${transaction} is not mined after ${STUCK_AFTER_MS / 60_000} minutes; it is still followed, and no other pull is made meanwhile`,
            new Date(now),
          );
      } else if (!(await spenderHasPending())) {
        await pullFailed(current, pull, "the transfer was never sent (the pull was interrupted)", new Date(now));
        done.failed++;
      }
    } catch (error) {
      log.error("reconciling an auto-topup failed", { accountId: current.accountId, error: describeError(error) });
    }
  }
  return done;
}
