// DynamoDB keys of the single table, built only here (docs/design.md). pk/sk per entity:
//   account      ACCT#<id>          ACCT
//   API key      KEY#<sha256(key)>  KEY        -> accountId, keyId (the key itself is never stored)
//                ACCT#<id>          APIKEY#<key id>    (the account's list of its keys: name, first and last characters, last use)
//   email        EMAIL#<normalized> EMAIL      -> accountId (one account, one bonus per email)
//   usage entry  ACCT#<id>          USE#<ISO time>#<request id>
//   rate window  RATE#<subject>     W#<epoch second>   (expiresAt: TTL)
//   x402 payment PAY#<sha256(network|asset|payer|nonce)>  PAY   (an authorisation pays for one request)
//   settlement   SETTLE#<tx hash>   SETTLE     (create-only: a transfer is recorded, and credits, once)
//   unconfirmed  UNCONFIRMED        <ISO time>#<payment id>   (a settlement left pending, to confirm on chain)
//   undelivered  PENDING            <ISO time>#<account id>#<request id>   (a charge neither delivered nor refunded yet)
//   idempotency  IDEM#<account id>#<sha256(Idempotency-Key)>  IDEM   (expiresAt: TTL; the first answer for retries)
//   signing key  SIGNKEY#<key id>   SIGNKEY    -> accountId, secret (signed links: docs/api.md)
//                ACCT#<id>          SIGNKEY#<key id>   (the account's list of its keys, no secret)
//                SIGNKEY#<key id>   SPEND#<UTC day>    (what links signed with it were charged that day: its daily limit; expiresAt: TTL)
//   render cache CACHE#<sha256(scope, route, request)>  CACHE   (expiresAt: TTL; where a cached output is, or who renders it)
//   slot         SLOT#<pool>        <n>        (who holds it, until when: a bounded share of a function's instances)
//   job          JOB#<id>           JOB        (its account, endpoint, items; expiresAt: TTL)
//                JOB#<id>           ITEM#<nnn> (an item's state, charge and result)
//                ACCT#<id>          JOB#<ISO time>#<job id>   (the account's list of its jobs)
//                JOB#<id>           HOOK#<delivery id>        (a webhook event of the job and its delivery attempts)
//   webhook key  ACCT#<id>          WEBHOOK    (the account's webhook signing secret)
//   job feed     FEED               <account id>#<ISO time>#<job id>   (a job with items not yet sent to the queue: lib/jobs/feed.ts)
//   receivers    RECEIVER#<account id>  RECEIVER   (an account's webhook receivers' failures in a row, and no attempt before `until`; expiresAt: TTL)
//   job hold     HOLD               <job id>   -> accountId, held (what the job still holds of its price: lib/billing/holds.ts)
//   payer        PAYER#<address>    PAYER      -> accountId (create-only: the one account auto-topup may pull from this wallet for)
//   permit       PERMIT#<address>#<nonce>  <value>#<deadline>  (create-only: a permit proves a wallet once; expiresAt: TTL)
//   monitor      ACCT#<id>          MON#<monitor id>   (a watched page: its request, schedule, baseline, last check)
//                MON#<monitor id>   CHECK#<check id>   (a check and its outcome; check ids sort by time; expiresAt: TTL)
//                MON#<monitor id>   HOOK#<delivery id> (a webhook event of the monitor and its delivery attempts)
//   due check    DUE                <ISO time>#<account id>#<monitor id>   (when a monitor's next check is due: lib/monitors/schedule.ts)
//   open work    OPEN               <item|check>#<account id>#<job or monitor id>#<index or check id>   (taken by a worker, not yet ended: lib/jobs/attempt.ts)

export type TableKey = { pk: string; sk: string };

/** An account's item. */
export const accountKey = (accountId: string): TableKey => ({ pk: `ACCT#${accountId}`, sk: "ACCT" });

/** An API key's item, addressed by the key's SHA-256. */
export const apiKeyKey = (keyHash: string): TableKey => ({ pk: `KEY#${keyHash}`, sk: "KEY" });

/** The item that reserves an address's signup bonus (and names the account that received it). */
export const emailKey = (canonicalEmail: string): TableKey => ({ pk: `EMAIL#${canonicalEmail}`, sk: "EMAIL" });

/** Sort-key prefix of an account's usage entries (newest last in key order). */
export const USAGE_PREFIX = "USE#";

/** A usage entry: sorted by time, unique per request. */
export const usageKey = (accountId: string, at: Date, requestId: string): TableKey => ({
  pk: `ACCT#${accountId}`,
  sk: `${USAGE_PREFIX}${at.toISOString()}#${requestId}`,
});

