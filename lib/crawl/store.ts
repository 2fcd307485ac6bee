import { createHash, randomBytes, randomInt } from "node:crypto";
import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHeld, documents, ignoreFailedCondition, transactIf } from "../billing/dynamodb.js";
import { closeHold, type Hold } from "../billing/holds.js";
import { feedKey, holdKey, JOB_HOOK_PREFIX } from "../billing/keys.js";
import { closeSlotsUntil, poolState, releaseSlot, takeSlotOf } from "../billing/slots.js";
import { config } from "../config.js";
import type { Lease } from "../jobs/attempt.js";
import type { HookOwner } from "../jobs/events.js";
import type { QueuedMessage } from "../jobs/feed.js";
import { enqueueItem } from "../jobs/queue.js";
import { JOB_RETENTION_DAYS } from "../packaging.js";

// A crawl as stored (docs/crawl.md, "Crawl"): nothing of it lives in one process's memory. Under
// its own partition, CRAWL#<id>:
//   CRAWL            the crawl: its request (secrets sealed), status and counters
//   U#<url key>      one row per normalised URL found (a conditional write: a URL is queued once,
//                    however many pages link it): queued, running, delivered, skipped or failed
//   Q#<depth>#<at>#  a page's message waiting to be sent, breadth first (the feed sends it:
//                    lib/jobs/feed.ts), moved to S#<url key> as it is sent
//   S#<url key>      a page sent and not ended: the crawl has ended when none is left and none waits
//   H#<text hash>    the first page with that text: a later one is its duplicate
//   HOOK#<id>        its webhook's event (crawl.completed) and delivery attempts (lib/jobs/events.ts)
// and a FEED row naming the Q# queue while the crawl runs, a HOLD of its price, the account's list
// row, a row per host for its Crawl-delay (CRAWLHOST#), and the slots of its account's requests in flight
// to each host (SLOT#host#..., held by a Retry-After too). All kept JOB_RETENTION_DAYS (slots a day).

/** Skip reasons, as counted and listed. */
export type SkipReason = "robots" | "scope" | "trap" | "duplicate" | "limit" | "guard" | "too large" | "not html" | "unchanged" | "cancelled";
type CrawlStatus = "running" | "completed" | "cancelled";
type PageStatus = "queued" | "running" | "delivered" | "skipped" | "failed";
type FoundBy = "start" | "sitemap" | "link";

/** A crawl as stored; `request` is the validated request with its secrets sealed (lib/api/secrets.ts). */
export interface Crawl {
  readonly id: string;
  readonly accountId: string;
  readonly createdAt: string;
  readonly status: CrawlStatus;
  readonly request: Record<string, unknown> & { readonly url: string; readonly limit: number; readonly webhookUrl?: string };
  /** The key its request's secrets open with, deleted when it ends. */
  readonly secretKey?: string;
  /** Set once no more pages are to be sent: it reached its limit, or was cancelled. */
  readonly stoppedAt?: string;
  readonly stopped?: "limit" | "cancelled";
  readonly finishedAt?: string;
  readonly discovered: number;
  readonly delivered: number;
  readonly failed: number;
  readonly skipped: Partial<Record<SkipReason, number>>;
  /** What its pages were charged (micro-USD). */
  readonly charged: number;
  /** What was held for it when it was submitted. */
  readonly held: number;
  /** Its whole result (NDJSON) in the bucket, once written after it ended (lib/crawl/result.ts). */
  readonly resultKey?: string;
  /** Pages it has fetched (whatever became of them), and bytes of output it has kept: each bounded (lib/crawl/run.ts). */
  readonly fetched?: number;
  readonly bytes?: number;
}

