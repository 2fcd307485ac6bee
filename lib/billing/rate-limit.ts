import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents } from "./dynamodb.js";
import { rateLimited } from "./errors.js";
import { rateWindowKey } from "./keys.js";

// Fixed windows (one second by default) kept in DynamoDB, so every Lambda instance counts against the same limit.
// Each window's key carries its second, so an expired window is never read again: TTL deletion
// (which DynamoDB does lazily, up to days later) only tidies up.
const TTL_AFTER_WINDOW_SECONDS = 120;

/** What is left of a limit's window after a request counted: requests, and seconds until the window ends. */
export interface RateCount {
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** Counts a request of `subject` in the current window; 429 (with Retry-After) when it exceeds `limit`. */
export async function enforceRateLimit(subject: string, limit: number, windowSeconds = 1, now = Date.now()): Promise<RateCount> {
  const windowStart = Math.floor(now / 1000 / windowSeconds) * windowSeconds;
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: rateWindowKey(subject, windowStart),
      UpdateExpression: "ADD #count :one SET expiresAt = if_not_exists(expiresAt, :expires)",
      ExpressionAttributeNames: { "#count": "count" },
      ExpressionAttributeValues: { ":one": 1, ":expires": windowStart + windowSeconds + TTL_AFTER_WINDOW_SECONDS },
      ReturnValues: "UPDATED_NEW",
    }),
  );
  const resetSeconds = Math.max(1, Math.ceil(windowStart + windowSeconds - now / 1000));
  if (Number(Attributes?.count) > limit) throw rateLimited(limit, windowSeconds, resetSeconds);
  return { remaining: Math.max(0, limit - Number(Attributes?.count)), resetSeconds };
}
