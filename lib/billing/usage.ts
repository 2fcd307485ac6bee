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
 * The account's balance, spending, auto-topup and its 20 newest usage entries, read afresh: three
 * reads at once, not one snapshot (a transaction that writes a row and its entry can land between
 * them; the next read shows both).
 */
export async function usageReport(accountId: string, signal?: AbortSignal): Promise<UsageReport> {
  const [account, recent, autoTopup] = await Promise.all([getAccount(accountId, signal), recentUsage(accountId, signal), getAutoTopup(accountId, signal)]);
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
