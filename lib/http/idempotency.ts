import { createHash } from "node:crypto";
import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { invalidParams } from "../errors.js";
import { loadStored, storeAnswerBody } from "../storage/outputs.js";

// The HTTP side of Idempotency-Key (lib/billing/idempotency.ts keeps the claims): the key read from
// the request, the body's fingerprint, and the first answer kept as it was sent: in the record when
// small, its body in S3 otherwise (a DynamoDB item holds at most 400 KB).

/** Answers up to this size (serialised, UTF-8) are kept in the record itself. */
const RECORD_ANSWER_BYTES = 300_000;

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key, or null without one; 400 when it is not 1 to 255 visible ASCII characters. */
export function idempotencyKeyOf(headers: Readonly<Record<string, string>>): string | null {
  const key = headers["idempotency-key"];
  if (key === undefined) return null;
  if (!KEY.test(key)) throw invalidParams("Idempotency-Key: must be 1 to 255 visible ASCII characters (a UUID is a good choice).");
  return key;
}

/** JSON with object keys sorted, so that the same body always reads the same. */
export const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : value !== null && typeof value === "object"
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
          .join(",")}}`
      : JSON.stringify(value);

/** What makes two requests the same: the route and the validated body (defaults applied, so `{}` and the defaults spelt out agree). */
export const fingerprint = (routeId: string, body: unknown): string =>
  createHash("sha256")
    .update(`${routeId}\n${canonical(body)}`)
    .digest("hex");

type Kept = { statusCode: number; headers: Record<string, string>; body?: string; isBase64Encoded: boolean; objectKey?: string };

/** The answer as sent, for the record (its request id left out: a replay has its own). */
export async function keepAnswer(result: APIGatewayProxyStructuredResultV2): Promise<string> {
  const { "X-Request-Id": _, ...headers } = (result.headers ?? {}) as Record<string, string>;
  const kept: Kept = { statusCode: result.statusCode ?? 200, headers, body: result.body ?? "", isBase64Encoded: result.isBase64Encoded ?? false };
  const text = JSON.stringify(kept);
  if (Buffer.byteLength(text) <= RECORD_ANSWER_BYTES) return text;
  const objectKey = await storeAnswerBody(Buffer.from(kept.body ?? "", kept.isBase64Encoded ? "base64" : "utf8"));
  return JSON.stringify({ ...kept, body: undefined, objectKey });
}

/** The kept answer, to send again, marked as a replay. */
export async function replayAnswer(text: string, requestId: string): Promise<APIGatewayProxyStructuredResultV2> {
  const kept = JSON.parse(text) as Kept;
  const body = kept.objectKey ? (await loadStored(kept.objectKey)).toString(kept.isBase64Encoded ? "base64" : "utf8") : (kept.body ?? "");
  return {
    statusCode: kept.statusCode,
    headers: { ...kept.headers, "Idempotent-Replayed": "true", "X-Request-Id": requestId },
    body,
    isBase64Encoded: kept.isBase64Encoded,
  };
}
