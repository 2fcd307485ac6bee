import { createHash } from "node:crypto";
import type { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents, transact, transactionConditionFailed } from "./dynamodb.js";
import { insufficientBalance } from "./errors.js";
import { accountKey, type TableKey, USAGE_PREFIX, usageKey } from "./keys.js";

// The ledger: every change of a balance is one DynamoDB transaction that moves the balance and
// writes (or updates) the usage entry explaining it, so the two can never disagree.

/** A charge that went through, needed to refund it. */
export interface Charge {
  readonly accountId: string;
  readonly amount: number;
  readonly entry: TableKey;
  readonly requestId: string;
}

/** A usage entry as the API shows it (docs/api.md, "Accounts and billing"). */
export interface UsageEntry {
  id: string;
  kind: "charge" | "topup" | "bonus";
  endpoint: string;
  amount_micro_usd: number;
  status: "charged" | "refunded" | "credited";
  created_at: string;
}

// DynamoDB's idempotency token (at most 36 characters): the same request id and purpose always give
// the same token, so a retried invocation is applied once (within DynamoDB's 10-minute window).
const token = (requestId: string, purpose: string) => createHash("sha256").update(`${purpose}:${requestId}`).digest("base64url").slice(0, 36);

type UsageItem = TableKey & { kind: UsageEntry["kind"]; endpoint: string; amount: number; status: UsageEntry["status"]; requestId: string; createdAt: string };

/** A usage entry as stored: keyed by account, time and request, so the same request writes the same entry. */
export function usageItem(accountId: string, at: Date, requestId: string, entry: Pick<UsageItem, "kind" | "endpoint" | "amount" | "status">): UsageItem {
  return { ...usageKey(accountId, at, requestId), ...entry, requestId, createdAt: at.toISOString() };
}

/**
 * Debits `amount` for a request: the balance moves only if it covers the price (it can never go
 * below zero) and a usage entry is written in the same transaction. `at` is the request's own time,
 * so a replayed invocation writes the very same entry and is charged once.
 */
export async function chargeForRequest(accountId: string, amount: number, request: { requestId: string; endpoint: string; at: Date }): Promise<Charge> {
  const item = usageItem(accountId, request.at, request.requestId, { kind: "charge", endpoint: request.endpoint, amount, status: "charged" });
  const entry = { pk: item.pk, sk: item.sk };
  try {
    await transact({
      ClientRequestToken: token(request.requestId, "charge"),
      TransactItems: [
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: accountKey(accountId),
            UpdateExpression: "SET balance = balance - :amount, totalSpent = totalSpent + :amount",
            ConditionExpression: "attribute_exists(pk) AND balance >= :amount",
            ExpressionAttributeValues: { ":amount": amount },
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          },
        },
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: item,
            // Beyond the token's window, the entry itself refuses a second charge for the same request.
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 1)) return { accountId, amount, entry, requestId: request.requestId };
    if (transactionConditionFailed(error, 0)) {
      const old = (error as TransactionCanceledException).CancellationReasons?.[0]?.Item;
      throw insufficientBalance(amount, Number(old?.balance?.N ?? 0));
    }
    throw error;
  }
  return { accountId, amount, entry, requestId: request.requestId };
}

/** Gives a charge back (the render failed): balance restored, entry marked refunded, at most once. */
export async function refundCharge(charge: Charge): Promise<void> {
  try {
    await transact({
      ClientRequestToken: token(charge.requestId, "refund"),
      TransactItems: [
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: charge.entry,
            UpdateExpression: "SET #status = :refunded",
            ConditionExpression: "#status = :charged",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":refunded": "refunded", ":charged": "charged" },
          },
        },
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: accountKey(charge.accountId),
            UpdateExpression: "SET balance = balance + :amount, totalSpent = totalSpent - :amount",
            ExpressionAttributeValues: { ":amount": charge.amount },
          },
        },
      ],
    });
  } catch (error) {
    if (transactionConditionFailed(error, 0)) return; // already refunded
    throw error;
  }
}

/** Adds `amount` to a balance (a top-up), with its usage entry; idempotent per reference. */
export async function creditAccount(accountId: string, amount: number, credit: { reference: string; endpoint: string; at?: Date }): Promise<void> {
  const at = credit.at ?? new Date();
  await transact({
    ClientRequestToken: token(credit.reference, "credit"),
    TransactItems: [
      {
        Update: {
          TableName: config.TABLE_NAME,
          Key: accountKey(accountId),
          UpdateExpression: "SET balance = balance + :amount",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeValues: { ":amount": amount },
        },
      },
      {
        Put: {
          TableName: config.TABLE_NAME,
          Item: usageItem(accountId, at, credit.reference, { kind: "topup", endpoint: credit.endpoint, amount, status: "credited" }),
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
    ],
  });
}

/** The newest usage entries of an account, newest first. */
export async function recentUsage(accountId: string, signal?: AbortSignal, limit = 20): Promise<UsageEntry[]> {
  const { Items = [] } = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": accountKey(accountId).pk, ":prefix": USAGE_PREFIX },
      ScanIndexForward: false,
      Limit: limit,
      ConsistentRead: true,
    }),
    { abortSignal: signal },
  );
  return (Items as UsageItem[]).map((item) => ({
    id: item.requestId,
    kind: item.kind,
    endpoint: item.endpoint,
    amount_micro_usd: item.amount,
    status: item.status,
    created_at: item.createdAt,
  }));
}
