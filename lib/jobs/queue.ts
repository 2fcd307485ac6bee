import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
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
  /** The job's account: the message's group (fair delivery), and whose slots it holds. */
  readonly accountId?: string;
  /** Its page-load limit in seconds: the worker takes the item while its request is read. */
  readonly timeout: number;
  readonly request?: unknown;
  /** The slot of its account's items in flight it holds (lib/jobs/feed.ts), let go when it ends. */
  readonly slot?: { readonly index: number; readonly holder: string };
}

/** A monitor's check (lib/monitors/check.ts): run by the jobs' workers, in its account's share of them, like an item. */
export interface CheckMessage {
  readonly kind: "check";
  readonly accountId: string;
  readonly monitorId: string;
  readonly checkId: string;
  readonly slot?: ItemMessage["slot"];
}

/** A crawl's page (lib/crawl/run.ts): run by the jobs' workers in its account's share of them. */
export interface PageMessage {
  readonly kind: "page";
  readonly accountId: string;
  readonly crawlId: string;
  /** Its URL's key in the crawl (lib/crawl/store.ts). */
  readonly key: string;
  readonly url: string;
  readonly depth: number;
  /** The times it was put back for its host (Retry-After): past a few, it fails. */
  readonly retries?: number;
  readonly slot?: ItemMessage["slot"];
}

/** The writing of an ended crawl's whole result (lib/crawl/result.ts): our work, in no account's share. */
export interface CrawlResultMessage {
  readonly kind: "crawl-result";
  readonly accountId: string;
  readonly crawlId: string;
}

/** A webhook delivery attempt's message (lib/jobs/webhooks.ts). */
export interface WebhookMessage {
  readonly kind: "webhook";
  /** Whose event it is: a job's, or with `monitorId` a monitor's, or with `crawlId` a crawl's. */
  readonly jobId?: string;
  readonly monitorId?: string;
  readonly crawlId?: string;
  /** The job's account: the message's group, and whose receiver it is. */
  readonly accountId?: string;
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

/**
 * Queues an item's message, in its account's message group: SQS fair queues (a standard queue whose
 * messages name a group) deliver other groups first when one group has a backlog, as the local
 * queue does (dev/sqs-local.ts); after `delaySeconds` (at most 900) when given.
 */
export async function enqueueItem(message: ItemMessage | CheckMessage | PageMessage | CrawlResultMessage, delaySeconds = 0): Promise<void> {
  const { client, url } = sqs(config.JOBS_QUEUE_URL);
  await client.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: JSON.stringify(message),
      ...(delaySeconds > 0 ? { DelaySeconds: Math.min(900, Math.ceil(delaySeconds)) } : {}),
      ...(message.accountId ? { MessageGroupId: message.accountId } : {}),
    }),
  );
}

/** Queues a webhook's delivery attempt, delivered after `delaySeconds` (at most 900), in its account's message group. */
export async function enqueueAttempt(message: WebhookMessage, delaySeconds: number): Promise<void> {
  const { client, url } = sqs(config.WEBHOOKS_QUEUE_URL);
  await client.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: JSON.stringify(message),
      DelaySeconds: delaySeconds,
      ...(message.accountId ? { MessageGroupId: message.accountId } : {}),
    }),
  );
}