/** A URL of a crawl as stored (its lease: lib/jobs/attempt.ts). */
export interface CrawlPage extends Lease {
  readonly key: string;
  readonly url: string;
  readonly depth: number;
  readonly foundBy: FoundBy;
  readonly status: PageStatus;
  readonly reason?: SkipReason;
  /** Its shape (lib/crawl/urls.ts, patternOf) and how many pages of that shape in a row found nothing else (a trap's chain). */
  readonly pattern: string;
  readonly barren: number;
  readonly lastmod?: string;
  readonly finalUrl?: string;
  readonly httpStatus?: number;
  readonly rendered?: boolean;
  readonly title?: string;
  readonly charged?: number;
  readonly outputKey?: string;
  readonly error?: string;
  /** When the copy it was delivered from was read (docs/crawl.md, "maxAge"). */
  readonly copiedAt?: string;
  /** Counted against the crawl's limit (once, whatever redelivers it). */
  readonly counted?: true;
}

const CRAWL_ID = /^crl_[A-Za-z0-9_-]{22}$/;
const isCrawlId = (id: string) => CRAWL_ID.test(id);
export const newCrawlId = () => `crl_${randomBytes(16).toString("base64url").slice(0, 22)}`;

const partition = (crawlId: string) => `CRAWL#${crawlId}`;
const crawlKey = (crawlId: string) => ({ pk: partition(crawlId), sk: "CRAWL" });
export const pageKey = (crawlId: string, key: string) => ({ pk: partition(crawlId), sk: `U#${key}` });
const sentKey = (key: string) => `S#${key}`;
const ACCOUNT_CRAWL_PREFIX = "CRAWL#";
const accountCrawlKey = (accountId: string, createdAt: string, crawlId: string) => ({
  pk: `ACCT#${accountId}`,
  sk: `${ACCOUNT_CRAWL_PREFIX}${createdAt}#${crawlId}`,
});
const hostKey = (accountId: string, host: string) => ({ pk: `CRAWLHOST#${accountId}#${host}`, sk: "HOST" });

/** A crawl as the owner of its webhook (lib/jobs/events.ts): its deliveries kept in its own partition, as long as it is. */
export const crawlHooks = (crawl: Crawl): HookOwner => ({
  accountId: crawl.accountId,
  webhookUrl: crawl.request.webhookUrl,
  ref: { crawlId: crawl.id },
  key: (deliveryId) => ({ pk: partition(crawl.id), sk: `${JOB_HOOK_PREFIX}${deliveryId}` }),
  retentionDays: JOB_RETENTION_DAYS,
});

/** Crawl `crawlId` as the owner of its webhook, or null when it is gone. */
export const crawlHooksOf = async (crawlId: string): Promise<HookOwner | null> => {
  const crawl = await getCrawl(crawlId);
  return crawl && crawlHooks(crawl);
};

/** A normalised URL's key in its crawl. */
const urlKeyOf = (url: string) => createHash("sha256").update(url).digest("base64url").slice(0, 22);

/** Requests of one account's crawls in flight to one host at once: slots of a pool of its own (lib/billing/slots.ts). */
const HOST_IN_FLIGHT = 2;
const hostPool = (accountId: string, host: string) => `host#${accountId}#${host}`;
/**
 * A crawl's pages in flight at once (sent and not ended), whatever its account's share: its host's
 * two requests and one page read meanwhile; the rest of the share goes to the account's other work.
 */
const PAGES_IN_FLIGHT = HOST_IN_FLIGHT + 1;

const expiresAt = (from: number) => Math.floor(from / 1000) + JOB_RETENTION_DAYS * 86_400;

/** A URL found, to be recorded: queued (with its message's depth) or skipped with a reason. */
export interface Found {
  readonly url: string;
  readonly depth: number;
  readonly foundBy: FoundBy;
  readonly pattern: string;
  readonly barren: number;
  readonly lastmod?: string;
  readonly skip?: SkipReason;
}

