import { createHash } from "node:crypto";
import { GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { remember } from "../lru.js";
import { type Account, getAccount, hashApiKey, KEY_PATTERN, keyEnds, newApiKey } from "./accounts.js";
import { conditionHeld, documents, ignoreFailedCondition, transact, transactionConditionFailed } from "./dynamodb.js";
import { unauthorized } from "./errors.js";
import { countChange, countRefused } from "./key-count.js";
import { API_KEY_PREFIX, accountApiKeyKey, accountKey, apiKeyKey } from "./keys.js";

// An account's API keys (docs/api.md, "Keys and accounts"): up to MAX_API_KEYS at once, each shown
// once when it is made, listed by its id, name and ends, revoked by its id. Only a key's SHA-256 is
// stored. The last key cannot be revoked: an account must keep a way in.

/** How many API keys an account may hold at once. */
export const MAX_API_KEYS = 10;

/** An API key as its account lists it. */
export interface ApiKey {
  readonly id: string;
  readonly name: string | null;
  /** The key's first 13 characters ("shl_live_" and 4) and its last 4. */
  readonly start: string;
  readonly end: string;
  readonly createdAt: string;
  /** When it last authenticated a request (to the minute), or null. */
  readonly lastUsedAt: string | null;
}

type ListItem = { keyId: string; keyHash: string; name: string | null; start: string; end: string; createdAt: string; lastUsedAt?: string };

const listed = (item: ListItem): ApiKey => ({
  id: item.keyId,
  name: item.name ?? null,
  start: item.start,
  end: item.end,
  createdAt: item.createdAt,
  lastUsedAt: item.lastUsedAt ?? null,
});

async function listItems(accountId: string): Promise<ListItem[]> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `ACCT#${accountId}`, ":prefix": API_KEY_PREFIX },
      ConsistentRead: true,
    }),
  );
  return (Items as ListItem[]).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** The account's API keys, oldest first. */
export const listApiKeys = async (accountId: string): Promise<ApiKey[]> => (await listItems(accountId)).map(listed);

const heldKeys = async (accountId: string) => (await listItems(accountId)).length;

/** Makes a new API key for `accountId`, named `name`: its listing and, this once, the key. 409 past MAX_API_KEYS. */
export async function createApiKey(accountId: string, name: string | null): Promise<ApiKey & { readonly apiKey: string }> {
  const tooMany = () => new AppError("TOO_MANY_API_KEYS", `An account holds at most ${MAX_API_KEYS} API keys; revoke one first.`);
  const held = await heldKeys(accountId);
  if (held >= MAX_API_KEYS) throw tooMany();
  const createdAt = new Date().toISOString();
  const { apiKey, keyId, items } = newApiKey(accountId, name, createdAt);
  try {
    await transact({
      TransactItems: [
        { Put: { TableName: config.TABLE_NAME, Item: items[0], ConditionExpression: "attribute_not_exists(pk)" } },
        { Put: { TableName: config.TABLE_NAME, Item: items[1] } },
        countChange(accountId, "apiKeys", held, { add: 1, bound: MAX_API_KEYS }),
      ],
    });
  } catch (error) {
    // Others got there first: the account is full.
    if (countRefused(error, 2)) throw tooMany();
    throw error;
  }
  return { id: keyId, name, ...keyEnds(apiKey), createdAt, lastUsedAt: null, apiKey };
}

/**
 * Revokes the account's key `keyId`: it authenticates nothing from then on (a warm instance that
 * knew it forgets it within AUTH_CACHE_MS). 404 when the account has no such key; 409 for its last one.
 */
export async function revokeApiKey(accountId: string, keyId: string): Promise<void> {
  const last = () => new AppError("LAST_API_KEY", "This is the account's last API key: make another before you revoke it.");
  const missing = () => new AppError("NOT_FOUND", `This account has no API key ${keyId}.`);
  const items = await listItems(accountId);
  const key = items.find((item) => item.keyId === keyId);
  if (!key) throw missing();
  if (items.length <= 1) throw last();
  try {
    await transact({
      TransactItems: [
        {
          Delete: {
            TableName: config.TABLE_NAME,
            Key: apiKeyKey(key.keyHash),
            ConditionExpression: "accountId = :accountId",
            ExpressionAttributeValues: { ":accountId": accountId },
          },
        },
        { Delete: { TableName: config.TABLE_NAME, Key: accountApiKeyKey(accountId, keyId), ConditionExpression: "attribute_exists(pk)" } },
        // Two revocations at once cannot take the last two: the count stays at one or more.
        countChange(accountId, "apiKeys", items.length, { add: -1, bound: 1 }),
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 0) || transactionConditionFailed(error, 1)) throw missing();
    if (countRefused(error, 2)) throw last();
    throw error;
  }
}

/**
 * The keys an operator names (`npm run admin -- revoke-key`): the whole key, or how lists show it,
 * its start ("shl_live_" and 4 characters) with or without "…" and its last 4. Reads the whole
 * table (an operator's tool, never a request's).
 */
export async function findApiKeys(named: string): Promise<{ accountId: string; key: ApiKey }[]> {
  if (KEY_PATTERN.test(named)) {
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: apiKeyKey(hashApiKey(named)), ConsistentRead: true }));
    if (!Item?.keyId) return [];
    const key = (await listApiKeys(Item.accountId as string)).find((k) => k.id === Item.keyId);
    return key ? [{ accountId: Item.accountId as string, key }] : [];
  }
  const [, start, end] = /^(shl_live_[A-Za-z0-9_-]{4})(?:(?:…|\.\.\.)([A-Za-z0-9_-]{4}))?$/.exec(named) ?? [];
  if (!start) return [];
  const found: { accountId: string; key: ApiKey }[] = [];
  let from: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({
        TableName: config.TABLE_NAME,
        FilterExpression: "begins_with(sk, :prefix) AND #start = :start",
        ExpressionAttributeNames: { "#start": "start" },
        ExpressionAttributeValues: { ":prefix": API_KEY_PREFIX, ":start": start },
        ExclusiveStartKey: from,
      }),
    );
    for (const item of (page.Items ?? []) as (ListItem & { pk: string })[])
      if (end === undefined || item.end === end) found.push({ accountId: item.pk.slice("ACCT#".length), key: listed(item) });
    from = page.LastEvaluatedKey;
  } while (from);
  return found;
}

