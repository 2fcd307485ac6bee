import { getAccount } from "../billing/accounts.js";
import { authenticate } from "../billing/api-keys.js";
import { enforceRateLimit } from "../billing/rate-limit.js";
import { remember } from "../lru.js";
import type { KeyAccess } from "./access.js";

// Access control's real dependencies on a "key" or "public" route: the caller's key, limits and
// balance, from the ledger in DynamoDB. A function imports the part its route's access takes
// (AccessFor in lib/http/access.ts): this one, or lib/http/paid-access.ts on a priced or signed
// route, so that its bundle holds no ledger call it cannot make, and its role allows no other.

// Balances this container read lately, per account: a free route may report one up to a second old
// (docs/agents.md, "Headers to steer by") rather than wait for a read. Every fresh read (after a charge,
// a refund, a top-up) replaces it, so this container never reports an older balance than it has seen.
const recentBalances = new Map<string, { balance: number; at: number }>();
const RECENT_BALANCES = 10_000;

async function balanceOf(accountId: string, maxAgeMs = 0): Promise<number> {
  const recent = recentBalances.get(accountId);
  if (recent && maxAgeMs > 0 && Date.now() - recent.at <= maxAgeMs) return recent.balance;
  const at = Date.now();
  const balance = (await getAccount(accountId))?.balance ?? 0;
  remember(recentBalances, accountId, { balance, at }, RECENT_BALANCES);
  return balance;
}

export const keyAccess: KeyAccess = { authenticate, enforceRateLimit, balanceOf };