/** Records crawl `crawl`, its first page queued, its account's list row and its FEED row (its hold already placed). */
export async function createCrawl(
  crawl: Omit<Crawl, "status" | "discovered" | "delivered" | "failed" | "skipped" | "charged">,
  start: Found,
  now = Date.now(),
): Promise<Crawl> {
  const expires = expiresAt(now);
  const stored: Crawl = { ...crawl, status: "running", discovered: 0, delivered: 0, failed: 0, skipped: {}, charged: 0 };
  await documents.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: { ...crawlKey(crawl.id), ...stored, expiresAt: expires },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: { ...accountCrawlKey(crawl.accountId, crawl.createdAt, crawl.id), crawlId: crawl.id, expiresAt: expires },
          },
        },
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: {
              ...feedKey(crawl.accountId, crawl.createdAt, crawl.id),
              accountId: crawl.accountId,
              queue: { pk: partition(crawl.id), prefix: "Q#", sent: { prefix: "S#", most: PAGES_IN_FLIGHT } },
            },
          },
        },
      ],
    }),
  );
  await recordFound(stored, [start], now);
  return stored;
}

/** The crawl `id`, or null. */
export async function getCrawl(id: string): Promise<Crawl | null> {
  if (!isCrawlId(id)) return null;
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: crawlKey(id), ConsistentRead: true }));
  return (Item as Crawl | undefined) ?? null;
}

/** Page `key` of crawl `crawlId`, or null. */
export async function getPage(crawlId: string, key: string): Promise<CrawlPage | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: pageKey(crawlId, key), ConsistentRead: true }));
  return (Item as CrawlPage | undefined) ?? null;
}

/** The newest `limit` crawls of an account, newest first. */
export async function listCrawls(accountId: string, limit: number): Promise<Crawl[]> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `ACCT#${accountId}`, ":prefix": ACCOUNT_CRAWL_PREFIX },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  const crawls = await Promise.all(Items.map((item) => getCrawl(item.crawlId as string)));
  return crawls.filter((crawl): crawl is Crawl => crawl !== null);
}

/** A page of `crawlId`'s URLs, in key order, `limit` at most, after `cursor` (a URL key); the next cursor, or null at the end. */
export async function listPages(crawlId: string, limit: number, cursor?: string): Promise<{ pages: CrawlPage[]; next: string | null }> {
  const { Items = [], LastEvaluatedKey } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": partition(crawlId), ":prefix": "U#" },
      ...(cursor ? { ExclusiveStartKey: pageKey(crawlId, cursor) } : {}),
      Limit: limit,
    }),
  );
  return { pages: Items as CrawlPage[], next: LastEvaluatedKey ? String(LastEvaluatedKey.sk).slice(2) : null };
}

