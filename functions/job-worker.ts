import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import type { JobMessage } from "../lib/jobs/queue.js";
import { runItem } from "../lib/jobs/run.js";
import { getJob } from "../lib/jobs/store.js";
import { deliver } from "../lib/jobs/webhooks.js";
import { describeError, log } from "../lib/log.js";
import { JOB_MAX_RECEIVES } from "../lib/packaging.js";

// The jobs worker: Lambda's SQS event source delivers one message at a time (lib/routes.ts,
// consumers): an item, which runs (lib/jobs/run.ts), or a webhook's attempt (lib/jobs/webhooks.ts). A message it could not finish is reported as a
// batch item failure: the queue delivers it again after its visibility timeout, and past
// JOB_MAX_RECEIVES to the dead-letter queue.
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as JobMessage;
      if (message.kind === "webhook") {
        const job = await getJob(message.jobId);
        if (job) await deliver(message, job);
        continue;
      }
      const outcome = await runItem(message, Math.min(JOB_MAX_RECEIVES, Number(record.attributes.ApproximateReceiveCount) || 1));
      if (outcome === "busy") failures.push({ itemIdentifier: record.messageId });
    } catch (error) {
      log.error("job item not finished; the queue delivers it again", { messageId: record.messageId, error: describeError(error) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
