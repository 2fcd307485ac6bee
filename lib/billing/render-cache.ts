import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents, ignoreFailedCondition } from "./dynamodb.js";
import { renderCacheKey } from "./keys.js";

// The render cache's index (docs/api.md, "Render cache"): one item per cached request, expiring by
// DynamoDB's TTL. It says where the output is (an S3 key) and what it is, or, while the first request
// renders it, who does and until when (a lease), so that concurrent misses render once.

/** A cached output as the index holds it: its object, what the answer says of it, when it was stored. */
export interface CacheEntry {
  readonly objectKey: string;
  /** What the answer says besides the bytes (lib/http builds the capture back from it). */
  readonly meta: Record<string, unknown>;
  /** Epoch ms. */
  readonly storedAt: number;
  readonly freshUntil: number;
}

/** What a lookup finds: the output, the right to render it, or another request rendering it until `leaseUntil`. */
export type CacheLookup =
  | { readonly kind: "hit"; readonly entry: CacheEntry }
  | { readonly kind: "lead" }
  | { readonly kind: "busy"; readonly leaseUntil: number };

/** The item as stored: `meta` as JSON text (it may hold nulls and nested values). */
type Item = Partial<Omit<CacheEntry, "meta">> & { state?: string; leaseUntil?: number; meta?: string };

const hitOf = (item: Item | undefined, now: number): CacheLookup | null =>
  item?.state === "READY" && item.freshUntil! > now
    ? { kind: "hit", entry: { objectKey: item.objectKey!, meta: JSON.parse(item.meta!), storedAt: item.storedAt!, freshUntil: item.freshUntil! } }
    : null;

/** The entry of `hash` if it is fresh, else null (a strongly consistent read: a follower polls with it). */
export async function readCacheEntry(hash: string): Promise<CacheEntry | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: renderCacheKey(hash), ConsistentRead: true }));
  const hit = hitOf(Item as Item | undefined, Date.now());
  return hit?.kind === "hit" ? hit.entry : null;
}

/**
 * Looks `hash` up: a fresh output is a hit; otherwise this request takes the lease to render it until
 * `leaseUntil` (epoch ms) unless another request holds one (busy). A stale entry or a lease whose
 * request died is taken over.
 */
export async function lookupRender(hash: string, requestId: string, leaseUntil: number): Promise<CacheLookup> {
  const now = Date.now();
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: renderCacheKey(hash), ConsistentRead: true }));
  const found = hitOf(Item as Item | undefined, now);
  if (found) return found;
  try {
    await documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...renderCacheKey(hash), state: "RENDERING", requestId, leaseUntil, expiresAt: Math.ceil(leaseUntil / 1000) + 60 },
        ConditionExpression: "attribute_not_exists(pk) OR (#state = :ready AND freshUntil <= :now) OR (#state = :rendering AND leaseUntil < :now)",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":ready": "READY", ":rendering": "RENDERING", ":now": now },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { kind: "lead" };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // Between the read and the write another request stored the output or took the lease.
    const old = error.Item as Record<string, { S?: string; N?: string }> | undefined;
    if (old?.state?.S === "READY") {
      const entry = await readCacheEntry(hash);
      if (entry) return { kind: "hit", entry };
    }
    return { kind: "busy", leaseUntil: Number(old?.leaseUntil?.N ?? now) };
  }
}

/** Records the output the lease holder stored, fresh for `ttlSeconds`; a lease taken over meanwhile is left to its new holder. */
export async function completeRender(hash: string, requestId: string, objectKey: string, meta: Record<string, unknown>, ttlSeconds: number): Promise<void> {
  const storedAt = Date.now();
  const freshUntil = storedAt + ttlSeconds * 1000;
  await documents
    .send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: renderCacheKey(hash),
        UpdateExpression:
          "SET #state = :ready, objectKey = :objectKey, meta = :meta, storedAt = :storedAt, freshUntil = :freshUntil, expiresAt = :expiresAt REMOVE leaseUntil, requestId",
        ConditionExpression: "requestId = :requestId",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: {
          ":ready": "READY",
          ":objectKey": objectKey,
          ":meta": JSON.stringify(meta),
          ":storedAt": storedAt,
          ":freshUntil": freshUntil,
          ":expiresAt": Math.ceil(freshUntil / 1000),
          ":requestId": requestId,
        },
      }),
    )
    .catch(ignoreFailedCondition);
}

/** Gives the lease up (the render failed): the next request renders. */
export async function releaseRender(hash: string, requestId: string): Promise<void> {
  await documents
    .send(
      new DeleteCommand({
        TableName: config.TABLE_NAME,
        Key: renderCacheKey(hash),
        ConditionExpression: "requestId = :requestId AND #state = :rendering",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":requestId": requestId, ":rendering": "RENDERING" },
      }),
    )
    .catch(ignoreFailedCondition);
}