/** The page rows of `keys` that exist already (a BatchGet a hundred at a time, its unprocessed keys read again). */
async function existing(crawlId: string, keys: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let start = 0; start < keys.length; start += 100) {
    let wanted: Record<string, unknown>[] | undefined = keys.slice(start, start + 100).map((key) => pageKey(crawlId, key));
    while (wanted?.length) {
      const { Responses, UnprocessedKeys } = await documents.send(
        new BatchGetCommand({ RequestItems: { [config.TABLE_NAME]: { Keys: wanted, ProjectionExpression: "sk", ConsistentRead: true } } }),
      );
      for (const item of Responses?.[config.TABLE_NAME] ?? []) found.add(String(item.sk).slice(2));
      wanted = UnprocessedKeys?.[config.TABLE_NAME]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}

/** URLs recorded at once. */
const RECORD_AT_ONCE = 25;

/** Page `key` (at `page.url`, `page.depth` hops) of `crawl` as a message waiting in its queue, breadth first. */
const queuedOf = (crawl: Pick<Crawl, "id" | "accountId">, key: string, page: Pick<Found, "url" | "depth">, now: number): QueuedMessage => ({
  pk: partition(crawl.id),
  // Its writer's own (two pages that find one URL in the same millisecond write two rows, and the one whose URL row lost takes back its own).
  sk: `Q#${String(page.depth).padStart(2, "0")}#${String(now).padStart(13, "0")}#${key}#${randomBytes(4).toString("hex")}`,
  message: { kind: "page", accountId: crawl.accountId, crawlId: crawl.id, key, url: page.url, depth: page.depth },
  sent: sentKey(key),
});

/** A page sent this long ago whose message nothing took (a worker died between sending it and queueing it, or it went to the dead-letter queue) is lost. */
const LOST_MS = 10 * 60_000;

/**
 * Puts back on `crawl`'s queue the pages sent and never run: a sent marker older than LOST_MS whose
 * page is still queued, or running under a lease long over, waits again; one whose page has ended
 * is removed. Returns how many were put back.
 */
export async function requeueLost(crawl: Pick<Crawl, "id" | "accountId">, now = Date.now()): Promise<number> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": partition(crawl.id), ":prefix": "S#" },
      ConsistentRead: true,
    }),
  );
  let requeued = 0;
  for (const marker of Items) {
    if (now - Number(marker.at ?? 0) < LOST_MS) continue;
    const key = String(marker.sk).slice(2);
    const page = await getPage(crawl.id, key);
    // Ended, its marker left by a worker that stopped between ending it and unmarking it: it goes.
    if (!page || (page.status !== "queued" && page.status !== "running")) {
      await unmark(crawl.id, key);
      continue;
    }
    const lost = page.status === "queued" || (page.leaseUntil ?? 0) < now - LOST_MS;
    if (!lost) continue;
    const back = await transactIf({
      TransactItems: [
        {
          Delete: {
            TableName: config.TABLE_NAME,
            Key: { pk: marker.pk, sk: marker.sk },
            ConditionExpression: "#at = :at",
            ExpressionAttributeNames: { "#at": "at" },
            ExpressionAttributeValues: { ":at": marker.at },
          },
        },
        { Put: { TableName: config.TABLE_NAME, Item: { ...queuedOf(crawl, key, page, now), expiresAt: expiresAt(now) } } },
      ],
    });
    if (back) requeued++;
  }
  return requeued;
}

/**
 * Records URLs `found` by a page of `crawl` (or its start): each new one gets its row (one
 * conditional write: a URL two pages found at once is recorded once) and, when it is to be
 * fetched, its message in the crawl's queue, written just before. Returns the URLs that were new.
 */
export async function recordFound(crawl: Pick<Crawl, "id" | "accountId">, found: readonly Found[], now = Date.now()): Promise<Found[]> {
  const byKey = new Map(found.map((f) => [urlKeyOf(f.url), f]));
  const known = await existing(crawl.id, [...byKey.keys()]);
  const expires = expiresAt(now);
  const added: Found[] = [];
  /** Records `f` under `key`: it, when this write recorded it. */
  const record = async ([key, f]: [string, Found]): Promise<Found | null> => {
    const row = {
      ...pageKey(crawl.id, key),
      key,
      url: f.url,
      depth: f.depth,
      foundBy: f.foundBy,
      pattern: f.pattern,
      barren: f.barren,
      ...(f.lastmod ? { lastmod: f.lastmod } : {}),
      status: f.skip ? "skipped" : "queued",
      ...(f.skip ? { reason: f.skip } : {}),
      expiresAt: expires,
    };
    // Its message first, then its row, once: a message whose row another page wrote first is taken
    // back; one a crash left behind finds its page taken or ended, and is spent (lib/crawl/run.ts).
    const message = f.skip ? null : { ...queuedOf(crawl, key, f, now), expiresAt: expires };
    if (message) await documents.send(new PutCommand({ TableName: config.TABLE_NAME, Item: message }));
    const written = await conditionHeld(
      documents.send(new PutCommand({ TableName: config.TABLE_NAME, Item: row, ConditionExpression: "attribute_not_exists(pk)" })),
    );
    if (!written && message) await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: message.pk, sk: message.sk } }));
    return written ? f : null;
  };
  // RECORD_AT_ONCE writes at a time (each URL's own: they do not meet), counted as each batch is written.
  const fresh = [...byKey].filter(([key]) => !known.has(key));
  for (let start = 0; start < fresh.length; start += RECORD_AT_ONCE) {
    const batch = (await Promise.all(fresh.slice(start, start + RECORD_AT_ONCE).map(record))).filter((f): f is Found => f !== null);
    if (!batch.length) continue;
    const skipped: Partial<Record<SkipReason, number>> = {};
    for (const { skip } of batch) if (skip) skipped[skip] = (skipped[skip] ?? 0) + 1;
    await count(crawl.id, { discovered: batch.length, skipped });
    added.push(...batch);
  }
  return added;
}

