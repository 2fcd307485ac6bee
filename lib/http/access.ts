import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { Account } from "../billing/accounts.js";
import { rateLimited, unauthorized } from "../billing/errors.js";
import type { Claim } from "../billing/idempotency.js";
import type { Charge, SpendCap } from "../billing/ledger.js";
import type { RateCount } from "../billing/rate-limit.js";
import { config } from "../config.js";
import { type Deadline, orTimeout } from "../deadline.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import type { Resource } from "../payments/requirements.js";
import type { Purpose, Settlement } from "../payments/settlement.js";
import type { VerifiedPayment } from "../payments/x402.js";
import { type Access, priceOf, type RateLimit, RENDERS_IN_FLIGHT, type Route } from "../routes.js";
import { addressGroup } from "./client-address.js";
import { fingerprint, idempotencyKeyOf } from "./idempotency.js";
import type { CacheRequest, CacheSlot } from "./render-cache.js";

// Access control's decisions, written against what it needs of the ledger, x402 and the render
// cache (AccessDependencies), never against them: a function's bundle holds only the ledger code its
// route's access calls (lib/http/key-access.ts, lib/http/paid-access.ts), and its role allows only those calls (stacks/Api.ts).

/** Who pays for a priced request: an account's balance (already charged), or an x402 payer (verified, settled after the work). */
type Payer = { readonly kind: "account"; readonly account: Account } | { readonly kind: "x402"; readonly address: string };

/** What a handler knows of its caller, by the route's access: never a nullable account where the route guarantees one. */
export type CallerOf<A extends Access> = A extends "priced"
  ? { readonly payer: Payer }
  : A extends "key"
    ? { readonly account: Account }
    : A extends "public"
      ? { readonly account: Account | null }
      : Record<never, never>;

/** What access control needs of the ledger, x402 and the render cache: the real ones in lib/http/key-access.ts, lib/http/paid-access.ts, fakes in unit tests. */
export interface AccessDependencies {
  authenticate(authorization: string): Promise<Account>;
  enforceRateLimit(subject: string, limit: number, windowSeconds: number): Promise<RateCount>;
  /** With `cap`, a signed link's key with a daily limit: 429 DAILY_LIMIT_REACHED past it. */
  charge(accountId: string, amount: number, request: { requestId: string; endpoint: string; at: Date }, cap: SpendCap | null): Promise<Charge>;
  refund(charge: Charge): Promise<unknown>;
  deliver(charge: Charge): Promise<void>;
  verifyPayment(headers: Readonly<Record<string, string>>, amount: number, resource: Resource, requestId: string): Promise<VerifiedPayment>;
  settlePayment(payment: VerifiedPayment, purpose: Purpose, request: { resource: Resource; at: Date }, settleBy: number): Promise<Settlement>;
  releasePayment(payment: VerifiedPayment): Promise<void>;
  /** The account's balance (micro-USD) for the answer's header: read now, or one read at most `maxAgeMs` ago. */
  balanceOf(accountId: string, maxAgeMs?: number): Promise<number>;
  claimIdempotency(accountId: string, key: string, fingerprint: string, requestId: string, leaseUntil: number): Promise<Claim>;
  completeIdempotency(accountId: string, key: string, requestId: string, answer: string): Promise<void>;
  releaseIdempotency(accountId: string, key: string, requestId: string): Promise<void>;
  /** The request's render cache slot (lib/http/render-cache.ts), or null when it asks for none. */
  openCache(request: CacheRequest): Promise<CacheSlot | null>;
  /** Once the request's charge is final: its render becomes the cache's entry (lib/http/render-cache.ts). */
  publishCache(slot: CacheSlot): Promise<void>;
  /** After a failed request: its cache lease is given up. */
  closeCache(slot: CacheSlot): Promise<void>;
  /** The account a signed link (its raw query) is charged to, and its key's daily limit (lib/http/signed-links.ts); 403 when it is not validly signed. */
  signedAccount(query: string): Promise<{ readonly account: Account; readonly cap: SpendCap | null }>;
  /** Takes a slot of `pool` (`size` slots) for `holder` until `leaseUntil`: its index, or null when all are held (lib/billing/slots.ts). */
  takeSlot(pool: string, size: number, holder: string, leaseUntil: number): Promise<number | null>;
  releaseSlot(pool: string, index: number, holder: string): Promise<void>;
  /** Hands an auto-topup pull for the account off to run beside the request (lib/payments/auto-topup-launch.ts); never rejects. */
  launchAutoTopup(accountId: string): Promise<void>;
  /** The id of an x402 payment's payment-identifier extension, or null (lib/payments/x402.ts). */
  paymentIdentifierOf(headers: Readonly<Record<string, string>>): string | null;
  /** The first answer to an Idempotency-Key, kept for its retries (lib/http/kept-answers.ts), and sent again. */
  keepAnswer(result: APIGatewayProxyStructuredResultV2): Promise<string>;
  replayAnswer(kept: string, requestId: string): Promise<APIGatewayProxyStructuredResultV2>;
}