/** A one-second rate-limit window of a subject (an account, an IP, a payer). */
export const rateWindowKey = (subject: string, epochSecond: number): TableKey => ({ pk: `RATE#${subject}`, sk: `W#${epochSecond}` });

/** The reservation of an x402 authorisation. */
export const paymentKey = (paymentId: string): TableKey => ({ pk: `PAY#${paymentId}`, sk: "PAY" });

/** A transfer on chain (an x402 settlement), written once: what it paid for, or which balance it credited. */
export const settlementKey = (transaction: string): TableKey => ({ pk: `SETTLE#${transaction}`, sk: "SETTLE" });

/** Partition of the charges not yet delivered nor refunded, sorted by time (the reconciler reads it oldest first). */
export const PENDING_PARTITION = "PENDING";

/** The marker of a charge in flight: written with the charge, deleted by its delivery or its refund. */
export const pendingKey = (at: Date, accountId: string, requestId: string): TableKey => ({
  pk: PENDING_PARTITION,
  sk: `${at.toISOString()}#${accountId}#${requestId}`,
});

/** Partition of the x402 settlements a facilitator left pending, to be confirmed on chain by the reconciler. */
export const UNCONFIRMED_PARTITION = "UNCONFIRMED";

/** Past its authorisation's validBefore, a settlement still unconfirmed this much longer is decided unpaid (block times, clock skew). */
export const UNCONFIRMED_SKEW_SECONDS = 60;

/** The marker of a settlement awaiting confirmation on chain. */
export const unconfirmedKey = (at: Date, paymentId: string): TableKey => ({ pk: UNCONFIRMED_PARTITION, sk: `${at.toISOString()}#${paymentId}` });

/** An account's Idempotency-Key (by its SHA-256): the claim, then the first answer, for 24 hours. */
export const idempotencyKey = (accountId: string, keyHash: string): TableKey => ({ pk: `IDEM#${accountId}#${keyHash}`, sk: "IDEM" });

/** A render cache entry, by the hash of the request and the customer it belongs to (lib/http/render-cache.ts). */
export const renderCacheKey = (hash: string): TableKey => ({ pk: `CACHE#${hash}`, sk: "CACHE" });

/** A signing key for signed links, by its id: its account and its secret. */
export const signingKeyKey = (keyId: string): TableKey => ({ pk: `SIGNKEY#${keyId}`, sk: "SIGNKEY" });

/** Sort-key prefix of an account's signing keys in its partition. */
export const SIGNING_KEY_PREFIX = "SIGNKEY#";

/** An account's listing of one of its signing keys. */
export const accountSigningKeyKey = (accountId: string, keyId: string): TableKey => ({ pk: `ACCT#${accountId}`, sk: `${SIGNING_KEY_PREFIX}${keyId}` });

/** Slot `index` of the pool `pool` (lib/billing/slots.ts). */
export const slotKey = (pool: string, index: number): TableKey => ({ pk: `SLOT#${pool}`, sk: String(index) });

/** What links signed with `keyId` were charged on the UTC day `day` (YYYY-MM-DD). */
export const signingKeySpendKey = (keyId: string, day: string): TableKey => ({ pk: `SIGNKEY#${keyId}`, sk: `SPEND#${day}` });

/** Sort-key prefix of an account's list of its API keys. */
export const API_KEY_PREFIX = "APIKEY#";

/** An API key in its account's list. */
export const accountApiKeyKey = (accountId: string, keyId: string): TableKey => ({ pk: `ACCT#${accountId}`, sk: `${API_KEY_PREFIX}${keyId}` });

/** The partition of every account's auto-topup item (the reconciler reads it whole). */
export const AUTO_TOPUP_PARTITION = "AUTOTOPUP";

/** An account's auto-topup configuration and state (lib/billing/auto-topup.ts). */
export const autoTopupKey = (accountId: string): TableKey => ({ pk: AUTO_TOPUP_PARTITION, sk: accountId });

/** A verification link's token, by its SHA-256 (the link itself is only in the mail). */
export const verifyTokenKey = (tokenHash: string): TableKey => ({ pk: `VERIFY#${tokenHash}`, sk: "VERIFY" });

/** A job (lib/jobs/store.ts). */
export const jobKey = (jobId: string): TableKey => ({ pk: `JOB#${jobId}`, sk: "JOB" });

/** Sort-key prefix of a job's items in its partition. */
export const JOB_ITEM_PREFIX = "ITEM#";

/** Item `index` of a job (zero-padded: the items sort in order). */
export const jobItemKey = (jobId: string, index: number): TableKey => ({ pk: `JOB#${jobId}`, sk: `${JOB_ITEM_PREFIX}${String(index).padStart(3, "0")}` });