/** Adds to a crawl's counters: the crawl as they left it (null when there was nothing to add). */
export async function count(
  crawlId: string,
  add: { discovered?: number; failed?: number; charged?: number; fetched?: number; bytes?: number; skipped?: Partial<Record<SkipReason, number>> },
): Promise<Crawl | null> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  for (const field of ["discovered", "failed", "charged", "fetched", "bytes"] as const)
    if (add[field]) {
      sets.push(`${field} = if_not_exists(${field}, :zero) + :${field}`);
      values[`:${field}`] = add[field];
      values[":zero"] = 0;
    }
  Object.entries(add.skipped ?? {}).forEach(([reason, n], i) => {
    names[`#r${i}`] = reason;
    sets.push(`skipped.#r${i} = if_not_exists(skipped.#r${i}, :zero) + :r${i}`);
    values[`:r${i}`] = n;
    values[":zero"] = 0;
  });
  if (!sets.length) return null;
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: crawlKey(crawlId),
      UpdateExpression: `SET ${sets.join(", ")}`,
      ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: values,
      ReturnValues: "ALL_NEW",
    }),
  );
  return (Attributes as Crawl | undefined) ?? null;
}

/** Retries a transaction that met another write of the same item (DynamoDB cancels both sides' transactions then). */
async function withoutConflict<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const conflict = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons?.some((reason) => reason.Code === "TransactionConflict");
      if (!conflict || attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80 * (attempt + 1)));
    }
  }
}

/**
 * Counts page `key` against its crawl's limit, once: true when it is (now or by an earlier delivery
 * of its message), false when the limit was reached first.
 */
export async function countAgainstLimit(crawl: Pick<Crawl, "id" | "request">, key: string): Promise<boolean> {
  try {
    await withoutConflict(() =>
      documents.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: config.TABLE_NAME,
                Key: pageKey(crawl.id, key),
                UpdateExpression: "SET counted = :yes",
                ConditionExpression: "attribute_not_exists(counted)",
                ExpressionAttributeValues: { ":yes": true },
              },
            },
            {
              Update: {
                TableName: config.TABLE_NAME,
                Key: crawlKey(crawl.id),
                UpdateExpression: "SET delivered = delivered + :one",
                ConditionExpression: "delivered < :limit",
                ExpressionAttributeValues: { ":one": 1, ":limit": crawl.request.limit },
              },
            },
          ],
        }),
      ),
    );
    return true;
  } catch (error) {
    const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    if (reasons?.[0]?.Code === "ConditionalCheckFailed") return true;
    if (reasons?.[1]?.Code === "ConditionalCheckFailed") return false;
    throw error;
  }
}

/** Whether page `key` is the first of its crawl with text `hash`: else the URL of the one that was. */
export async function firstWithText(crawlId: string, hash: string, url: string): Promise<string | null> {
  const key = { pk: partition(crawlId), sk: `H#${hash}` };
  const first = await conditionHeld(
    documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...key, url, expiresAt: expiresAt(Date.now()) },
        ConditionExpression: "attribute_not_exists(pk) OR #url = :url",
        ExpressionAttributeNames: { "#url": "url" },
        ExpressionAttributeValues: { ":url": url },
      }),
    ),
  );
  if (first) return null;
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: key, ConsistentRead: true }));
  return String(Item?.url ?? "");
}

/** Whether the crawl has a row for `url` (found, whatever became of it). */
export async function knows(crawlId: string, url: string): Promise<boolean> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: pageKey(crawlId, urlKeyOf(url)), ProjectionExpression: "sk" }));
  return Item !== undefined;
}

