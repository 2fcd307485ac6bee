import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { AutoTopup } from "../lib/billing/auto-topup.js";
import { documents } from "../lib/billing/dynamodb.js";
import { AUTO_TOPUP_PARTITION, HOLD_PARTITION, PENDING_PARTITION, UNCONFIRMED_PARTITION, UNCONFIRMED_SKEW_SECONDS, USAGE_PREFIX } from "../lib/billing/keys.js";
import { config } from "../lib/config.js";

/** A pull in flight longer than this is a problem for an operator (a stuck transaction: docs/deploy.md). */
const PULL_STUCK_MS = 15 * 60_000;

// The ledger's invariants, checked over the whole table (`npm run admin -- reconcile --check`):
//   - every account's balance + what its jobs hold = credits (top-ups, bonus) - charges not
//     refunded, the balance >= 0, what it holds = the sum of its jobs' holds, and its total spent =
//     those charges;
//   - every x402 settlement (a transfer) belongs to one request; every top-up credit names a top-up
//     transfer, and every top-up transfer credits its own account exactly once (by transaction hash);
//   - no charge older than the grace period (or a job item's hold) is neither delivered nor refunded, and no settlement is
//     left unconfirmed past its authorisation's validity and the grace period;
//   - auto-topup: a month's total (credited pulls and the one in flight) is what its pulls add up to
//     and within its cap; no pull stays in flight for long; the account's switch is on exactly when
//     its auto-topup is active, with its threshold; an active auto-topup's payer is bound to its account.

type Item = Record<string, unknown> & { pk: string; sk: string };

export interface LedgerReport {
  readonly accounts: number;
  readonly entries: number;
  readonly settlements: number;
  readonly pending: number;
  /** x402 settlements awaiting confirmation on chain. */
  readonly unconfirmed: number;
  /** What does not hold, one line each; empty when the ledger is sound. */
  readonly problems: string[];
}

