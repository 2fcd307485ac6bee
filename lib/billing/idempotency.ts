import { createHash } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { documents, ignoreFailedCondition } from "./dynamodb.js";
import { idempotencyKey } from "./keys.js";

// Idempotency-Key on priced requests with an API key (docs/agents.md, "Safe retries"): the first
// request with a key claims it for 24 hours with its body's fingerprint; a retry with the same key
// and body gets the first answer back without a second charge; another body is 409, and so is a
// retry while the first is still running. A claim whose request failed is released (the charge was
// refunded; the retry runs afresh). A claim whose request died holds until its lease ends.

/** How long an answer is kept for retries. */
const IDEMPOTENCY_SECONDS = 86_400;

/** What a claim finds. */
export type Claim = { readonly kind: "claimed" } | { readonly kind: "replay"; readonly answer: string };

const itemKey = (accountId: string, key: string) => idempotencyKey(accountId, createHash("sha256").update(key).digest("hex"));

/**
 * Claims `key` for `requestId` until `leaseUntil` (epoch ms: the request's deadline), bound to
 * `fingerprint`. The first answer when one is stored for the same fingerprint; 409 otherwise.
 */
export async function claimIdempotency(accountId: string, key: string, fingerprint: string, requestId: string, leaseUntil: number): Promise<Claim> {
  const now = Date.now();
  try {
    await documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...itemKey(accountId, key), state: "IN_FLIGHT", fingerprint, requestId, leaseUntil, expiresAt: Math.floor(now / 1000) + IDEMPOTENCY_SECONDS },
        // New, expired (TTL removes items lazily), or in flight past its lease (its request died).
        ConditionExpression: "attribute_not_exists(pk) OR expiresAt < :nowSeconds OR (#state = :inFlight AND leaseUntil < :now)",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":nowSeconds": Math.floor(now / 1000), ":inFlight": "IN_FLIGHT", ":now": now },
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      }),
    );
    return { kind: "claimed" };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const old = error.Item as Record<string, { S?: string; N?: string }> | undefined;
    if (old?.fingerprint?.S !== fingerprint) {
      throw new AppError("IDEMPOTENCY_CONFLICT", "Idempotency-Key: this key was used for a request with another body in the last 24 hours; use a new key.");
    }
    if (old.state?.S !== "DONE" || old.answer?.S === undefined) {
      throw new AppError("IDEMPOTENCY_IN_PROGRESS", "Idempotency-Key: the first request with this key is still running; retry in a second.", {
        headers: { "Retry-After": "1" },
      });
    }
    return { kind: "replay", answer: old.answer.S };
  }
}

/** Stores the answer of the request that holds the claim (`answer`: what lib/http keeps, at most ~350 KB). */
export async function completeIdempotency(accountId: string, key: string, requestId: string, answer: string): Promise<void> {
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: itemKey(accountId, key),
      UpdateExpression: "SET #state = :done, answer = :answer REMOVE leaseUntil",
      ConditionExpression: "requestId = :requestId",
      ExpressionAttributeNames: { "#state": "state" },
      ExpressionAttributeValues: { ":done": "DONE", ":answer": answer, ":requestId": requestId },
    }),
  );
}

/** Releases the claim of a request that failed, so that a retry runs afresh. */
export async function releaseIdempotency(accountId: string, key: string, requestId: string): Promise<void> {
  await documents
    .send(
      new DeleteCommand({
        TableName: config.TABLE_NAME,
        Key: itemKey(accountId, key),
        ConditionExpression: "requestId = :requestId AND #state = :inFlight",
        ExpressionAttributeNames: { "#state": "state" },
        ExpressionAttributeValues: { ":requestId": requestId, ":inFlight": "IN_FLIGHT" },
      }),
    )
    .catch(ignoreFailedCondition);
}