/** What a "key" or "public" route's access calls: who the caller is, their limits and their balance. */
export type KeyAccess = Pick<AccessDependencies, "authenticate" | "enforceRateLimit" | "balanceOf">;

/** The dependencies a route's access takes: none on an open route, KeyAccess on a key or public one, all of them on a priced or signed one. */
export type AccessFor<A extends Access> = A extends "open" ? undefined : A extends "key" | "public" ? KeyAccess : AccessDependencies;

/** The request as access control sees it. */
export interface AccessRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly requestId: string;
  readonly sourceIp: string;
  /** When the request arrived (the usage entry's time: a retried invocation writes the same entry). */
  readonly at: Date;
  readonly resource: Resource;
  /** Until when (epoch ms) an Idempotency-Key claimed by this request holds while it runs: its deadline. */
  readonly leaseUntil: number;
  /** When the work must be done (a request waiting on another's render gives up in time). */
  readonly deadline: Deadline;
  /** The raw query string (a signed link's authorisation is in it). */
  readonly query: string;
}

/** The outcome of access control for one request: its caller, what to settle or undo afterwards, and the limits it counted against. */
export interface AccessGrant {
  readonly account: Account | null;
  readonly payer: Payer | null;
  readonly charge: Charge | null;
  payment: VerifiedPayment | null;
  readonly rates: readonly RateState[];
  /** The Idempotency-Key (scope: the account) or x402 payment id (scope "x402") this request claimed, to complete or release. */
  readonly idempotency: { readonly scope: string; readonly key: string; readonly requestId: string } | null;
  /** The kept first answer of an Idempotency-Key, to send again instead of doing the work. */
  readonly replay: string | null;
  /** The request's render cache slot: a hit is answered without rendering (and, with a key, without a charge). */
  readonly cache: CacheSlot | null;
  /** On a route that counts its limits while working: the count, still running; it rejects (429) over a limit. */
  readonly counting: Promise<void> | null;
  /** An auto-topup pull this request's charge launched, being handed off (awaited before the answer; it never rejects). */
  readonly topup?: Promise<void> | null;
  /** The caller's render slot this request holds while it runs (routes that hold one), let go when it ends. */
  slot?: HeldSlot | null;
}

/** A slot held by a request: its pool, its index, and the request holding it. */
interface HeldSlot {
  readonly pool: string;
  readonly index: number;
  readonly holder: string;
}

/** A limit as this request counted against it: its policy's name, quota and window, and what is left. */
interface RateState extends RateCount {
  readonly policy: string;
  readonly limit: number;
  readonly windowSeconds: number;
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): each policy's quota `q`
 * per window `w` seconds, and what is left of it `r` with `t` seconds until its window ends.
 */
export const rateLimitHeaders = (rates: readonly RateState[]): Record<string, string> =>
  rates.length
    ? {
        "RateLimit-Policy": rates.map((r) => `"${r.policy}";q=${r.limit};w=${r.windowSeconds}`).join(", "),
        RateLimit: rates.map((r) => `"${r.policy}";r=${r.remaining};t=${r.resetSeconds}`).join(", "),
      }
    : {};

/**
 * Counts the request against a limit, noting it in `rates`; over it, the 429 carries every limit
 * counted so far (this one with nothing left).
 */
