import { randomBytes } from "node:crypto";
import { BatchWriteCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHeld, documents, ignoreFailedCondition, queryAll, setClause } from "../billing/dynamodb.js";
import { allHolds, closeHold, releaseHold } from "../billing/holds.js";
import { ACCOUNT_JOB_PREFIX, accountJobKey, feedKey, JOB_ITEM_PREFIX, jobItemKey, jobKey } from "../billing/keys.js";
import { config } from "../config.js";
import { JOB_RETENTION_DAYS } from "../packaging.js";
import { type Lease, type Piece, takeLease } from "./attempt.js";
import { travelsInMessage } from "./queue.js";

// Jobs (docs/api.md, "Jobs"): work that does not fit in one request. A job and its items' states in
// the table; each item's request and output in the bucket (lib/jobs/requests.ts: an HTML document
// may be 500 KB and a page's content 5 MB, more than an item of the table holds). All kept
// JOB_RETENTION_DAYS.

export type JobEndpoint = "screenshot" | "html-to-screenshot" | "content" | "animate";
type ItemStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export type JobStatus = "queued" | "running" | "completed" | "cancelled";

/** An item as stored (its lease: lib/jobs/attempt.ts). */
export interface JobItem extends Lease {
  readonly index: number;
  readonly status: ItemStatus;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** Its price (micro-USD), held with the job's when it was submitted (absent on jobs from before holds). */
  readonly price?: number;
  /** Its share of the job's hold went back to the balance (it ended without a charge). */
  readonly holdReleased?: boolean;
  /** The key its request's secrets open with (lib/api/secrets.ts, sealRequest), deleted when it ends: its secrets with it. */
  readonly secretKey?: string;
  /** What it was charged (micro-USD; 0 when refunded or never charged). */
  readonly charged?: number;
  /** The result's summary (the synchronous answer's small fields); the whole answer is at `resultKey`. */
  readonly result?: Record<string, unknown>;
  /** An output's key in the bucket (an image, a PDF, a content answer's JSON), linked when the job is read. */
  readonly outputKey?: string;
  /** A content snapshot's image, linked when the job is read. */
  readonly imageKey?: string;
  /** The logs its page recorded (`capture`), by kind, linked into the result when the job is read. */
  readonly logKeys?: Readonly<Record<string, string>>;
  readonly error?: { code: string; message: string };
  /** Its output PUT to the customer's URL (`upload`): the status it got, or why it got none. */
  readonly upload?: { readonly status: "uploaded" | "failed"; readonly http_status?: number; readonly error?: string };
}

export interface Job {
  readonly id: string;
  readonly accountId: string;
  readonly endpoint: JobEndpoint;
  readonly createdAt: string;
  readonly count: number;
  /** Its items' price was held when it was submitted (lib/billing/holds.ts): each item is charged from the hold. */
  readonly hold?: boolean;
  /** Set by DELETE: what had not started is not started. */
  readonly cancelledAt?: string;
  /** Where its webhooks go (lib/jobs/webhooks.ts), and whether each item's end is one too. */
  readonly webhookUrl?: string;
  readonly webhookEvents?: readonly "item"[];
  /** The items that have ended, noted as each does when the job has a webhook (lib/jobs/events.ts, announce). */
  readonly endedItems?: ReadonlySet<number>;
}

const JOB_ID = /^job_[A-Za-z0-9_-]{22}$/;
const isJobId = (id: string) => JOB_ID.test(id);

/** A new job's id. */
export const newJobId = () => `job_${randomBytes(16).toString("base64url").slice(0, 22)}`;

const expiresAt = (from: number) => Math.floor(from / 1000) + JOB_RETENTION_DAYS * 86_400;

/**
 * Records job `id` of `count` items for `accountId` (their requests already stored: lib/jobs/requests.ts):
 * its items (queued), then the job and its line in the account's list. Returns the job and its items.
 */
