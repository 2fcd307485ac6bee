import { randomInt } from "node:crypto";
import { QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { conditionHeld, documents, ignoreFailedCondition } from "./dynamodb.js";
import { slotKey } from "./keys.js";

// A bounded share of a function's instances, across all of them: at most `size` holders of a pool at
// once, each holding one slot item until it lets go or its lease ends (a holder that crashed frees
// its slot at its deadline). The MCP function takes one for each free tool call, so that free calls
// can never fill the pool its paid renders run in (docs/agents.md, "Capacity"); an account's job
// items in flight (lib/jobs/feed.ts) and its webhook attempts (lib/jobs/webhooks.ts)
// hold slots of pools of their own, so that no account fills the shared workers.

/** Runs `work` holding a slot of `pool` (`size` slots) until `leaseUntil` (epoch ms) at most; 429 when every slot is held. */
export async function inSlot<T>(pool: string, size: number, holder: string, leaseUntil: number, work: () => Promise<T>): Promise<T> {
  const index = await takeSlot(pool, size, holder, leaseUntil);
  if (index === null)
    throw new AppError("RATE_LIMITED", `All ${size} places for free calls here are taken: retry in a second, or call the REST route.`, {
      headers: { "Retry-After": "1" },
    });
  try {
    return await work();
  } finally {
    await releaseSlot(pool, index, holder).catch(() => undefined); // its lease ends it anyway
  }
}

/**
 * A slot is taken in at most this many conditional writes, whatever the pool's size: a pool this
 * small is tried whole; a larger one (an account whose renders in flight an operator raised) at
 * this many slots picked at random, so a refusal costs 16 writes, not the pool's size. A large pool
 * may then refuse with slots free: at 80% held, one request in 35 (0.8^16); at half, none to speak of.
 */
const MAX_TRIES = 16;

/** The slots of a pool of `size` to try, in order: all of a small pool from a random one on; MAX_TRIES of a large one, at random. */
function slotsToTry(size: number): number[] {
  const first = randomInt(size);
  if (size <= MAX_TRIES) return Array.from({ length: size }, (_, i) => (first + i) % size);
  const picked = new Set<number>([first]);
  while (picked.size < MAX_TRIES) picked.add(randomInt(size));
  return [...picked];
}

/** Takes a slot of `pool` (`size` slots) for `holder` until `leaseUntil`: its index, or null when the slots tried are held (slotsToTry). */
export const takeSlot = (pool: string, size: number, holder: string, leaseUntil: number): Promise<number | null> =>
  takeSlotOf(pool, slotsToTry(size), holder, leaseUntil);

/**
 * Takes the first of slots `indices` of `pool` that is free for `holder` until `leaseUntil`: its
 * index, or null when all of them are held (or the pool is closed: closeSlotsUntil).
 */
export async function takeSlotOf(pool: string, indices: readonly number[], holder: string, leaseUntil: number): Promise<number | null> {
  for (const index of indices) {
    const taken = await conditionHeld(
      documents.send(
        new UpdateCommand({
          TableName: config.TABLE_NAME,
          Key: slotKey(pool, index),
          // A slot's row goes a day after its last lease (a crawl's host pools are many, each used a while).
          UpdateExpression: "SET holder = :holder, leaseUntil = :until, expiresAt = :expires",
          // Its own holder may take it again: a retry of a write whose answer was lost takes the slot it already has.
          ConditionExpression:
            "(attribute_not_exists(holder) OR leaseUntil < :now OR holder = :holder) AND (attribute_not_exists(closedUntil) OR closedUntil < :now)",
          ExpressionAttributeValues: { ":holder": holder, ":until": leaseUntil, ":now": Date.now(), ":expires": Math.floor(leaseUntil / 1000) + 86_400 },
        }),
      ),
    );
    if (taken) return index;
  }
  return null;
}

/**
 * The slots of `pool` (`size` slots, a small pool) free now, in random order, and until when the
 * pool is closed (0: open): one read of the pool (a slot seen free may be taken by the time it is
 * tried: takeSlotOf decides).
 */
export async function poolState(pool: string, size: number): Promise<{ free: number[]; closedUntil: number }> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": slotKey(pool, 0).pk },
      ConsistentRead: true,
    }),
  );
  const now = Date.now();
  const held = new Set(Items.filter((item) => item.holder !== undefined && Number(item.leaseUntil) >= now).map((item) => Number(item.sk)));
  return { free: slotsToTry(size).filter((index) => !held.has(index)), closedUntil: Math.max(0, ...Items.map((item) => Number(item.closedUntil ?? 0))) };
}

/**
 * Closes `pool`'s `size` slots to new holders until `until` at least (a later close keeps the
 * later end); their holders keep them until they let go.
 */
export async function closeSlotsUntil(pool: string, size: number, until: number): Promise<void> {
  await Promise.all(
    Array.from({ length: size }, (_, index) =>
      documents
        .send(
          new UpdateCommand({
            TableName: config.TABLE_NAME,
            Key: slotKey(pool, index),
            UpdateExpression: "SET closedUntil = :until, expiresAt = :expires",
            ConditionExpression: "attribute_not_exists(closedUntil) OR closedUntil < :until",
            ExpressionAttributeValues: { ":until": until, ":expires": Math.floor(until / 1000) + 86_400 },
          }),
        )
        .catch(ignoreFailedCondition),
    ),
  );
}

/** Passes slot `index` of `pool` from holder `from` to holder `to`, until `leaseUntil`: false when `from` no longer holds it. */
export const handSlot = (pool: string, index: number, from: string, to: string, leaseUntil: number): Promise<boolean> =>
  conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: slotKey(pool, index),
        UpdateExpression: "SET holder = :to, leaseUntil = :until, expiresAt = :expires",
        ConditionExpression: "holder = :from",
        ExpressionAttributeValues: { ":from": from, ":to": to, ":until": leaseUntil, ":expires": Math.floor(leaseUntil / 1000) + 86_400 },
      }),
    ),
  );

/** Lets slot `index` of `pool` go, if `holder` still holds it. */
export async function releaseSlot(pool: string, index: number, holder: string): Promise<void> {
  await documents
    .send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: slotKey(pool, index),
        UpdateExpression: "REMOVE holder, leaseUntil",
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":holder": holder },
      }),
    )
    .catch(ignoreFailedCondition);
}

/** Keeps slot `index` of `pool` held by `holder` until `until` instead (it lets go then, by its lease), if `holder` still holds it. */
export async function holdSlotUntil(pool: string, index: number, holder: string, until: number): Promise<void> {
  await documents
    .send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: slotKey(pool, index),
        UpdateExpression: "SET leaseUntil = :until",
        ConditionExpression: "holder = :holder",
        ExpressionAttributeValues: { ":holder": holder, ":until": until },
      }),
    )
    .catch(ignoreFailedCondition);
}
