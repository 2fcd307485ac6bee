import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { loadStored, storeAnswerBody } from "../storage/outputs.js";

// The first answer to an Idempotency-Key (or an x402 payment id), kept as it was sent: in the
// claim's record when small, its body in S3 otherwise (a DynamoDB item holds at most 400 KB).

/** Answers up to this size (serialised, UTF-8) are kept in the record itself. */
const RECORD_ANSWER_BYTES = 300_000;

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
