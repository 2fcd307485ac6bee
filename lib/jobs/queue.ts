import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { config } from "../config.js";
import { AppError } from "../errors.js";

// The jobs' queues (SQS; the local one under `npm run dev`): a message per item on the jobs queue,
// which the worker (functions/job-worker.ts) receives as Lambda's SQS event, and one per webhook
// delivery attempt on the webhooks queue, which the webhook sender (functions/webhook-sender.ts)
// receives. Retries, redelivery and the dead-letter queues are the queues'.

let client: SQSClient | undefined;

/** An item's request travels in its message up to this size (ten to a batch stay well inside SQS's 256 KiB); a larger one waits in the bucket. */
const MESSAGE_REQUEST_BYTES = 16 * 1024;

/** Whether item request `request` travels in its message (else it is kept in the bucket: lib/jobs/requests.ts). */
export const travelsInMessage = (request: unknown) => Buffer.byteLength(JSON.stringify(request)) <= MESSAGE_REQUEST_BYTES;

/** What an item's message names: one item of one job, and its request unless that is in the bucket. */
export interface ItemMessage {
  readonly kind?: "item";
  readonly jobId: string;
  readonly index: number;
  /** Its page-load limit in seconds: the worker takes the item while its request is read. */
  readonly timeout: number;
  readonly request?: unknown;
}

/** A webhook delivery attempt's message (lib/jobs/webhooks.ts). */
export interface WebhookMessage {
  readonly kind: "webhook";
  readonly jobId: string;
  readonly deliveryId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Not before (epoch ms). */
  readonly dueAt: number;
}

const sqs = (url: string | undefined) => {
  if (!url) throw new AppError("INTERNAL_ERROR", "Jobs are not set up on this deployment (no queue).");
  client ??= new SQSClient({ region: config.AWS_REGION, ...(config.SQS_ENDPOINT ? { endpoint: config.SQS_ENDPOINT } : {}) });
  return { client, url };
};

/** Queues the items of `jobId` (their validated requests, in order), ten messages a call (SQS's batch limit). */
export async function enqueueItems(jobId: string, requests: readonly { timeout: number }[]): Promise<void> {
  const { client, url } = sqs(config.JOBS_QUEUE_URL);
  for (let start = 0; start < requests.length; start += 10) {
    const entries = requests.slice(start, start + 10).map((request, offset) => {
      const message: ItemMessage = { jobId, index: start + offset, timeout: request.timeout, ...(travelsInMessage(request) ? { request } : {}) };
      return { Id: String(start + offset), MessageBody: JSON.stringify(message) };
    });
    const sent = await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    if (sent.Failed?.length) throw new AppError("INTERNAL_ERROR", `The queue refused ${sent.Failed.length} items of the job; retry it.`);
  }
}

/** Queues a webhook's delivery attempt, delivered after `delaySeconds` (at most 900). */
export async function enqueueAttempt(message: WebhookMessage, delaySeconds: number): Promise<void> {
  const { client, url } = sqs(config.WEBHOOKS_QUEUE_URL);
  await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(message), DelaySeconds: delaySeconds }));
}