async function count(rates: RateState[], policy: string, [subject, limit, windowSeconds]: [string, number, number], deps: AccessDependencies): Promise<void> {
  try {
    rates.push({ policy, limit, windowSeconds, ...(await deps.enforceRateLimit(subject, limit, windowSeconds)) });
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== "RATE_LIMITED") throw error;
    rates.push({ policy, limit, windowSeconds, remaining: 0, resetSeconds: Number(error.headers["Retry-After"] ?? windowSeconds) });
    throw new AppError(error.code, error.message, { headers: { ...error.headers, ...rateLimitHeaders(rates) }, cause: error });
  }
}

/** A rate limit as counted for `caller`: its subject, limit and window. */
function limitFor(rule: RateLimit, sourceIp: string, account: Account | null): [subject: string, limit: number, windowSeconds: number] {
  switch (rule) {
    case "signup-ip":
      return [`signup-ip:${sourceIp}`, config.SIGNUP_LIMIT_PER_HOUR, 3600];
    case "caller":
      return account
        ? [`acct:${account.accountId}`, account.rateLimitPerSecond ?? config.RATE_LIMIT_PER_SECOND, 1]
        : [`ip:${sourceIp}`, config.RATE_LIMIT_PER_SECOND, 1];
  }
}

/** Client IPs over their failed-authentication limit, until when (epoch ms), as this container saw them. */
const refusedUntil = new Map<string, number>();
const AUTH_FAILURE_WINDOW_SECONDS = 60;

/**
 * The account `attempt` authenticates (an Authorization header, or a signed link). Failed attempts
 * (`failure`) are counted per client IP (shared by every instance, like the other limits); past
 * AUTH_FAILURES_PER_MINUTE the IP gets 429 for the rest of the minute, and this container answers it
 * without reading the table at all.
 */
async function authenticated<T>(
  sourceIp: string,
  failure: "UNAUTHORIZED" | "INVALID_SIGNATURE",
  attempt: () => Promise<T>,
  deps: AccessDependencies,
): Promise<T> {
  const until = refusedUntil.get(sourceIp);
  const locked = until !== undefined && until > Date.now();
  if (!locked) refusedUntil.delete(sourceIp);
  try {
    // A locked address is still served a valid key or link: an office or a carrier's NAT shares
    // one address with whoever guesses from it. Guessing stays pointless (docs/api.md, "Keys and
    // guessing"): a wrong one answers 429 until the window ends, and keys carry 256 random bits.
    return await attempt();
  } catch (error) {
    if (!(error instanceof AppError && error.code === failure)) throw error;
    if (locked) throw rateLimited(config.AUTH_FAILURES_PER_MINUTE, AUTH_FAILURE_WINDOW_SECONDS, Math.ceil((until - Date.now()) / 1000));
    await countAuthFailure(sourceIp, deps);
    throw error;
  }
}

/** Counts a failed authentication of `sourceIp`; past the limit, 429, remembered here until its window ends (its Retry-After). */
async function countAuthFailure(sourceIp: string, deps: AccessDependencies): Promise<void> {
  await deps.enforceRateLimit(`auth-failures:${sourceIp}`, config.AUTH_FAILURES_PER_MINUTE, AUTH_FAILURE_WINDOW_SECONDS).catch((limited: unknown) => {
    if (limited instanceof AppError && limited.code === "RATE_LIMITED") refusedUntil.set(sourceIp, Date.now() + Number(limited.headers["Retry-After"]) * 1000);
    throw limited;
  });
}

/**
 * Authentication, rate limits and the charge, in the order of docs/api.md (after validation, before
 * the work): "priced" charges a key the request's price or, without Authorization, verifies an x402
 * payment (402 with the requirements when there is none; the IP is limited before the facilitator
 * is asked anything, the payer after); "key" needs a key (401 without); "public" takes anyone,
 * limited per key when one is sent, else per client IP; "signed" charges the account whose key
 * signed the link (403 otherwise); "open" checks nothing. A priced request with a key and an
 * Idempotency-Key (or an x402 payment with a payment-identifier id, before it is verified) claims it,
 * or gets its first answer back (lib/billing/idempotency.ts). A request with `cacheTtl` opens its
 * render cache slot before a key is charged (a hit is free) or after an x402 payment verified (a hit
 * is paid). Every limit counted is noted in the grant for the RateLimit headers. A route that counts
 * while working gets its grant at once, the count still running in `counting`.
 */