/** Sort-key prefix of an account's list of its jobs (newest last in key order). */
export const ACCOUNT_JOB_PREFIX = "JOB#";

/** A job in its account's list. */
export const accountJobKey = (accountId: string, createdAt: string, jobId: string): TableKey => ({
  pk: `ACCT#${accountId}`,
  sk: `${ACCOUNT_JOB_PREFIX}${createdAt}#${jobId}`,
});

/** Sort-key prefix of a job's webhook deliveries. */
export const JOB_HOOK_PREFIX = "HOOK#";

/** A webhook event of a job, and its delivery attempts. */
export const jobHookKey = (jobId: string, deliveryId: string): TableKey => ({ pk: `JOB#${jobId}`, sk: `${JOB_HOOK_PREFIX}${deliveryId}` });

/** An account's webhook signing secret (POST /api/v1/webhook-secret). */
export const webhookSecretKey = (accountId: string): TableKey => ({ pk: `ACCT#${accountId}`, sk: "WEBHOOK" });

/** The binding of an auto-topup payer (lowercase address) to the one account that proved it controls it. */
export const payerKey = (payer: string): TableKey => ({ pk: `PAYER#${payer.toLowerCase()}`, sk: "PAYER" });

/** A permit that proved `payer`: the one signed with this nonce, value and deadline (another of the same nonce is another proof). */
export const usedPermitKey = (payer: string, nonce: bigint, value: bigint, deadline: number): TableKey => ({
  pk: `PERMIT#${payer.toLowerCase()}#${nonce}`,
  sk: `${value}#${deadline}`,
});

/** The partition of every job's hold (the reconciler reads it whole). */
export const HOLD_PARTITION = "HOLD";

/** What job `jobId` still holds of its price. */
export const holdKey = (jobId: string): TableKey => ({ pk: HOLD_PARTITION, sk: jobId });

/** The partition of jobs with items waiting to be sent to the queue (lib/jobs/feed.ts). */
export const FEED_PARTITION = "FEED";

/** A job with items waiting to be sent, in its account's order. */
export const feedKey = (accountId: string, createdAt: string, jobId: string): TableKey => ({ pk: FEED_PARTITION, sk: `${accountId}#${createdAt}#${jobId}` });

/** How an account's webhook receivers, all of them, have been answering: their failures in a row, and the backoff they earned. */
export const receiversKey = (accountId: string): TableKey => ({ pk: `RECEIVER#${accountId}`, sk: "RECEIVER" });

/** Sort-key prefix of an account's monitors in its partition. */
export const MONITOR_PREFIX = "MON#";

/** A monitor, in its account's partition: another account's key reads nothing. */
export const monitorKey = (accountId: string, monitorId: string): TableKey => ({ pk: `ACCT#${accountId}`, sk: `${MONITOR_PREFIX}${monitorId}` });

/** Sort-key prefix of a monitor's checks. */
export const MONITOR_CHECK_PREFIX = "CHECK#";

/** A check of a monitor. */
export const monitorCheckKey = (monitorId: string, checkId: string): TableKey => ({ pk: `MON#${monitorId}`, sk: `${MONITOR_CHECK_PREFIX}${checkId}` });

/** A webhook event of a monitor, and its delivery attempts. */
export const monitorHookKey = (monitorId: string, deliveryId: string): TableKey => ({ pk: `MON#${monitorId}`, sk: `${JOB_HOOK_PREFIX}${deliveryId}` });

/** The partition of every monitor's next due check, by time (the schedule reads what is due). */
export const DUE_PARTITION = "DUE";

/** Monitor `monitorId`'s next check, due at `at` (epoch ms). */
export const dueKey = (at: number, accountId: string, monitorId: string): TableKey => ({
  pk: DUE_PARTITION,
  sk: `${new Date(at).toISOString()}#${accountId}#${monitorId}`,
});

/** A check waiting for its account's share of the workers (lib/jobs/feed.ts), in its account's order. */
export const feedCheckKey = (accountId: string, at: number, checkId: string): TableKey => ({
  pk: FEED_PARTITION,
  sk: `${accountId}#${new Date(at).toISOString()}#${checkId}`,
});

/** The partition of the jobs workers' work taken and not yet ended (lib/jobs/attempt.ts: the sweeper reads it, and nothing else). */
export const OPEN_PARTITION = "OPEN";

/** A job's item, a monitor's check or a crawl's page taken by a worker, until it ends. */
export const openKey = (kind: "item" | "check" | "page", accountId: string, owner: string, id: string | number): TableKey => ({
  pk: OPEN_PARTITION,
  sk: `${kind}#${accountId}#${owner}#${id}`,
});
