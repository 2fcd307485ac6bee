import type { Account } from "../../lib/billing/accounts.js";
import { insufficientBalance, rateLimited, unauthorized } from "../../lib/billing/errors.js";
import type { Charge } from "../../lib/billing/ledger.js";
import { AppError } from "../../lib/errors.js";
import type { AccessDependencies } from "../../lib/http/access.js";
import type { CacheSlot } from "../../lib/http/render-cache.js";
import { paymentRequired } from "../../lib/payments/requirements.js";
import { paymentIdentifierOf, type VerifiedPayment } from "../../lib/payments/x402.js";

// Fakes of the ledger and of x402 for unit tests of the access decision, which must run without
// DynamoDB or a chain. The real ones run against DynamoDB Local and anvil in test/integration.

export const KEY = "shl_live_good";

/** An account as the fake ledger holds it. */
export const account = (over: Partial<Account> = {}): Account => ({
  accountId: "acct-1",
  email: "a@example.com",
  balance: 1_000_000,
  held: 0,
  totalSpent: 0,
  autoTopupEnabled: false,
  autoTopupThreshold: null,
  rateLimitPerSecond: null,
  rendersInFlight: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  ...over,
});

/** A ledger, facilitator and render cache in memory that record every call; `limited` subjects answer 429; a request with cacheTtl finds `cache`. */
export function fakeAccess(options: { account?: Account; limited?: string[]; paymentHeader?: string; cache?: CacheSlot } = {}) {
  const held = options.account ?? account();
  const calls: string[] = [];
  /** The slots held, by pool: each slot's holder (kept apart from `calls`, which tests compare whole). */
  const slots = new Map<string, (string | undefined)[]>();
  const claims = new Map<string, { fingerprint: string; answer?: string }>();
  const deps: AccessDependencies = {
    async launchAutoTopup(accountId) {
      calls.push(`auto-topup ${accountId}`);
    },
    async authenticate(authorization) {
      calls.push("authenticate");
      if (authorization !== `Bearer ${KEY}`) throw unauthorized("This API key is not valid.");
      return held;
    },
    async enforceRateLimit(subject, limit, windowSeconds) {
      calls.push(`limit ${subject} ${limit}/${windowSeconds}s`);
      if (options.limited?.includes(subject)) throw rateLimited(limit, windowSeconds, 1);
      return { remaining: limit - 1, resetSeconds: windowSeconds };
    },
    async charge(accountId, amount) {
      calls.push(`charge ${accountId} ${amount}`);
      if (held.balance < amount) throw insufficientBalance(amount, held.balance);
      return { accountId, amount, entry: { pk: "p", sk: "s" }, requestId: "r", pending: { pk: "PENDING", sk: "s" } } satisfies Charge;
    },
    async refund(charge) {
      calls.push(`refund ${charge.amount}`);
    },
    async deliver(charge) {
      calls.push(`deliver ${charge.amount}`);
    },
    async verifyPayment(headers, amount, resource) {
      calls.push(`verify ${amount}`);
      if (headers["payment-signature"] !== options.paymentHeader || !options.paymentHeader) throw paymentRequired(amount, resource);
      return { payer: "0xPayer", amount } as VerifiedPayment;
    },
    async settlePayment(payment) {
      calls.push(`settle ${payment.amount}`);
      return { state: "settled", transaction: "0xtx", headers: { "PAYMENT-RESPONSE": "receipt" } };
    },
    async releasePayment(payment) {
      calls.push(`release ${payment.amount}`);
    },
    async balanceOf() {
      return held.balance;
    },
    async claimIdempotency(_accountId, key, fingerprint) {
      calls.push(`claim ${key}`);
      const kept = claims.get(key);
      if (!kept) {
        claims.set(key, { fingerprint });
        return { kind: "claimed" };
      }
      if (kept.fingerprint !== fingerprint) throw new AppError("IDEMPOTENCY_CONFLICT", "another body");
      if (kept.answer === undefined) throw new AppError("IDEMPOTENCY_IN_PROGRESS", "running");
      return { kind: "replay", answer: kept.answer };
    },
    async completeIdempotency(_accountId, key, _requestId, answer) {
      calls.push(`complete ${key}`);
      claims.set(key, { ...claims.get(key)!, answer });
    },
    async releaseIdempotency(_accountId, key) {
      calls.push(`release-key ${key}`);
      claims.delete(key);
    },
    async signedAccount(query) {
      calls.push("signed");
      if (!query.includes("signature=good")) throw new AppError("INVALID_SIGNATURE", "bad signature");
      return { account: held, cap: null };
    },
    async openCache(request) {
      if (!request.body.cacheTtl) return null;
      calls.push(`cache ${request.scope}`);
      return options.cache ?? { state: "pass" };
    },
    async publishCache(slot) {
      calls.push(`publish ${slot.state}`);
    },
    async closeCache(slot) {
      calls.push(`close ${slot.state}`);
    },
    async takeSlot(pool, size, holder) {
      const held = slots.get(pool) ?? [];
      slots.set(pool, held);
      const index = Array.from({ length: size }, (_, i) => i).find((i) => held[i] === undefined);
      if (index === undefined) return null;
      held[index] = holder;
      return index;
    },
    async releaseSlot(pool, index, holder) {
      const held = slots.get(pool);
      if (held?.[index] === holder) held[index] = undefined;
    },
    paymentIdentifierOf,
    // The fake keeps an answer's body as it is.
    async keepAnswer(result) {
      return result.body ?? "";
    },
    async replayAnswer(kept, requestId) {
      return { statusCode: 200, headers: { "Idempotent-Replayed": "true", "X-Request-Id": requestId }, body: kept };
    },
  };
  return { deps, calls, slots };
}
