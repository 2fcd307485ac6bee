import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents } from "./dynamodb.js";
import { PENDING_PARTITION, UNCONFIRMED_PARTITION, UNCONFIRMED_SKEW_SECONDS, USAGE_PREFIX } from "./keys.js";

// The ledger's invariants, checked over the whole table (`npm run admin -- reconcile --check`):
//   - every account's balance = credits (top-ups, bonus) - charges not refunded, and >= 0, and its
//     total spent = those charges;
//   - every x402 settlement (a transfer) belongs to one request; every top-up credit names a top-up
//     transfer, and every top-up transfer credits its own account exactly once (by transaction hash);
//   - no charge older than the grace period is neither delivered nor refunded, and no settlement is
//     left unconfirmed past its authorisation's validity and the grace period.

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
  const accounts = new Map<string, { balance: number; totalSpent: number; credited: number; charged: number }>();
  const account = (pk: string) => {
    let found = accounts.get(pk);
    if (!found) {
      found = { balance: Number.NaN, totalSpent: Number.NaN, credited: 0, charged: 0 };
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
      Object.assign(account(item.pk), { balance: Number(item.balance), totalSpent: Number(item.totalSpent) });
    } else if (item.pk.startsWith("ACCT#") && item.sk.startsWith(USAGE_PREFIX)) {
      entries++;
      const amount = Number(item.amount);
      if (item.kind === "charge" && item.status === "charged") account(item.pk).charged += amount;
      if (item.status === "credited") account(item.pk).credited += amount;
      if (item.kind === "topup" && item.endpoint === "topup") {
        const transaction = String(item.transaction);
        credits.set(transaction, [...(credits.get(transaction) ?? []), item.pk]);
      }
    } else if (item.pk.startsWith("SETTLE#")) {
      settlementsByRequest.set(String(item.requestId), (settlementsByRequest.get(String(item.requestId)) ?? 0) + 1);
      if (item.kind === "topup") topUpSettlements.set(item.pk.slice("SETTLE#".length), `ACCT#${item.accountId}`);
    } else if (item.pk === PENDING_PARTITION) {
      pending++;
      if (item.sk < new Date(now - graceMs).toISOString())
        problems.push(`charge ${item.requestId} of ${item.accountId} is neither delivered nor refunded past the grace period`);
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
    if (totals.balance !== totals.credited - totals.charged) {
      problems.push(`account ${id}: balance ${totals.balance} != credits ${totals.credited} - charges ${totals.charged}`);
    }
    if (totals.totalSpent !== totals.charged) problems.push(`account ${id}: total spent ${totals.totalSpent} != charges ${totals.charged}`);
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