// Keys seen in the last few seconds, per instance: a busy key then costs no reads at all. Only
// settings come from here (rate limit, flags); balances are always read or conditioned afresh.
/** How long an instance trusts a key it has checked: a revoked key stops working within this. */
export const AUTH_CACHE_MS = 5_000;
const AUTH_CACHE_SIZE = 1_000;
const authCache = new Map<string, { account: Account; at: number }>();

/** When this instance last wrote a key's last use; at most once a minute. */
const LAST_USE_EVERY_MS = 60_000;
const lastUseWritten = new Map<string, number>();

/**
 * The account an `Authorization: Bearer <key>` header belongs to; 401 for anything else. Settings
 * changed by an operator (rate limit) and revocations reach a warm instance within AUTH_CACHE_MS.
 */
export async function authenticate(authorization: string): Promise<Account> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthorized('The Authorization header must be "Bearer <API key>".');
  const key = match[1]!;
  if (!KEY_PATTERN.test(key)) throw unauthorized("This API key is not valid.");
  const keyHash = hashApiKey(key);
  const cached = authCache.get(keyHash);
  if (cached && Date.now() - cached.at < AUTH_CACHE_MS) return cached.account;
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: apiKeyKey(keyHash), ConsistentRead: true }));
  const stored = Item as { accountId: string; keyId?: string; createdAt: string } | undefined;
  const account = stored ? await getAccount(stored.accountId) : null;
  if (!stored || !account) throw unauthorized("This API key is not valid.");
  remember(authCache, keyHash, { account, at: Date.now() }, AUTH_CACHE_SIZE);
  // Nothing waits for a use's note; a key from before keys were listed is listed before its request
  // goes on (that request may be the one that makes another key, and counts the account's keys).
  const noting = noteUse(key, keyHash, stored).catch(() => undefined);
  if (!stored.keyId) await noting;
  return account;
}

/** Notes a key's use in its account's list (at most once a minute per instance); lists a key made before lists existed. */
async function noteUse(key: string, keyHash: string, stored: { accountId: string; keyId?: string; createdAt: string }): Promise<void> {
  const now = Date.now();
  const lastUsedAt = new Date(now).toISOString().slice(0, 16);
  if (stored.keyId) {
    if (now - (lastUseWritten.get(keyHash) ?? 0) < LAST_USE_EVERY_MS) return;
    remember(lastUseWritten, keyHash, now, AUTH_CACHE_SIZE);
    await documents
      .send(
        new UpdateCommand({
          TableName: config.TABLE_NAME,
          Key: accountApiKeyKey(stored.accountId, stored.keyId),
          UpdateExpression: "SET lastUsedAt = :at",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":at": lastUsedAt },
        }),
      )
      .catch(ignoreFailedCondition);
    return;
  }
  // A key made at signup before keys were listed: it takes its place in the list now, under an id
  // made from its hash (whichever instance sees it first writes the same), and the account's key
  // count, if it keeps one, counts it. Single writes, no transaction: each is safe to repeat.
  const keyId = `key_${createHash("sha256").update(keyHash).digest("base64url").slice(0, 12)}`;
  const listedNow = await conditionHeld(
    documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...accountApiKeyKey(stored.accountId, keyId), keyId, keyHash, name: null, ...keyEnds(key), createdAt: stored.createdAt, lastUsedAt },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: apiKeyKey(keyHash),
      UpdateExpression: "SET keyId = :keyId",
      ExpressionAttributeValues: { ":keyId": keyId },
    }),
  );
  if (listedNow)
    await documents
      .send(
        new UpdateCommand({
          TableName: config.TABLE_NAME,
          Key: accountKey(stored.accountId),
          UpdateExpression: "SET apiKeys = apiKeys + :one",
          ConditionExpression: "attribute_exists(apiKeys)",
          ExpressionAttributeValues: { ":one": 1 },
        }),
      )
      .catch(ignoreFailedCondition);
}
