import { randomUUID } from "node:crypto";
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHeld, documents, ignoreFailedCondition, queryAll, queryPages, transactIf } from "../billing/dynamodb.js";
import { FEED_PARTITION, jobItemKey, jobKey } from "../billing/keys.js";
import { handSlot, holdSlotUntil, poolState, releaseSlot, takeSlotOf } from "../billing/slots.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { consumers } from "../routes.js";
import { type CheckMessage, enqueueItem, type ItemMessage, type PageMessage } from "./queue.js";

// Fair shares of the jobs' workers (docs/api.md, "Jobs"): an account has at most
// itemsInFlightPerAccount() items in flight (on the queue or running) at once, counted by slots of
// a pool of its own (lib/billing/slots.ts) whatever the queue does, and the queue delivers across
// accounts fairly (each item's message group is its account: SQS fair queues). A job's items are
// sent as its account's slots allow, in the order they were submitted across its jobs: when it is
// submitted, each time one of the account's items ends (its slot let go), and by the reconciler
// (a feed that a crash missed, a slot whose holder died and whose lease ran out). A job with items
// not yet sent has a FEED row, which goes once all are sent (or it was cancelled). A monitor's check
// waiting to run has a FEED row of its own, holding its message (lib/monitors), sent once like an item.
// A crawl's FEED row names a queue of its pages' messages (lib/crawl/store.ts), each sent once.

/** A slot is held this long at most (the item's wait on the queue and its run; a holder that died frees it then). */
const SLOT_LEASE_MS = 30 * 60_000;

/** The job workers that run at once: the job worker's reserved concurrency on AWS, RENDER_CONCURRENCY's pollers under npm run dev (dev/stack.ts). */
const poolSize = () => {
  const worker = consumers.find((c) => c.queue === "jobs")!;
  return config.AWS_LAMBDA_FUNCTION_NAME ? worker.concurrency : Math.min(worker.concurrency, config.RENDER_CONCURRENCY);
};

/** The most items of one account in flight at once: 5 of the 20 workers on AWS; under npm run dev, one fewer than its workers (3 of 4). */
export const itemsInFlightPerAccount = () => Math.max(1, Math.min(5, poolSize() - 1));

const slotPool = (accountId: string) => `items#${accountId}`;

/**
 * A queue of messages a FEED row names (a crawl's pages): its rows under `pk` whose sort keys begin
 * with `prefix`, oldest first; with `sent`, at most `sent.most` of them in flight at once, counted
 * by their markers (sort keys beginning with `sent.prefix`), so that one crawl never holds all its
 * account's slots.
 */
interface FeedQueue {
  readonly pk: string;
  readonly prefix: string;
  readonly sent?: { readonly prefix: string; readonly most: number };
}

/** A message waiting in a queue of its owner's (a crawl's pages: lib/crawl/store.ts), under `queue.pk`, sorted by its sort key. */
export interface QueuedMessage {
  readonly pk: string;
  readonly sk: string;
  readonly message: PageMessage;
  /** The sort key of a marker put in its place as it is sent, in the same write (its owner's count of what is in flight), removed by its runner. */
  readonly sent: string;
  /** Its TTL (epoch seconds), its marker's too. */
  readonly expiresAt?: number;
}

type FeedRow = { pk: string; sk: string; accountId: string } & (
  | { jobId: string; message?: undefined; queue?: undefined }
  | { message: CheckMessage; queue?: undefined }
  | { queue: FeedQueue; message?: undefined }
);

/** The FEED rows of every account. */
const waitingJobs = (): Promise<FeedRow[]> => queryAll<FeedRow>(FEED_PARTITION);

/** Rows of an account's FEED read at a time: a feed reads what its free slots can take, not the account's whole backlog. */
const FEED_PAGE = 10;

/** The FEED rows of `accountId`, oldest first, read a page at a time as they are used. */
async function* waiting(accountId: string): AsyncGenerator<FeedRow> {
  const pages = queryPages({
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": FEED_PARTITION, ":prefix": `${accountId}#` },
    ConsistentRead: true,
    Limit: FEED_PAGE,
  });
  for await (const page of pages) yield* (page.Items ?? []) as FeedRow[];
}