export async function authorize(route: Route, request: AccessRequest, deps: AccessDependencies): Promise<AccessGrant> {
  const rates: RateState[] = [];
  const grant: AccessGrant = { account: null, payer: null, charge: null, payment: null, rates, idempotency: null, replay: null, cache: null, counting: null };
  if (route.access === "open") return grant;
  // Per-address rules count an IPv6 client by its /64.
  const who = addressGroup(request.sourceIp);
  const authorization = request.headers.authorization;
  if (authorization === undefined && route.access === "priced" && route.price) {
    for (const rule of route.limits) await count(rates, rule, limitFor(rule, who, null), deps);
    // A payment with a payment-identifier id: looked up before it is verified (a resend after a lost
    // answer may no longer verify), bound to this exact payment and body.
    const paymentId = deps.paymentIdentifierOf(request.headers);
    const payment = request.headers["payment-signature"] ?? request.headers["x-payment"];
    const claimed = paymentId === null ? null : await claim("x402", paymentId, { body: request.body, payment }, route, request, deps);
    if (typeof claimed === "string") return { ...grant, replay: claimed };
    return holding(claimed, request, deps, async () => {
      const verified = await deps.verifyPayment(request.headers, priceOf(route.price!, request.body), request.resource, request.requestId);
      const payer = verified.payer.toLowerCase();
      try {
        await count(rates, "payer", [`payer:${payer}`, config.RATE_LIMIT_PER_SECOND, 1], deps);
        // x402 pays the same for a cache hit: the price is quoted before the payer is known. A hit renders nothing: no slot.
        const cache = await deps.openCache(cacheRequest(route, request, payer));
        const slot =
          cache?.state === "hit"
            ? null
            : await takeRenderSlot(route, callerOf({ payer: verified.payer }), request, deps).catch(async (error: unknown) => {
                if (cache) await deps.closeCache(cache);
                throw error;
              });
        return { ...grant, payer: { kind: "x402", address: verified.payer }, payment: verified, idempotency: claimed, cache, slot };
      } catch (error) {
        // Refused before the work: the authorisation may pay again.
        await deps.releasePayment(verified);
        throw error;
      }
    });
  }
  const signed = route.access === "signed";
  if (!signed && authorization === undefined && route.access !== "public") throw unauthorized();
  const { account, cap } = signed
    ? await authenticated(who, "INVALID_SIGNATURE", () => deps.signedAccount(request.query), deps)
    : {
        account: authorization === undefined ? null : await authenticated(who, "UNAUTHORIZED", () => deps.authenticate(authorization), deps),
        cap: null,
      };
  const counting = (async () => {
    for (const rule of route.limits) await count(rates, rule, limitFor(rule, who, account), deps);
  })();
  if (route.countsWhileWorking && !route.price) {
    counting.catch(() => undefined); // awaited by the pipeline, after the work started
    return { ...grant, account, counting };
  }
  await counting;
  if (!route.price || !account) return { ...grant, account };
  const payer = { kind: "account", account } as const;
  // Not on a signed link: whoever holds one could claim the owner's key names (their POSTs would get 409).
  const key = signed ? null : idempotencyKeyOf(request.headers);
  const claimed = key === null ? null : await claim(account.accountId, key, request.body, route, request, deps);
  if (typeof claimed === "string") return { ...grant, account, payer, replay: claimed };
  return holding(claimed, request, deps, async () => {
    // A cache hit costs an API key nothing, and renders nothing: looked up before the slot and the charge.
    const cache = await deps.openCache(cacheRequest(route, request, account.accountId));
    if (cache?.state === "hit") return { ...grant, account, payer, idempotency: claimed, cache };
    let slot: HeldSlot | null = null;
    try {
      // A signed link's renders (whoever holds the link makes them) count apart from the account's own.
      slot = await takeRenderSlot(route, `${signed ? "links:" : ""}${callerOf({ account })}`, request, deps, account.rendersInFlight ?? RENDERS_IN_FLIGHT);
      const price = priceOf(route.price!, request.body);
      // Auto-topup: a charge that leaves the balance under the account's threshold (as the key's read
      // of it says; the pull reads it afresh) launches a pull, handed off while the work runs.
      const low = account.autoTopupThreshold !== null && account.balance - price < account.autoTopupThreshold;
      const charge = await deps.charge(account.accountId, price, { requestId: request.requestId, endpoint: route.id, at: request.at }, cap);
      return { ...grant, account, payer, charge, idempotency: claimed, cache, slot, topup: low ? deps.launchAutoTopup(account.accountId) : null };
    } catch (error) {
      await letGo(slot, deps);
      if (cache) await deps.closeCache(cache);
      if (account.autoTopupThreshold !== null && error instanceof AppError && error.code === "INSUFFICIENT_BALANCE")
        await deps.launchAutoTopup(account.accountId);
      throw error;
    }
  });
}

