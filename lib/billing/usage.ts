import { getAccount } from "./accounts.js";
import { autoTopupView, getAutoTopup } from "./auto-topup.js";
import { recentUsage, type UsageEntry } from "./ledger.js";
import { toCents } from "./money.js";

/** GET /api/v1/usage: docs/api.md, "Accounts and billing". */
export interface UsageReport {
  balance_cents: number;
  balance_micro_usd: number;
  held_cents: number;
  held_micro_usd: number;
  total_spent_cents: number;
  total_spent_micro_usd: number;
  auto_topup_enabled: boolean;
  auto_topup: ReturnType<typeof autoTopupView>;
  recent_usage: UsageEntry[];
}

/**
 * The account's balance, spending, auto-topup and its 20 newest usage entries, read afresh: the
 * entries after the rest, so that an entry written with what the rest shows (a top-up's credit, a
 * failed pull's record, each in one transaction) is listed with it.
 */
export async function usageReport(accountId: string, signal?: AbortSignal): Promise<UsageReport> {
  const [account, autoTopup] = await Promise.all([getAccount(accountId, signal), getAutoTopup(accountId, signal)]);
  const recent = await recentUsage(accountId, signal);
  if (!account) throw new Error(`account ${accountId} vanished`);
  return {
    balance_cents: toCents(account.balance),
    balance_micro_usd: account.balance,
    held_cents: toCents(account.held),
    held_micro_usd: account.held,
    total_spent_cents: toCents(account.totalSpent),
    total_spent_micro_usd: account.totalSpent,
    auto_topup_enabled: account.autoTopupEnabled,
    auto_topup: autoTopupView(autoTopup),
    recent_usage: recent,
  };
}
