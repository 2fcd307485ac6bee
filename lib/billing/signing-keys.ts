import { randomBytes } from "node:crypto";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { documents, transact, transactionConditionFailed } from "./dynamodb.js";
import { countChange, countRefused } from "./key-count.js";
import { accountSigningKeyKey, SIGNING_KEY_PREFIX, signingKeyKey } from "./keys.js";

// Signing keys for signed links (docs/api.md, "Signed links"): an account creates a key and gets its
// secret once; a link signed with it (HMAC-SHA256) is charged to the account until the key is
// revoked. The secret must be kept to check signatures, so it is stored (DynamoDB encrypts it at
// rest); it is never listed or shown again.

/** How many signing keys an account may hold at once. */
const MAX_SIGNING_KEYS = 20;

/** A signing key as its account lists it. */
export interface SigningKey {
  readonly keyId: string;
  readonly createdAt: string;
  /** The most its links may be charged a UTC day, in cents; null: no limit but the balance. */
  readonly dailyLimitCents: number | null;
}

/** The account's signing keys now. */
const heldKeys = async (accountId: string) => (await listSigningKeys(accountId)).length;

/** Creates a signing key for `accountId` (with a daily limit, or none): its id and, this once, its secret. */
export async function createSigningKey(accountId: string, dailyLimitCents: number | null): Promise<SigningKey & { readonly secret: string }> {
  const tooMany = () => new AppError("TOO_MANY_SIGNING_KEYS", `An account holds at most ${MAX_SIGNING_KEYS} signing keys; revoke one first.`);
  const held = await heldKeys(accountId);
  if (held >= MAX_SIGNING_KEYS) throw tooMany();
  const keyId = `sk_${randomBytes(12).toString("base64url")}`;
  const secret = `sks_${randomBytes(32).toString("base64url")}`;
  const createdAt = new Date().toISOString();
  try {
    await transact({
      TransactItems: [
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: { ...signingKeyKey(keyId), accountId, secret, createdAt, dailyLimitCents },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        { Put: { TableName: config.TABLE_NAME, Item: { ...accountSigningKeyKey(accountId, keyId), keyId, createdAt, dailyLimitCents } } },
        countChange(accountId, "signingKeys", held, { add: 1, bound: MAX_SIGNING_KEYS }),
      ],
    });
  } catch (error) {
    // Others got there first: the account is full.
    if (countRefused(error, 2)) throw tooMany();
    throw error;
  }
  return { keyId, secret, createdAt, dailyLimitCents };
}

/** The account's signing keys, oldest first (no secrets). */
export async function listSigningKeys(accountId: string): Promise<SigningKey[]> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `ACCT#${accountId}`, ":prefix": SIGNING_KEY_PREFIX },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => ({ keyId: item.keyId as string, createdAt: item.createdAt as string, dailyLimitCents: limitOf(item) })).sort((a, b) =>
    a.createdAt.localeCompare(b.createdAt),
  );
}

/** Revokes the account's key `keyId`: links signed with it stop working at once. 404 when the account has no such key. */
export async function revokeSigningKey(accountId: string, keyId: string): Promise<void> {
  try {
    await transact({
      TransactItems: [
        {
          Delete: {
            TableName: config.TABLE_NAME,
            Key: signingKeyKey(keyId),
            ConditionExpression: "accountId = :accountId",
            ExpressionAttributeValues: { ":accountId": accountId },
          },
        },
        { Delete: { TableName: config.TABLE_NAME, Key: accountSigningKeyKey(accountId, keyId), ConditionExpression: "attribute_exists(pk)" } },
        countChange(accountId, "signingKeys", await heldKeys(accountId), { add: -1, bound: 0 }),
      ],
    });
  } catch (error) {
    // Either condition failing means the account has no such key (another account's, or none); any other cancellation is a failure.
    if (transactionConditionFailed(error, 0) || transactionConditionFailed(error, 1)) {
      throw new AppError("NOT_FOUND", `This account has no signing key ${keyId}.`);
    }
    throw error;
  }
}

/** A key's daily limit as stored (keys made before limits existed have none). */
const limitOf = (item: Record<string, unknown>): number | null => (typeof item.dailyLimitCents === "number" ? item.dailyLimitCents : null);

/** The account, secret and daily limit of the signing key `keyId`, or null when there is none (never created, or revoked). */
export async function signingSecretOf(
  keyId: string,
): Promise<{ readonly accountId: string; readonly secret: string; readonly dailyLimitCents: number | null } | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: signingKeyKey(keyId), ConsistentRead: true }));
  return Item ? { accountId: Item.accountId as string, secret: Item.secret as string, dailyLimitCents: limitOf(Item) } : null;
}