/** Whose a request is, as the limits and pools that count per caller name it: an account, an x402 payer, or (neither) a client address group. */
export function callerOf(who: { account?: Account | null; payer?: string | null; ip?: string }): string {
  if (who.account) return `acct:${who.account.accountId}`;
  if (who.payer) return `payer:${who.payer.toLowerCase()}`;
  return `ip:${addressGroup(who.ip ?? "")}`;
}

/**
 * Takes one of the caller's RENDERS_IN_FLIGHT render slots for this request, on a route that holds
 * one (null on the others); 429 when the caller has them all, before any work or charge. The slot's
 * lease is the request's: a function that dies holding it frees it then.
 */
async function takeRenderSlot(
  route: Route,
  caller: string,
  request: AccessRequest,
  deps: AccessDependencies,
  size = RENDERS_IN_FLIGHT,
): Promise<HeldSlot | null> {
  if (route.holds !== "render") return null;
  const pool = `render:${caller}`;
  const index = await deps.takeSlot(pool, size, request.requestId, request.leaseUntil);
  if (index === null)
    throw new AppError(
      "RATE_LIMITED",
      `This caller has ${size} renders in flight, the most one may have at once (whatever route or tool they came through): retry when one has answered.`,
      { headers: { "Retry-After": "1" } },
    );
  return { pool, index, holder: request.requestId };
}

/** Lets a held render slot go (its lease ends it anyway, should this fail). Never throws. */
const letGo = (slot: HeldSlot | null | undefined, deps: AccessDependencies): Promise<void> =>
  slot ? deps.releaseSlot(slot.pool, slot.index, slot.holder).catch(() => undefined) : Promise.resolve();

/** Once the request has ended, answered or failed: its render slot goes to the caller's next render. */
export const endHolding = (grant: AccessGrant, deps: AccessDependencies): Promise<void> =>
  afterWork(letGo(grant.slot, deps), "letting a render slot go", grant.slot?.holder ?? "");

/** What the render cache needs of a request paid by `scope` (an account, or a payer's address). */
const cacheRequest = (route: Route, request: AccessRequest, scope: string): CacheRequest => ({
  routeId: route.id,
  scope,
  body: (request.body ?? {}) as CacheRequest["body"],
  requestId: request.requestId,
  leaseUntil: request.leaseUntil,
  deadline: request.deadline,
});

type Claimed = NonNullable<AccessGrant["idempotency"]>;

/** Claims `key` in `scope` for this request and what it sends; the first answer when a retry finds one (lib/billing/idempotency.ts). */
async function claim(scope: string, key: string, sent: unknown, route: Route, request: AccessRequest, deps: AccessDependencies): Promise<Claimed | string> {
  const found = await deps.claimIdempotency(scope, key, fingerprint(route.id, sent), request.requestId, request.leaseUntil);
  return found.kind === "replay" ? found.answer : { scope, key, requestId: request.requestId };
}

/** Runs the rest of access control holding `claimed`: released when it fails (a refused charge, a payment that does not verify). */
async function holding(claimed: Claimed | null, request: AccessRequest, deps: AccessDependencies, rest: () => Promise<AccessGrant>): Promise<AccessGrant> {
  try {
    return await rest();
  } catch (error) {
    if (claimed) await deps.releaseIdempotency(claimed.scope, claimed.key, request.requestId);
    throw error;
  }
}