export async function createJob(
  id: string,
  accountId: string,
  endpoint: JobEndpoint,
  requests: readonly { price: number; timeout: number; request: unknown; secretKey?: string | undefined }[],
  webhook: Pick<Job, "webhookUrl" | "webhookEvents"> = {},
  now = Date.now(),
): Promise<{ job: Job; items: JobItem[] }> {
  const createdAt = new Date(now).toISOString();
  const job: Job = { id, accountId, endpoint, createdAt, count: requests.length, hold: true, ...webhook };
  const expires = expiresAt(now);
  // Each item with its price (held), its page-load limit, and its request unless that is in the bucket: what its message is made of when it is sent (lib/jobs/feed.ts).
  const items = requests.map(({ price, timeout, request, secretKey }, index) => ({
    ...jobItemKey(id, index),
    index,
    status: "queued",
    price,
    timeout,
    ...(secretKey ? { secretKey } : {}),
    ...(travelsInMessage(request) ? { request } : {}),
    expiresAt: expires,
  }));
  // The items first, the job last: a job that is read exists whole.
  for (let start = 0; start < items.length; start += 25) {
    let unprocessed: Record<string, unknown>[] | undefined = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
    while (unprocessed?.length) {
      const written = await documents.send(new BatchWriteCommand({ RequestItems: { [config.TABLE_NAME]: unprocessed } }));
      unprocessed = written.UnprocessedItems?.[config.TABLE_NAME] as Record<string, unknown>[] | undefined;
    }
  }
  await documents.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: { TableName: config.TABLE_NAME, Item: { ...jobKey(id), ...job, sent: 0, expiresAt: expires }, ConditionExpression: "attribute_not_exists(pk)" },
        },
        { Put: { TableName: config.TABLE_NAME, Item: { ...accountJobKey(accountId, createdAt, id), jobId: id, expiresAt: expires } } },
        { Put: { TableName: config.TABLE_NAME, Item: { ...feedKey(accountId, createdAt, id), jobId: id, accountId } } },
      ],
    }),
  );
  return { job, items: items.map(({ index, price }) => ({ index, status: "queued", price })) };
}

/** The job `id` with its items, in order; null when there is none (or it has expired). */
export async function readJob(id: string): Promise<{ job: Job; items: JobItem[] } | null> {
  const job = isJobId(id) ? await getJob(id) : null;
  if (!job) return null;
  return { job, items: await jobRows<JobItem>(id, JOB_ITEM_PREFIX) };
}

/** Every row of job `id` whose sort key starts with `prefix` (its items, its webhook events), in key order. */
const jobRows = <T>(id: string, prefix: string): Promise<T[]> => queryAll<T>(jobKey(id).pk, prefix);

/** The newest `limit` jobs of an account, newest first. */
export async function listJobs(accountId: string, limit: number): Promise<string[]> {
  const page = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :jobs)",
      ExpressionAttributeValues: { ":pk": `ACCT#${accountId}`, ":jobs": ACCOUNT_JOB_PREFIX },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (page.Items ?? []).map((item) => item.jobId as string);
}

/**
 * A job's status, from its items: cancelled once asked, nothing runs and something was cancelled
 * (a job asked after it had ended stays completed), completed once every item has ended.
 */
export function jobStatus(job: Job, items: readonly JobItem[]): JobStatus {
  if (items.some((item) => item.status === "running")) return "running";
  if (job.cancelledAt && items.some((item) => item.status === "cancelled")) return "cancelled";
  if (items.every((item) => item.status === "queued")) return "queued";
  return items.some((item) => item.status === "queued") ? "running" : "completed";
}

/**
 * Cancels job `id`: marks it cancelled and every item not started cancelled, each giving its share
 * of the job's hold back to the balance in the same write. Returns how many items it cancelled.
 */
export async function cancelJob(job: Job, items: readonly JobItem[], now = Date.now()): Promise<number> {
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: jobKey(job.id),
      UpdateExpression: "SET cancelledAt = if_not_exists(cancelledAt, :now)",
      ExpressionAttributeValues: { ":now": new Date(now).toISOString() },
    }),
  );
  let cancelled = 0;
  for (const item of items.filter((i) => i.status === "queued")) {
    const cancel = {
      Update: {
        TableName: config.TABLE_NAME,
        Key: jobItemKey(job.id, item.index),
        UpdateExpression: "SET #status = :cancelled, finishedAt = :now REMOVE secretKey",
        ConditionExpression: "#status = :queued",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":cancelled": "cancelled", ":queued": "queued", ":now": new Date(now).toISOString() },
      },
    };
    // A condition that fails: started meanwhile, it runs to its end.
    const done =
      job.hold && item.price
        ? await releaseHold(job.accountId, job.id, item.price, [cancel])
        : await conditionHeld(documents.send(new UpdateCommand(cancel.Update)));
    if (done) cancelled++;
  }
  return cancelled;
}