/** The index of the job's next item to send, claimed (each once), or null when all are sent or the job was cancelled or is gone. */
async function claimNext(jobId: string): Promise<number | null> {
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: jobKey(jobId),
        UpdateExpression: "SET sent = sent + :one",
        ConditionExpression: "attribute_exists(pk) AND sent < #count AND attribute_not_exists(cancelledAt)",
        ExpressionAttributeNames: { "#count": "count" },
        ExpressionAttributeValues: { ":one": 1 },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    return Number(Attributes!.sent) - 1;
  } catch (error) {
    ignoreFailedCondition(error);
    return null;
  }
}

/**
 * Sends `accountId`'s waiting items while its slots allow, oldest job first, reading its FEED a page
 * at a time (a full share reads one page). Returns how many it sent. Safe to run anywhere at once:
 * each slot and each item is claimed by one conditional write.
 */
export async function feed(accountId: string, now = Date.now(), freed?: Slot): Promise<number> {
  const slots = slotTaker(accountId, now, freed);
  try {
    // A full share reads its slots, not its FEED.
    return (await slots.anyFree()) ? await send(accountId, now, slots) : 0;
  } finally {
    await slots.letGoOfFreed();
  }
}

type Slot = NonNullable<ItemMessage["slot"]>;

/**
 * Takes the slots of `accountId`'s pool for a feed: `freed` first (an item that ended hands its slot
 * to the next, one write), then those one read of the pool finds free, each taken by a conditional
 * write; none tried once they are used up (a full share costs one read, not a failed write a slot).
 */
function slotTaker(accountId: string, now: number, freed?: Slot) {
  let handed = freed;
  let free: number[] | null = null;
  const pool = slotPool(accountId);
  const lookedUp = async () => {
    free ??= (await poolState(pool, itemsInFlightPerAccount())).free;
    return free;
  };
  return {
    anyFree: async () => handed !== undefined || (await lookedUp()).length > 0,
    async take(holder: string): Promise<number | null> {
      if (handed) {
        const { index, holder: from } = handed;
        handed = undefined;
        if (await handSlot(pool, index, from, holder, now + SLOT_LEASE_MS)) return index;
      }
      const left = await lookedUp();
      while (left.length) {
        const index = await takeSlotOf(pool, [left.shift()!], holder, now + SLOT_LEASE_MS);
        if (index !== null) return index;
      }
      return null;
    },
    /** Lets go of slot `index` this feed took and did not use: free again, it may be taken again in this feed. */
    async letGo(index: number, holder: string): Promise<void> {
      await releaseSlot(pool, index, holder);
      free?.push(index);
    },
    /** Lets go of the freed slot when nothing was sent in it. */
    letGoOfFreed: async () => {
      if (handed) await releaseSlot(pool, handed.index, handed.holder);
    },
  };
}

type Slots = ReturnType<typeof slotTaker>;

/** Sends `accountId`'s waiting messages in the slots `slots` gives. */
async function send(accountId: string, now: number, slots: Slots): Promise<number> {
  let sent = 0;
  for await (const row of waiting(accountId)) {
    if (row.queue) {
      const { sent: fromQueue, full } = await feedQueue(row.queue, slots, now);
      sent += fromQueue;
      if (full) return sent;
      continue;
    }
    if (row.message) {
      const holder = randomUUID();
      const slot = await slots.take(holder);
      if (slot === null) return sent;
      // Claimed by deleting its row: sent once, however many feeds run at once.
      const claimed = await conditionHeld(
        documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sk }, ConditionExpression: "attribute_exists(pk)" })),
      );
      if (claimed) {
        try {
          await enqueueItem({ ...row.message, slot: { index: slot, holder } });
          sent++;
          continue;
        } catch (error) {
          // Not queued: it waits again, for the next feed.
          await documents.send(new PutCommand({ TableName: config.TABLE_NAME, Item: row }));
          await slots.letGo(slot, holder);
          throw error;
        }
      }
      await slots.letGo(slot, holder);
      continue;
    }
    for (;;) {
      const holder = randomUUID();
      const slot = await slots.take(holder);
      if (slot === null) return sent;
      const index = await claimNext(row.jobId);
      if (index === null) {
        await slots.letGo(slot, holder);
        await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sk } }));
        break;
      }
      const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: jobItemKey(row.jobId, index), ConsistentRead: true }));
      const message: ItemMessage = {
        jobId: row.jobId,
        index,
        accountId,
        timeout: Number(Item?.timeout ?? 30),
        slot: { index: slot, holder },
        ...(Item?.request !== undefined ? { request: Item.request } : {}),
      };
      try {
        await enqueueItem(message);
      } catch (error) {
        // Not queued: the slot goes back, and so does the claim while no later item was claimed
        // (else the item waits, queued, until its job is cancelled or expires: logged for an operator).
        await slots.letGo(slot, holder);
        const undone = await conditionHeld(
          documents.send(
            new UpdateCommand({
              TableName: config.TABLE_NAME,
              Key: jobKey(row.jobId),
              UpdateExpression: "SET sent = :index",
              ConditionExpression: "sent = :next",
              ExpressionAttributeValues: { ":index": index, ":next": index + 1 },
            }),
          ),
        );
        if (!undone) log.error("a job item could not be queued and stays unsent", { jobId: row.jobId, index, error: describeError(error) });
        throw error;
      }
      sent++;
    }
  }
  return sent;
}