/**
 * Takes the next turn on `host` for `accountId`'s pages: now, when its last one's Crawl-delay has
 * passed, setting the next at `now + delayMs`; else the time it may be taken.
 */
export async function takeHostTurn(accountId: string, host: string, delayMs: number, now = Date.now()): Promise<{ at: number } | null> {
  const taken = await conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: hostKey(accountId, host),
        UpdateExpression: "SET nextAt = :next, expiresAt = :expires",
        ConditionExpression: "attribute_not_exists(nextAt) OR nextAt <= :now",
        ExpressionAttributeValues: { ":next": now + delayMs, ":now": now, ":expires": expiresAt(now) },
      }),
    ),
  );
  if (taken) return null;
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: hostKey(accountId, host), ConsistentRead: true }));
  return { at: Number(Item?.nextAt ?? now) };
}

/**
 * Takes a slot of `host` for a request of `accountId`'s crawls, held by `holder` until `leaseUntil`
 * at most: its index; or, none free, when to try again (a Retry-After's end, or null: soon). One slot
 * tried at random; when it is held, one read of the host's slots, and a try of those seen free (a
 * page waiting for a slot reads, it does not write).
 */
export async function takeHostSlot(accountId: string, host: string, holder: string, leaseUntil: number): Promise<{ index: number } | { until: number | null }> {
  const pool = hostPool(accountId, host);
  const first = randomInt(HOST_IN_FLIGHT);
  if ((await takeSlotOf(pool, [first], holder, leaseUntil)) !== null) return { index: first };
  const { free, closedUntil } = await poolState(pool, HOST_IN_FLIGHT);
  if (closedUntil > Date.now()) return { until: closedUntil };
  const index = await takeSlotOf(
    pool,
    free.filter((i) => i !== first),
    holder,
    leaseUntil,
  );
  return index === null ? { until: null } : { index };
}

/** Lets slot `index` of `host` go (a Retry-After still keeps it from being taken until it ends). */
export const releaseHostSlot = (accountId: string, host: string, index: number, holder: string) => releaseSlot(hostPool(accountId, host), index, holder);

/**
 * Keeps `accountId`'s requests off `host` until `until` at least (a Retry-After): no slot of it is
 * taken before then; a request in flight on one ends as it would.
 */
export const holdHostUntil = (accountId: string, host: string, until: number) => closeSlotsUntil(hostPool(accountId, host), HOST_IN_FLIGHT, until);

/** Puts page `key`, taken by a worker, back as queued (its message comes again later: a host's turn, a Retry-After). */
export async function putBack(crawlId: string, key: string): Promise<void> {
  await documents
    .send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: pageKey(crawlId, key),
        UpdateExpression: "SET #status = :queued REMOVE leaseUntil",
        ConditionExpression: "#status = :running",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":queued": "queued", ":running": "running" },
      }),
    )
    .catch(ignoreFailedCondition);
}

/** What a page ends as. */
export type PageEnd = Pick<
  CrawlPage,
  "status" | "reason" | "finalUrl" | "httpStatus" | "rendered" | "title" | "charged" | "outputKey" | "error" | "copiedAt"
> & {
  readonly status: "delivered" | "skipped" | "failed";
};

/**
 * Ends running page `key` as `end`, only if it is still running (a second worker's late end changes
 * nothing): whether this call ended it. Its sent marker is its caller's to remove after it (unmark);
 * one a crash left behind is removed by the page's next delivery (it finds the page ended) or by the
 * reconciler (requeueLost).
 */
