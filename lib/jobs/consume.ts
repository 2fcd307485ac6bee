import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { describeError, log } from "../log.js";
import { JOB_MAX_RECEIVES } from "../packaging.js";

// A queue consumer's loop (functions/job-worker.ts, functions/webhook-sender.ts): Lambda's SQS
// event source delivers one message at a time (lib/routes.ts, consumers). A message its handler
// did not finish ("busy", or thrown) is reported as a batch item failure: the queue delivers it
// again after its visibility timeout, and past JOB_MAX_RECEIVES to the dead-letter queue.

/** Runs `handle` on each message of `event`, with how many times the queue has delivered it. */
export async function consume<T>(event: SQSEvent, handle: (message: T, receiveCount: number) => Promise<"done" | "busy">): Promise<SQSBatchResponse> {
  const failures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    try {
      const receiveCount = Math.min(JOB_MAX_RECEIVES, Number(record.attributes.ApproximateReceiveCount) || 1);
      if ((await handle(JSON.parse(record.body) as T, receiveCount)) === "busy") failures.push({ itemIdentifier: record.messageId });
    } catch (error) {
      log.error("queue message not finished; the queue delivers it again", { messageId: record.messageId, error: describeError(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
