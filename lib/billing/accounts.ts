import { createHash, randomBytes, randomUUID } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents, transact, transactionConditionFailed } from "./dynamodb.js";
import { canonicalEmail, isDisposable } from "./emails.js";
import { emailTaken } from "./errors.js";
import { accountApiKeyKey, accountKey, apiKeyKey, emailKey } from "./keys.js";
import { usageItem } from "./ledger.js";
import { SIGNUP_BONUS_MICRO_USD } from "./money.js";

/** An account as stored. */
export interface Account {
  readonly accountId: string;
  readonly email: string;
  readonly balance: number;
  readonly totalSpent: number;
  readonly autoTopupEnabled: boolean;
  /** Requests per second for this account; null: the service default (RATE_LIMIT_PER_SECOND). */
  readonly rateLimitPerSecond: number | null;
  readonly createdAt: string;
}

const KEY_PREFIX = "shl_live_";
/** An API key as we make them: "shl_live_" and 32 random bytes in base64url. */
export const KEY_PATTERN = /^shl_live_[A-Za-z0-9_-]{43}$/;

/** The stored form of an API key: its SHA-256, hex. */
export const hashApiKey = (apiKey: string) => createHash("sha256").update(apiKey).digest("hex");

/** An API key's id (what lists and revocations name it by): "key_" and 9 random bytes. */
const newKeyId = () => `key_${randomBytes(9).toString("base64url")}`;

/** What lists show of a key: its first 13 characters ("shl_live_" and 4) and its last 4. */
export const keyEnds = (apiKey: string) => ({ start: apiKey.slice(0, 13), end: apiKey.slice(-4) });

/** A new API key for `accountId`: the key, and the two items that store it (by its hash, and in the account's list). */
export function newApiKey(accountId: string, name: string | null, createdAt: string) {
  const apiKey = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  const keyId = newKeyId();
  const keyHash = hashApiKey(apiKey);
  return {
    apiKey,
    keyId,
    items: [
      { ...apiKeyKey(keyHash), accountId, keyId, createdAt },
      { ...accountApiKeyKey(accountId, keyId), keyId, keyHash, name, ...keyEnds(apiKey), createdAt },
    ],
  };
}

type AccountItem = {
  accountId: string;
  email: string;
  balance: number;
  totalSpent: number;
  autoTopupEnabled: boolean;
  rateLimitPerSecond?: number;
  createdAt: string;
};

const toAccount = (item: AccountItem): Account => ({
  accountId: item.accountId,
  email: item.email,
  balance: item.balance,
  totalSpent: item.totalSpent,
  autoTopupEnabled: item.autoTopupEnabled,
  rateLimitPerSecond: item.rateLimitPerSecond ?? null,
  createdAt: item.createdAt,
});

/**
 * Creates an account with a new API key and, unless the address is at a disposable-mail domain, the
 * signup bonus, in one transaction: the address is reserved in its canonical form (one account and
 * one bonus per person: lib/billing/emails.ts), the account created, the key's hash stored, and the
 * bonus written as a usage entry. Returns the key: it is shown once and never stored.
 */
export async function createAccount(email: string, requestId: string): Promise<{ apiKey: string; account: Account }> {
  const canonical = canonicalEmail(email);
  const bonus = isDisposable(canonical) ? 0 : SIGNUP_BONUS_MICRO_USD;
  const accountId = randomUUID();
  const now = new Date();
  const key = newApiKey(accountId, null, now.toISOString());
  const item: AccountItem = {
    accountId,
    email: email.trim(),
    balance: bonus,
    totalSpent: 0,
    autoTopupEnabled: false,
    createdAt: now.toISOString(),
  };
  const [keyItem, listItem] = key.items;
  try {
    await transact({
      TransactItems: [
        { Put: { TableName: config.TABLE_NAME, Item: { ...emailKey(canonical), accountId }, ConditionExpression: "attribute_not_exists(pk)" } },
        { Put: { TableName: config.TABLE_NAME, Item: { ...accountKey(accountId), ...item, apiKeys: 1 }, ConditionExpression: "attribute_not_exists(pk)" } },
        { Put: { TableName: config.TABLE_NAME, Item: keyItem } },
        { Put: { TableName: config.TABLE_NAME, Item: listItem } },
        ...(bonus
          ? [
              {
                Put: {
                  TableName: config.TABLE_NAME,
                  Item: usageItem(accountId, now, requestId, { kind: "bonus", endpoint: "signup", amount: bonus, status: "credited" }),
                },
              },
            ]
          : []),
      ],
    });
  } catch (error) {
    // The only condition that can fail on a fresh account id is the email reservation.
    if (transactionConditionFailed(error, 0)) throw emailTaken();
    throw error;
  }
  return { apiKey: key.apiKey, account: toAccount(item) };
}

/** The account with this id, read consistently; null when there is none. */
export async function getAccount(accountId: string, signal?: AbortSignal): Promise<Account | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: accountKey(accountId), ConsistentRead: true }), {
    abortSignal: signal,
  });
  return Item ? toAccount(Item as AccountItem) : null;
}

/** The account that owns the email address; null when there is none. */
export async function findAccountByEmail(email: string): Promise<Account | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: emailKey(canonicalEmail(email)), ConsistentRead: true }));
  return Item ? getAccount((Item as { accountId: string }).accountId) : null;
}

/** Updates an account's settings (auto-topup flag, rate limit) and returns the account. */
export async function updateAccount(
  accountId: string,
  changes: { autoTopupEnabled?: boolean; rateLimitPerSecond?: number },
  signal?: AbortSignal,
): Promise<Account> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  for (const [field, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: accountKey(accountId),
      UpdateExpression: `SET ${sets.join(", ")}`,
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: "ALL_NEW",
    }),
    { abortSignal: signal },
  );
  return toAccount(Attributes as AccountItem);
}
