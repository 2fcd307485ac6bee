import { createHash, randomBytes, randomUUID } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { remember } from "../lru.js";
import { documents, transact, transactionConditionFailed } from "./dynamodb.js";
import { emailTaken, unauthorized } from "./errors.js";
import { accountKey, apiKeyKey, emailKey } from "./keys.js";
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
const KEY_PATTERN = /^shl_live_[A-Za-z0-9_-]{43}$/;

/** Emails are compared trimmed and lower-cased. */
const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The stored form of an API key: its SHA-256, hex. */
const hashApiKey = (apiKey: string) => createHash("sha256").update(apiKey).digest("hex");

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
 * Creates an account with the signup bonus and a new API key, in one transaction: the email is
 * reserved (one account and one bonus per address), the account created, the key's hash stored,
 * and the bonus written as a usage entry. Returns the key: it is shown once and never stored.
 */
export async function createAccount(email: string, requestId: string): Promise<{ apiKey: string; account: Account }> {
  const normalized = normalizeEmail(email);
  const accountId = randomUUID();
  const apiKey = `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  const now = new Date();
  const item: AccountItem = {
    accountId,
    email: normalized,
    balance: SIGNUP_BONUS_MICRO_USD,
    totalSpent: 0,
    autoTopupEnabled: false,
    createdAt: now.toISOString(),
  };
  try {
    await transact({
      TransactItems: [
        { Put: { TableName: config.TABLE_NAME, Item: { ...emailKey(normalized), accountId }, ConditionExpression: "attribute_not_exists(pk)" } },
        { Put: { TableName: config.TABLE_NAME, Item: { ...accountKey(accountId), ...item }, ConditionExpression: "attribute_not_exists(pk)" } },
        { Put: { TableName: config.TABLE_NAME, Item: { ...apiKeyKey(hashApiKey(apiKey)), accountId, createdAt: item.createdAt } } },
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: usageItem(accountId, now, requestId, { kind: "bonus", endpoint: "signup", amount: SIGNUP_BONUS_MICRO_USD, status: "credited" }),
          },
        },
      ],
    });
  } catch (error) {
    // The only condition that can fail on a fresh account id is the email reservation.
    if (transactionConditionFailed(error, 0)) throw emailTaken();
    throw error;
  }
  return { apiKey, account: toAccount(item) };
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
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: emailKey(normalizeEmail(email)), ConsistentRead: true }));
  return Item ? getAccount((Item as { accountId: string }).accountId) : null;
}

// Keys seen in the last few seconds, per container: a busy key then costs no reads at all. Only
// settings come from here (rate limit, flags); balances are always read or conditioned afresh.
const AUTH_CACHE_MS = 5_000;
const AUTH_CACHE_SIZE = 1_000;
const authCache = new Map<string, { account: Account; at: number }>();

/**
 * The account an `Authorization: Bearer <key>` header belongs to; 401 for anything else. Settings
 * changed by an operator (rate limit) reach a warm container within AUTH_CACHE_MS.
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
  const account = Item ? await getAccount((Item as { accountId: string }).accountId) : null;
  if (!account) throw unauthorized("This API key is not valid.");
  remember(authCache, keyHash, { account, at: Date.now() }, AUTH_CACHE_SIZE);
  return account;
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
