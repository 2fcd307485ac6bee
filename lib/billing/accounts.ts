import { createHash, randomBytes, randomUUID } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { log } from "../log.js";
import { documents, transact, transactionConditionFailed } from "./dynamodb.js";
import { canonicalEmail, isDisposable, isRelay } from "./emails.js";
import { accountApiKeyKey, accountKey, apiKeyKey, emailKey, verifyTokenKey } from "./keys.js";
import { type TransactItem, usageItem } from "./ledger.js";
import { sendVerificationMail } from "./mail.js";
import { SIGNUP_BONUS_MICRO_USD } from "./money.js";
import { enforceRateLimit } from "./rate-limit.js";

/** An account as stored. */
export interface Account {
  readonly accountId: string;
  readonly email: string;
  /** What may be spent now (micro-USD): what jobs hold is out of it. */
  readonly balance: number;
  /** What jobs hold of the account's money until their items are charged or give it back (lib/billing/holds.ts). */
  readonly held: number;
  readonly totalSpent: number;
  readonly autoTopupEnabled: boolean;
  /** With auto-topup active, the balance (micro-USD) under which a charge launches a pull; else null. */
  readonly autoTopupThreshold: number | null;
  /** Requests per second for this account; null: the service default (RATE_LIMIT_PER_SECOND). */
  readonly rateLimitPerSecond: number | null;
  /** Renders this account may have in flight at once; null: the service default (RENDERS_IN_FLIGHT, lib/routes.ts). */
  readonly rendersInFlight: number | null;
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
  held?: number;
  totalSpent: number;
  autoTopupEnabled: boolean;
  autoTopupThreshold?: number;
  rateLimitPerSecond?: number;
  rendersInFlight?: number;
  createdAt: string;
};

const toAccount = (item: AccountItem): Account => ({
  accountId: item.accountId,
  email: item.email,
  balance: item.balance,
  held: item.held ?? 0,
  totalSpent: item.totalSpent,
  // On with its threshold only: the bare flag of accounts from before auto-topup pulled was a promise nothing kept.
  autoTopupEnabled: item.autoTopupEnabled && item.autoTopupThreshold !== undefined,
  autoTopupThreshold: item.autoTopupEnabled ? (item.autoTopupThreshold ?? null) : null,
  rateLimitPerSecond: item.rateLimitPerSecond ?? null,
  rendersInFlight: item.rendersInFlight ?? null,
  createdAt: item.createdAt,
});

/** What became of a new account's signup bonus: credited now, credited when the mailed link is followed, or none. */
export type SignupBonus = "credited" | "pending_verification" | "none";

/** A verification link works this long. */
const VERIFY_LINK_DAYS = 7;
/** Verification mails one address receives in a day at most (more signups of it get none, and answer the same). */
const VERIFY_MAILS_PER_DAY = 3;

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * Creates an account with a new API key. Every signup makes an account, whether or not its address
 * has signed up before, and answers alike: the key works at once for paid credit. The signup bonus
 * is one per person (the address in its canonical form, lib/billing/emails.ts; none at
 * disposable-mail domains), reserved by the item EMAIL#<canonical> in the transaction that credits
 * it. With SIGNUP_VERIFICATION off that is this transaction; with it on, no bonus is credited here:
 * a link is mailed (`linkTo` makes it from the token) and verifyEmail credits it. The key is
 * returned to be shown once; only its hash is stored.
 */
export async function createAccount(
  email: string,
  requestId: string,
  linkTo: (token: string) => string = (token) => token,
): Promise<{ apiKey: string; account: Account; bonus: SignupBonus }> {
  const canonical = canonicalEmail(email);
  // Disposable and privacy-relay addresses get the account, not the bonus: either hands out addresses without end.
  const eligible = !isDisposable(canonical) && !isRelay(canonical);
  const accountId = randomUUID();
  const now = new Date();
  const key = newApiKey(accountId, null, now.toISOString());
  const account: AccountItem = { accountId, email: email.trim(), balance: 0, totalSpent: 0, autoTopupEnabled: false, createdAt: now.toISOString() };
  const write = (bonus: number, also: TransactItem[] = []) =>
    transact({
      TransactItems: [
        ...also,
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: { ...accountKey(accountId), ...account, balance: bonus, apiKeys: 1 },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        ...key.items.map((Item) => ({ Put: { TableName: config.TABLE_NAME, Item } })),
      ],
    });
  const created = (bonus: SignupBonus, balance = 0) => ({ apiKey: key.apiKey, account: toAccount({ ...account, balance }), bonus });

  if (config.SIGNUP_VERIFICATION === "on") {
    if (!eligible) {
      await write(0);
      return created("none");
    }
    // The link is mailed before anything is stored: a mail that cannot be sent leaves nothing behind,
    // and the signup can simply be tried again.
    const token = randomBytes(32).toString("base64url");
    const expiresAt = Math.floor(now.getTime() / 1000) + VERIFY_LINK_DAYS * 86_400;
    const mailed = await mailOnce(canonical, () => sendVerificationMail(account.email, linkTo(token)));
    await write(0, mailed ? [{ Put: { TableName: config.TABLE_NAME, Item: { ...verifyTokenKey(hashToken(token)), accountId, canonical, expiresAt } } }] : []);
    return created("pending_verification");
  }
  if (eligible) {
    try {
      await write(SIGNUP_BONUS_MICRO_USD, bonusItems(accountId, canonical, now, requestId));
      return created("credited", SIGNUP_BONUS_MICRO_USD);
    } catch (error) {
      // The address's bonus is taken (the one condition a fresh account id can fail): an account without one.
      if (!transactionConditionFailed(error, 0)) throw error;
    }
  }
  await write(0);
  return created("none");
}