/** Gives a running item's share of its job's hold back (it ends without a charge), once. */
export async function releaseItemHold(job: Job, item: JobItem): Promise<void> {
  if (!job.hold || !item.price) return;
  await releaseHold(job.accountId, job.id, item.price, [
    {
      Update: {
        TableName: config.TABLE_NAME,
        Key: jobItemKey(job.id, item.index),
        UpdateExpression: "SET holdReleased = :yes",
        ConditionExpression: "attribute_not_exists(holdReleased)",
        ExpressionAttributeValues: { ":yes": true },
      },
    },
  ]);
}

/** Item `index` of `job` as a piece of the workers' work (lib/jobs/attempt.ts): charged under `<job id>.<index>`. */
export const itemPiece = (job: Pick<Job, "id" | "accountId">, index: number): Piece => ({
  kind: "item",
  accountId: job.accountId,
  owner: job.id,
  id: index,
  key: jobItemKey(job.id, index),
  requestId: `${job.id}.${index}`,
});

/**
 * Takes item `index` of `job` for a worker until `leaseUntil` (lib/jobs/attempt.ts, takeLease): a
 * queued item, or a running one whose worker's lease has ended (it died). Returns the item as taken,
 * or null when it is not to be run (ended, cancelled, or held by a live worker).
 */
export const startItem = (
  job: Pick<Job, "id" | "accountId">,
  index: number,
  leaseUntil: number,
  now = Date.now(),
  receives = 1,
  slot?: Lease["slot"],
): Promise<JobItem | null> => takeLease<JobItem>(itemPiece(job, index), leaseUntil, receives, slot, now);

/** Ends a running item with its outcome (only if it is still running: a second worker's late end changes nothing), its secrets deleted. */
export async function finishItem(
  jobId: string,
  index: number,
  outcome: Pick<JobItem, "charged" | "result" | "outputKey" | "imageKey" | "logKeys" | "error" | "upload"> & { status: "succeeded" | "failed" },
  now = Date.now(),
): Promise<void> {
  const { set, names, values } = setClause({ ...outcome, finishedAt: new Date(now).toISOString() });
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: jobItemKey(jobId, index),
      UpdateExpression: `${set} REMOVE leaseUntil, secretKey`,
      ConditionExpression: "#status = :running",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ...values, ":running": "running" },
    }),
  );
}

/** The job `id` alone, or null. */
export async function getJob(id: string): Promise<Job | null> {
  const found = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: jobKey(id), ConsistentRead: true }));
  return (found.Item as Job | undefined) ?? null;
}

/**
 * Notes that items `indices` of job `id` have ended (a set: noting one twice changes nothing);
 * the job as it now is, or null when it is gone.
 */
export async function noteEnded(id: string, indices: readonly number[]): Promise<Job | null> {
  if (!indices.length) return getJob(id);
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: jobKey(id),
        UpdateExpression: "ADD endedItems :ended",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":ended": new Set(indices) },
        ReturnValues: "ALL_NEW",
      }),
    );
    return Attributes as Job;
  } catch (error) {
    ignoreFailedCondition(error);
    return null;
  }
}

/** A hold whose job cannot be found is left this long (its job is still being recorded, or its TTL has not removed the hold's items yet). */
const ORPHAN_HOLD_MS = 10 * 60_000;

/**
 * The reconciler's round of job holds: a hold whose job has ended (no item queued or running) or is
 * gone gives back what it still holds (nothing, when every item was charged or gave its share back)
 * and is removed. Returns what it gave back, in micro-USD.
 */
export async function reconcileHolds(now: number): Promise<number> {
  let released = 0;
  for (const hold of await allHolds()) {
    // A crawl's hold is its own reconciler's (lib/crawl/store.ts, reconcileCrawls).
    if (hold.kind === "crawl") continue;
    const found = await readJob(hold.jobId);
    const ended = found
      ? found.items.every((item) => item.status !== "queued" && item.status !== "running")
      : now - Date.parse(hold.createdAt) > ORPHAN_HOLD_MS;
    if (ended && (await closeHold(hold))) released += hold.held;
  }
  return released;
}
