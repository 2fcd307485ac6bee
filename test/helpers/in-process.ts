import { afterAll, inject } from "vitest";
import { stackEnvironment } from "../../dev/harness/dev-process.js";
import { createQueues } from "../../dev/jobs-local.js";
import { startSqsLocal } from "../../dev/sqs-local.js";

/**
 * Points this test worker's environment at the shared local stack (its DynamoDB Local and s3rver),
 * so that lib modules and handlers imported afterwards run in process against the real table, as a
 * Lambda would. Call it before the first import of anything that reads lib/config.ts.
 */
export function useSharedStackInProcess(extra: Record<string, string> = {}) {
  const info = inject("devInfo");
  Object.assign(process.env, { ...stackEnvironment(info), ...extra });
}

/**
 * A local SQS of this file's own with the jobs' queues, stopped after its tests, and the environment
 * that points lib at it: the stack's worker and sender take none of the messages sent there.
 */
export async function ownQueues() {
  const sqs = await startSqsLocal();
  const queues = await createQueues(sqs.endpoint, 60);
  afterAll(() => sqs.stop());
  return {
    sqs,
    queues,
    environment: { SQS_ENDPOINT: sqs.endpoint, JOBS_QUEUE_URL: queues.jobs.queueUrl, WEBHOOKS_QUEUE_URL: queues.webhooks.queueUrl },
  };
}
