import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents } from "./dynamodb.js";
import { PENDING_PARTITION, USAGE_PREFIX } from "./keys.js";

// The ledger's invariants, checked over the whole table (`npm run admin -- reconcile --check`):
//   - every account's balance = credits (top-ups, bonus) - charges not refunded, and >= 0, and its
//     total spent = those charges;
//   - every x402 settlement belongs to one request, and every top-up paid with x402 to exactly one
//     settlement (a transfer credits a balance once);
//   - no charge older than the grace period is neither delivered nor refunded.

type Item = Record<string, unknown> & { pk: string; sk: string };

export interface LedgerReport {
  readonly accounts: number;
  readonly entries: number;
  readonly settlements: number;
  readonly pending: number;
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
  const x402TopUps = new Map<string, number>();
  const settlementsByRequest = new Map<string, number>();
  let entries = 0;
  let pending = 0;
  for (const item of items) {
    if (item.pk.startsWith("ACCT#") && item.sk === "ACCT") {
      Object.assign(account(item.pk), { balance: Number(item.balance), totalSpent: Number(item.totalSpent) });
    } else if (item.pk.startsWith("ACCT#") && item.sk.startsWith(USAGE_PREFIX)) {
      entries++;
      const amount = Number(item.amount);
      if (item.kind === "charge" && item.status === "charged") account(item.pk).charged += amount;
      if (item.status === "credited") account(item.pk).credited += amount;
      if (item.kind === "topup" && item.endpoint === "topup") x402TopUps.set(String(item.requestId), 0);
    } else if (item.pk.startsWith("SETTLE#")) {
      settlementsByRequest.set(String(item.requestId), (settlementsByRequest.get(String(item.requestId)) ?? 0) + 1);
    } else if (item.pk === PENDING_PARTITION) {
      pending++;
      if (item.sk < new Date(now - graceMs).toISOString())
        problems.push(`charge ${item.requestId} of ${item.accountId} is neither delivered nor refunded past the grace period`);
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
  for (const requestId of x402TopUps.keys()) {
    if (settlementsByRequest.get(requestId) !== 1) problems.push(`top-up ${requestId} was credited without exactly one settlement`);
  }
  const settlements = [...settlementsByRequest.values()].reduce((sum, count) => sum + count, 0);
  return { accounts: accounts.size, entries, settlements, pending, problems };
}