export async function endPage(crawlId: string, key: string, end: PageEnd): Promise<boolean> {
  const fields = Object.entries(end).filter(([, value]) => value !== undefined);
  return conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: pageKey(crawlId, key),
        UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(", ")} REMOVE leaseUntil`,
        ConditionExpression: "#status = :running",
        ExpressionAttributeNames: { ...Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])), "#status": "status" },
        ExpressionAttributeValues: { ...Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])), ":running": "running" },
      }),
    ),
  );
}

/** Removes page `key`'s sent marker: once it has ended (endPage), or when it was found ended already. */
export const unmark = (crawlId: string, key: string) =>
  documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: partition(crawlId), sk: sentKey(key) } }));

/** Whether anything of `crawl` is sent and not ended, or (unless it has stopped) still waits to be sent. */
async function busy(crawl: Crawl): Promise<boolean> {
  const any = async (prefix: string) =>
    (
      await documents.send(
        new QueryCommand({
          TableName: config.TABLE_NAME,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
          ExpressionAttributeValues: { ":pk": partition(crawl.id), ":prefix": prefix },
          ConsistentRead: true,
          Limit: 1,
        }),
      )
    ).Items?.length;
  // Queued first: a feed moves a message from Q# to S# in one write, so a page read in neither place
  // was never there (a page that runs writes what it found to Q# before its S# goes).
  return Boolean((!crawl.stoppedAt && (await any("Q#"))) || (await any("S#")));
}

/**
 * Stops `crawl` sending pages (it reached its limit, or is cancelled): marked, its FEED row
 * deleted. Pages sent before still end. True when this call stopped it.
 */
export async function stopCrawl(crawl: Crawl, why: "limit" | "cancelled", now = Date.now()): Promise<boolean> {
  const stopped = await conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: crawlKey(crawl.id),
        UpdateExpression: "SET stoppedAt = :now, stopped = :why",
        ConditionExpression: "attribute_not_exists(stoppedAt) AND #status = :running",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":now": new Date(now).toISOString(), ":why": why, ":running": "running" },
      }),
    ),
  );
  if (!stopped) return false;
  // Its FEED row goes: nothing more is sent. Its waiting messages are left to their TTL: a stopped crawl's end does not wait for them.
  await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: feedKey(crawl.accountId, crawl.createdAt, crawl.id) }));
  return true;
}

/**
 * Ends `crawlId` if nothing of it runs or waits: completed (or cancelled), what its hold still
 * holds given back, its secrets' key deleted, its FEED row gone. Safe to call anywhere at once: the
 * crawl ends once. The crawl as it now is.
 */
export async function finishIfIdle(crawlId: string, now = Date.now()): Promise<Crawl | null> {
  const crawl = await getCrawl(crawlId);
  if (crawl?.status !== "running" || (await busy(crawl))) return crawl;
  const status: CrawlStatus = crawl.stopped === "cancelled" ? "cancelled" : "completed";
  const ended = await conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: crawlKey(crawl.id),
        UpdateExpression: "SET #status = :status, finishedAt = :now REMOVE secretKey",
        ConditionExpression: "#status = :running",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":status": status, ":now": new Date(now).toISOString(), ":running": "running" },
      }),
    ),
  );
  if (ended) await wrapUp(crawl);
  return getCrawl(crawlId);
}

/**
 * What follows a crawl's end, each step safe to take twice: its FEED row deleted, its result's
 * writing queued (a jobs worker writes it: lib/crawl/result.ts), and last what its hold still holds
 * given back. A crash before the end of it leaves the hold, and the reconciler wraps it up again.
 */
export async function wrapUp(crawl: Pick<Crawl, "id" | "accountId" | "createdAt">): Promise<void> {
  await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: feedKey(crawl.accountId, crawl.createdAt, crawl.id) }));
  await enqueueItem({ kind: "crawl-result", accountId: crawl.accountId, crawlId: crawl.id });
  await releaseCrawlHold(crawl.id);
}

/** Notes crawl `crawlId`'s result as written at `key`. */
export const noteResult = (crawlId: string, key: string) =>
  documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: crawlKey(crawlId),
      UpdateExpression: "SET resultKey = :key",
      ExpressionAttributeValues: { ":key": key },
    }),
  );

/** Gives back what crawl `crawlId`'s hold still holds, and removes it (it has ended). */
async function releaseCrawlHold(crawlId: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: holdKey(crawlId), ConsistentRead: true }));
    if (!Item) return;
    if (await closeHold(Item as Hold)) return;
  }
}