/**
 * Sends the messages waiting in `queue` (a crawl's pages) while `accountId`'s slots and the queue's
 * own bound allow, oldest first, reading a page of them. `full` when the account's slots ran out.
 */
async function feedQueue(queue: FeedQueue, slots: Slots, now: number): Promise<{ sent: number; full: boolean }> {
  let sent = 0;
  const inQueue = (prefix: string, limit: number) =>
    documents.send(
      new QueryCommand({
        TableName: config.TABLE_NAME,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": queue.pk, ":prefix": prefix },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
  // Its messages in flight counted while its waiting ones are read.
  const [inFlight, { Items = [] }] = await Promise.all([queue.sent && inQueue(queue.sent.prefix, queue.sent.most), inQueue(queue.prefix, FEED_PAGE)]);
  const room = queue.sent ? queue.sent.most - (inFlight?.Items?.length ?? 0) : FEED_PAGE;
  for (const row of (Items as QueuedMessage[]).slice(0, Math.max(0, room))) {
    const holder = randomUUID();
    const slot = await slots.take(holder);
    if (slot === null) return { sent, full: true };
    const letGo = () => slots.letGo(slot, holder);
    // Claimed by moving its row to its marker: sent once, however many feeds run at once.
    const claimed = await transactIf({
      TransactItems: [
        { Delete: { TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sk }, ConditionExpression: "attribute_exists(pk)" } },
        { Put: { TableName: config.TABLE_NAME, Item: { pk: row.pk, sk: row.sent, at: now, ...(row.expiresAt ? { expiresAt: row.expiresAt } : {}) } } },
      ],
    });
    if (!claimed) {
      await letGo();
      continue;
    }
    try {
      await enqueueItem({ ...row.message, slot: { index: slot, holder } });
      sent++;
    } catch (error) {
      // Not queued: it waits again, for the next feed.
      await transactIf({
        TransactItems: [{ Put: { TableName: config.TABLE_NAME, Item: row } }, { Delete: { TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sent } } }],
      });
      await letGo();
      throw error;
    }
  }
  return { sent, full: false };
}

/** A failure's slot is held on at most this long (the worker's own limit). */
const MAX_HELD_ON_MS = 150_000;

/**
 * Lets go of the slot an item's (or a check's) message held (it ended, or it will not run), then
 * sends what its account has waiting. A failure refunded as the customer's (`heldOnMs`: how long it
 * ran) keeps its slot that long again: a refunded item costs nothing, but its worker's time still
 * counts in its account's share, so an account whose items all time out keeps at most half its
 * share of the workers busy (docs/api.md, "Fair shares"). The reconciler's feed sends what waits
 * once the slot's lease ends.
 */
export async function itemDone(message: Pick<PageMessage, "slot">, accountId: string, heldOnMs = 0, now = Date.now()): Promise<void> {
  if (message.slot && heldOnMs > 0) await holdSlotUntil(slotPool(accountId), message.slot.index, message.slot.holder, now + Math.min(heldOnMs, MAX_HELD_ON_MS));
  // Its slot goes to the account's next waiting message, if any (else it is let go).
  const freed = heldOnMs > 0 ? undefined : message.slot;
  await feed(accountId, now, freed).catch((error: unknown) =>
    log.error("feeding an account's job items failed; the reconciler will", { accountId, error: describeError(error) }),
  );
}

/** The reconciler's round: feeds every account with items waiting. Returns how many items it sent. */
export async function feedAll(now: number): Promise<number> {
  let sent = 0;
  for (const accountId of new Set((await waitingJobs()).map((row) => row.accountId))) sent += await feed(accountId, now);
  return sent;
}