/** After the work succeeded: settles an x402 payment by `settleBy` (epoch ms) and returns the receipt headers (none for a key). */
export async function settle(grant: AccessGrant, request: AccessRequest, settleBy: number, deps: AccessDependencies): Promise<Record<string, string>> {
  if (grant.charge) {
    // The response is produced: the charge is final. If marking it fails, the customer still gets
    // the output, and the reconciler refunds the charge after its grace period (in their favour).
    // A render stored for the cache becomes a hit only once the mark has landed: a refunded one never does.
    const cache = grant.cache;
    const final = deps.deliver(grant.charge).then(
      async () => {
        if (cache) await deps.publishCache(cache);
      },
      async (error: unknown) => {
        if (cache) await deps.closeCache(cache);
        throw error;
      },
    );
    await afterWork(final, "marking a charge delivered", request.requestId);
    return {};
  }
  const payment = grant.payment;
  if (!payment) return {};
  // From here settling decides the payment's fate (release included): the failure path must not release it.
  grant.payment = null;
  // Settled or pending, the output is delivered: the payer may have paid (lib/payments/settlement.ts).
  // Only a settled payment publishes the render for the cache: a pending one may yet expire unpaid.
  const settlement = await deps.settlePayment(payment, { kind: "render" }, { resource: request.resource, at: request.at }, settleBy);
  if (grant.cache) await (settlement.state === "settled" ? deps.publishCache(grant.cache) : deps.closeCache(grant.cache));
  return settlement.headers;
}

/** After the work failed, whatever failed: refunds a charge, frees an unsettled payment and an Idempotency-Key. Never throws. */
export async function undo(grant: AccessGrant, deps: AccessDependencies): Promise<void> {
  const claimed = grant.idempotency;
  if (claimed) await afterWork(deps.releaseIdempotency(claimed.scope, claimed.key, claimed.requestId), "releasing an idempotency key", claimed.requestId);
  if (grant.cache) await deps.closeCache(grant.cache);
  // A payment that was never settled: the authorisation may pay again.
  if (grant.payment) await afterWork(deps.releasePayment(grant.payment), "releasing a payment", grant.payment.requestId);
  // A refund that fails or hangs leaves the charge's PENDING marker: the reconciler refunds it after the grace period.
  if (grant.charge) await afterWork(deps.refund(grant.charge), "refunding a charge", grant.charge.requestId);
}

/** After the work succeeded: keeps its answer for retries with the same Idempotency-Key (a failure to keep it releases the key). */
export async function keepForRetries(
  grant: AccessGrant,
  answer: APIGatewayProxyStructuredResultV2,
  requestId: string,
  deps: AccessDependencies,
): Promise<void> {
  const claimed = grant.idempotency;
  if (!claimed) return;
  const keep = deps.keepAnswer(answer).then((text) => deps.completeIdempotency(claimed.scope, claimed.key, requestId, text));
  await afterWork(
    keep.catch(async (error: unknown) => {
      await deps.releaseIdempotency(claimed.scope, claimed.key, requestId);
      throw error;
    }),
    "keeping an answer for its Idempotency-Key",
    requestId,
  );
}

/** How long the answer waits for the ledger once the work is over. */
const AFTER_WORK_MS = 1_500;

/**
 * Waits for a ledger write that follows the work, at most AFTER_WORK_MS, and never throws: the
 * customer's answer does not wait on a table that stopped answering. Whatever did not happen is
 * put right by the reconciler (a charge never delivered is refunded, which favours the customer).
 */
async function afterWork(work: Promise<unknown>, what: string, requestId: string): Promise<void> {
  const failed = (error: unknown) => log.error(`${what} failed; the reconciler will put it right`, { requestId, error: describeError(error) });
  await orTimeout(
    work.catch((error: unknown) => failed(error)),
    AFTER_WORK_MS,
    () => failed(new Error(`no answer in ${AFTER_WORK_MS} ms`)),
  );
}