async function scanAll(): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: config.TABLE_NAME, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Checks the invariants above at `now`, with the reconciler's grace period. */
export async function checkLedger(now: number, graceMs: number): Promise<LedgerReport> {
  const items = await scanAll();
  const problems: string[] = [];
  const accounts = new Map<
    string,
    { balance: number; held: number; holds: number; totalSpent: number; credited: number; charged: number; autoTopupThreshold?: number | null }
  >();
  const autoTopups: AutoTopup[] = [];
  // Auto-topup payers (lowercase) and the one account each is bound to.
  const payers = new Map<string, string>();
  // Credited auto-topup pulls, by account and month.
  const pulled = new Map<string, number>();
  const account = (pk: string) => {
    let found = accounts.get(pk);
    if (!found) {
      found = { balance: Number.NaN, held: 0, holds: 0, totalSpent: Number.NaN, credited: 0, charged: 0 };
      accounts.set(pk, found);
    }
    return found;
  };
  // Top-up credits by transaction, and top-up settlements by transaction (with their account).
  const credits = new Map<string, string[]>();
  const topUpSettlements = new Map<string, string>();
  const settlementsByRequest = new Map<string, number>();
  let entries = 0;
  let pending = 0;
  let unconfirmed = 0;
  for (const item of items) {
    if (item.pk.startsWith("ACCT#") && item.sk === "ACCT") {
      Object.assign(account(item.pk), {
        balance: Number(item.balance),
        held: Number(item.held ?? 0),
        totalSpent: Number(item.totalSpent),
        autoTopupThreshold: item.autoTopupEnabled && item.autoTopupThreshold !== undefined ? Number(item.autoTopupThreshold) : null,
      });
    } else if (item.pk.startsWith("ACCT#") && item.sk.startsWith(USAGE_PREFIX)) {
      entries++;
      const amount = Number(item.amount);
      if (item.kind === "charge" && item.status === "charged") account(item.pk).charged += amount;
      if (item.status === "credited") account(item.pk).credited += amount;
      if (item.auto && item.status === "credited") {
        const key = `${item.pk}@${String(item.createdAt).slice(0, 7)}`;
        pulled.set(key, (pulled.get(key) ?? 0) + amount);
      }
      if (item.kind === "topup" && item.status === "credited" && (item.endpoint === "topup" || item.endpoint === "auto-topup")) {
        const transaction = String(item.transaction);
        credits.set(transaction, [...(credits.get(transaction) ?? []), item.pk]);
      }
    } else if (item.pk.startsWith("SETTLE#")) {
      settlementsByRequest.set(String(item.requestId), (settlementsByRequest.get(String(item.requestId)) ?? 0) + 1);
      if (item.kind === "topup") topUpSettlements.set(item.pk.slice("SETTLE#".length), `ACCT#${item.accountId}`);
    } else if (item.pk === PENDING_PARTITION) {
      pending++;
      // A job item's charge is held until the queue can no longer redeliver it (lib/jobs/run.ts).
      if (item.sk < new Date(now - graceMs).toISOString() && !(Number(item.holdUntil) > now))
        problems.push(`charge ${item.requestId} of ${item.accountId} is neither delivered nor refunded past the grace period`);
    } else if (item.pk === AUTO_TOPUP_PARTITION) {
      autoTopups.push(item as unknown as AutoTopup);
    } else if (item.pk === HOLD_PARTITION) {
      const held = Number(item.held);
      if (held < 0) problems.push(`job ${item.jobId} holds ${held}`);
      account(`ACCT#${item.accountId}`).holds += held;
    } else if (item.pk.startsWith("PAYER#")) {
      payers.set(item.pk.slice("PAYER#".length), String(item.accountId));
    } else if (item.pk === UNCONFIRMED_PARTITION) {
      unconfirmed++;
      if ((Number(item.validBefore) + UNCONFIRMED_SKEW_SECONDS) * 1000 + graceMs < now)
        problems.push(`settlement of request ${item.requestId} is unconfirmed past its validity`);
    }
  }
  for (const [pk, totals] of accounts) {
    const id = pk.slice("ACCT#".length);
    if (Number.isNaN(totals.balance)) {
      problems.push(`account ${id} has usage entries but no account item`);
      continue;
    }
    if (totals.balance < 0) problems.push(`account ${id} has a negative balance (${totals.balance})`);
    if (totals.balance + totals.held !== totals.credited - totals.charged) {
      problems.push(`account ${id}: balance ${totals.balance} + held ${totals.held} != credits ${totals.credited} - charges ${totals.charged}`);
    }
    if (totals.held !== totals.holds) problems.push(`account ${id}: held ${totals.held} != what its jobs hold (${totals.holds})`);
    if (totals.totalSpent !== totals.charged) problems.push(`account ${id}: total spent ${totals.totalSpent} != charges ${totals.charged}`);
  }
  for (const auto of autoTopups) {
    const id = auto.accountId;
    const inFlight = auto.inFlight;
    const counted = (pulled.get(`ACCT#${id}@${auto.month}`) ?? 0) + (inFlight?.startedAt.startsWith(auto.month) ? inFlight.amount : 0);
    if (counted !== auto.monthTotal) problems.push(`auto-topup of ${id}: ${auto.month}'s total ${auto.monthTotal} != its pulls ${counted}`);
    if (auto.monthTotal > auto.monthlyCap) problems.push(`auto-topup of ${id}: ${auto.month}'s total ${auto.monthTotal} is over its cap ${auto.monthlyCap}`);
    if (inFlight && now - Date.parse(inFlight.startedAt) > PULL_STUCK_MS)
      problems.push(`auto-topup of ${id}: a pull (${inFlight.transaction ?? "not sent"}) is in flight since ${inFlight.startedAt}`);
    if (auto.status === "active" && payers.get(auto.payer.toLowerCase()) !== id)
      problems.push(`auto-topup of ${id} is active, but its payer ${auto.payer} is not bound to it (its next pull pauses it)`);
    const threshold = accounts.get(`ACCT#${id}`)?.autoTopupThreshold;
    if (threshold !== (auto.status === "active" ? auto.threshold : null))
      problems.push(`auto-topup of ${id} is ${auto.status}, but its account's switch says ${threshold === null ? "off" : `on at ${threshold}`}`);
  }
  for (const [requestId, count] of settlementsByRequest) if (count > 1) problems.push(`request ${requestId} has ${count} settlements`);
  for (const [transaction, credited] of credits) {
    if (!topUpSettlements.has(transaction)) problems.push(`a top-up was credited for transfer ${transaction}, which has no settlement`);
    if (credited.length > 1) problems.push(`transfer ${transaction} was credited ${credited.length} times`);
  }
  for (const [transaction, pk] of topUpSettlements) {
    if (credits.get(transaction)?.[0] !== pk) problems.push(`top-up transfer ${transaction} did not credit its account (${pk}) exactly once`);
  }
  const settlements = [...settlementsByRequest.values()].reduce((sum, count) => sum + count, 0);
  return { accounts: accounts.size, entries, settlements, pending, unconfirmed, problems };
}
