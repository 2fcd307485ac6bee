import { setTimeout as sleep } from "node:timers/promises";
import { ConditionalCheckFailedException, DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";

// Created once per container and reused across warm invocations. The endpoint is set only for the
// local stack (DynamoDB Local); on AWS the SDK finds the regional endpoint itself.
// No socket timeouts of our own: under load the SDK's connection queue would count against them
// (200 requests at once failed on them here); a table that stops answering is bounded by the
// request's last-answer race instead (lib/http/with-http.ts).
export const dynamodb = new DynamoDBClient({
  region: config.AWS_REGION,
  ...(config.DYNAMODB_ENDPOINT ? { endpoint: config.DYNAMODB_ENDPOINT } : {}),
});

/** Document client: plain JS values in and out; undefined fields are dropped. */
export const documents = DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true },
});

// On Lambda, INIT opens the connection (TLS on AWS) and builds the SDK's credentials and middleware,
// so the first request does not: a read of an item that never exists, while the rest of INIT (the
// browser's launch) runs. Nothing waits for it, and a failure only means the first request does it.
if (config.AWS_LAMBDA_FUNCTION_NAME)
  documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: "WARMUP", sk: "WARMUP" } })).catch(() => undefined);

/** The pages of a query of the table, one after another (the SDK's paginator follows LastEvaluatedKey). */
export const queryPages = (input: Omit<QueryCommandInput, "TableName" | "ExclusiveStartKey">, signal?: AbortSignal) =>
  paginateQuery({ client: documents }, { TableName: config.TABLE_NAME, ...input }, { abortSignal: signal });

/** Every item of partition `pk` (those whose sort key begins with `prefix`, when given), in key order, read consistently page by page. */
export async function queryAll<T>(pk: string, prefix?: string): Promise<T[]> {
  const items: T[] = [];
  for await (const page of queryPages({
    KeyConditionExpression: prefix === undefined ? "pk = :pk" : "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": pk, ...(prefix === undefined ? {} : { ":prefix": prefix }) },
    ConsistentRead: true,
  }))
    items.push(...((page.Items ?? []) as T[]));
  return items;
}

/**
 * An UpdateExpression's SET of `fields` (those undefined left out: "" when none is left), with the
 * names and values it refers to as `#field` and `:field`.
 */
export function setClause(fields: Record<string, unknown>): { set: string; names: Record<string, string>; values: Record<string, unknown> } {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
  return {
    set: entries.length ? `SET ${entries.map(([name]) => `#${name} = :${name}`).join(", ")}` : "",
    names: Object.fromEntries(entries.map(([name]) => [`#${name}`, name])),
    values: Object.fromEntries(entries.map(([name, value]) => [`:${name}`, value])),
  };
}

/** For `.catch` of a conditional write whose failed condition means "someone else's now": nothing to do; anything else is rethrown. */
export function ignoreFailedCondition(error: unknown): void {
  if (!(error instanceof ConditionalCheckFailedException)) throw error;
}

/** Whether a conditional write went through (false: its condition failed); any other failure is rethrown. */
export const conditionHeld = (write: Promise<unknown>): Promise<boolean> =>
  write.then(
    () => true,
    (error: unknown) => {
      ignoreFailedCondition(error);
      return false;
    },
  );

/** Whether a transaction was cancelled because the condition of its item at `index` failed. */
export const transactionConditionFailed = (error: unknown, index: number) =>
  error instanceof TransactionCanceledException && error.CancellationReasons?.[index]?.Code === "ConditionalCheckFailed";

/** Sends a transaction: false when it was cancelled because the condition of its item at one of `indices` failed (nothing changed); any other failure is rethrown. */
export async function transactIf(input: TransactWriteCommandInput, indices: readonly number[] = [0]): Promise<boolean> {
  try {
    await transact(input);
    return true;
  } catch (error) {
    if (indices.some((index) => transactionConditionFailed(error, index))) return false;
    throw error;
  }
}

/** Whether a transaction was cancelled because any of its conditions failed. */
export const anyConditionFailed = (error: unknown) =>
  error instanceof TransactionCanceledException && (error.CancellationReasons ?? []).some((reason) => reason.Code === "ConditionalCheckFailed");

// A transaction cancelled for one of these reasons (and no failed condition) changed nothing and may
// simply be sent again. Real DynamoDB cancels a transaction that meets another on the same item
// (TransactionConflict); DynamoDB Local serialises them and never does. The SDK retries throttling
// of single requests itself, but not a cancelled transaction.
const RETRYABLE_REASONS = new Set(["TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"]);
const RETRYABLE_ERRORS = new Set(["TransactionInProgressException", "ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"]);
/** Attempts in all, and the backoff's base and cap (full jitter: a random wait up to base * 2^attempt). */
export const TRANSACT_RETRY = { attempts: 8, baseMs: 20, capMs: 1_000 } as const;

function retryable(error: unknown): boolean {
  if (error instanceof TransactionCanceledException) {
    const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code ?? "None");
    return codes.some((code) => RETRYABLE_REASONS.has(code)) && !codes.includes("ConditionalCheckFailed");
  }
  return error instanceof Error && RETRYABLE_ERRORS.has(error.name);
}

/**
 * Sends a transaction, retrying it with jittered backoff while it is cancelled by a conflict or
 * throttled. The input (its ClientRequestToken included) is the same on every attempt, so an attempt
 * that did apply but whose answer was lost is not applied twice. A failed condition is never retried.
 */
export async function transact(input: TransactWriteCommandInput, signal?: AbortSignal): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await documents.send(new TransactWriteCommand(input), { abortSignal: signal });
      return;
    } catch (error) {
      if (attempt >= TRANSACT_RETRY.attempts || !retryable(error) || signal?.aborted) throw error;
      await sleep(Math.random() * Math.min(TRANSACT_RETRY.capMs, TRANSACT_RETRY.baseMs * 2 ** attempt), undefined, { signal });
    }
  }
}