/** Sends a verification mail for `canonical` unless it has had its mails for the day; whether it was sent. */
async function mailOnce(canonical: string, send: () => Promise<void>): Promise<boolean> {
  try {
    await enforceRateLimit(`verify-mail:${canonical}`, VERIFY_MAILS_PER_DAY, 86_400);
  } catch (error) {
    // Past the day's mails: no mail, and the same answer. Anything else (the table) fails the signup.
    if (!(error instanceof AppError && error.code === "RATE_LIMITED")) throw error;
    log.info("verification mail not sent: the address has had its mails for the day");
    return false;
  }
  try {
    await send();
  } catch (error) {
    throw new AppError("INTERNAL_ERROR", "The verification mail could not be sent, so no account was created. Try again in a minute.", { cause: error });
  }
  return true;
}

/** A signup bonus's items: the address's reservation (first: its condition is the one that can fail) and the usage entry. */
const bonusItems = (accountId: string, canonical: string, at: Date, requestId: string): TransactItem[] => [
  { Put: { TableName: config.TABLE_NAME, Item: { ...emailKey(canonical), accountId }, ConditionExpression: "attribute_not_exists(pk)" } },
  {
    Put: {
      TableName: config.TABLE_NAME,
      Item: usageItem(accountId, at, requestId, { kind: "bonus", endpoint: "signup", amount: SIGNUP_BONUS_MICRO_USD, status: "credited" }),
    },
  },
];

/** What following a verification link did: verified with the bonus, verified without (the address had had it), or nothing (unknown, used or expired). */
export type Verification = "credited" | "verified" | "invalid";

/**
 * Follows a verification link: once, within its lifetime. The account is marked verified and, unless
 * the address's bonus was already granted (to this account or another), credited with it, in the
 * transaction that spends the token.
 */
export async function verifyEmail(token: string, requestId: string): Promise<Verification> {
  const tokenKey = verifyTokenKey(hashToken(token));
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: tokenKey, ConsistentRead: true }));
  const now = new Date();
  if (!Item || (Item.expiresAt as number) * 1000 <= now.getTime()) return "invalid";
  const { accountId, canonical } = Item as { accountId: string; canonical: string };
  const write = (bonus: number, also: TransactItem[] = []) =>
    transact({
      TransactItems: [
        { Delete: { TableName: config.TABLE_NAME, Key: tokenKey, ConditionExpression: "attribute_exists(pk)" } },
        ...also,
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: accountKey(accountId),
            UpdateExpression: "SET emailVerifiedAt = :now, balance = balance + :bonus",
            ConditionExpression: "attribute_exists(pk)",
            ExpressionAttributeValues: { ":now": now.toISOString(), ":bonus": bonus },
          },
        },
      ],
    });
  const spent = (error: unknown) => transactionConditionFailed(error, 0);
  try {
    await write(SIGNUP_BONUS_MICRO_USD, bonusItems(accountId, canonical, now, requestId));
    return "credited";
  } catch (error) {
    if (spent(error)) return "invalid";
    if (!transactionConditionFailed(error, 1)) throw error;
  }
  try {
    await write(0);
    return "verified";
  } catch (error) {
    if (spent(error)) return "invalid";
    throw error;
  }
}

/** The account with this id, read consistently; null when there is none. */
export async function getAccount(accountId: string, signal?: AbortSignal): Promise<Account | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: accountKey(accountId), ConsistentRead: true }), {
    abortSignal: signal,
  });
  return Item ? toAccount(Item as AccountItem) : null;
}

/**
 * The account that received the address's signup bonus (the first to verify it; with verification
 * off, the first to sign up with it); null when none has. Other accounts may share the address.
 */
export async function findAccountByEmail(email: string): Promise<Account | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: emailKey(canonicalEmail(email)), ConsistentRead: true }));
  return Item ? getAccount((Item as { accountId: string }).accountId) : null;
}

/** Updates an account's settings (its rate limit and renders in flight: the operator's) and returns the account. */
export async function updateAccount(
  accountId: string,
  changes: { rateLimitPerSecond?: number; rendersInFlight?: number },
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
