import { randomUUID } from "node:crypto";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type ReceiveMessageCommandOutput,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { JOB_MAX_RECEIVES } from "../lib/packaging.js";
import type { Consumer } from "../lib/routes.js";
import { LOCAL_CREDENTIALS } from "./ports.js";

// The consumers' queues under `npm run dev`, as the stack makes them (stacks/Api.ts): the jobs
// queue (items) and the webhooks queue (delivery attempts), each with its dead-letter queue, on the
// local SQS (dev/sqs-local.ts); and in place of Lambda's event source mapping, pollers that hand
// each message to its consumer in the same event shape, one at a time, delete it when the consumer
// is done with it, and leave it to come back after its visibility timeout when it reports a
// failure (or throws).

export interface JobsQueue {
  readonly queueUrl: string;
  readonly deadLetterUrl: string;
}

/** Each consumer's queue (lib/routes.ts, consumers), by its name. */
export type LocalQueues = Record<Consumer["queue"], JobsQueue>;

/** Creates the consumers' queues and their dead-letter queues (unless they exist); `visibilitySeconds` as the stack's. */
export async function createQueues(endpoint: string, visibilitySeconds: number): Promise<LocalQueues> {
  const client = new SQSClient({ endpoint, region: "us-east-1", credentials: LOCAL_CREDENTIALS });
  const create = async (name: string): Promise<JobsQueue> => {
    const deadLetterUrl = (await client.send(new CreateQueueCommand({ QueueName: `shotline-${name}-dead-letters` }))).QueueUrl!;
    const arn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: deadLetterUrl, AttributeNames: ["QueueArn"] }))).Attributes!.QueueArn!;
    const queueUrl = (
      await client.send(
        new CreateQueueCommand({
          QueueName: `shotline-${name}`,
          Attributes: {
            VisibilityTimeout: String(visibilitySeconds),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: String(JOB_MAX_RECEIVES) }),
          },
        }),
      )
    ).QueueUrl!;
    return { queueUrl, deadLetterUrl };
  };
  try {
    return { jobs: await create("jobs"), webhooks: await create("webhooks") };
  } finally {
    client.destroy();
  }
}

/** A queue consumer's handler, as Lambda calls it with an SQS event. */
export type Worker = (event: SQSEvent) => Promise<SQSBatchResponse>;

/** Runs `pollers` loops that feed `worker` from the queue until `stop` is called. */
export function pollJobs(endpoint: string, queue: JobsQueue, worker: Worker, pollers: number): { stop(): Promise<void> } {
  const client = new SQSClient({ endpoint, region: "us-east-1", credentials: LOCAL_CREDENTIALS });
  const controller = new AbortController();
  const loop = async () => {
    while (!controller.signal.aborted) {
      let received: ReceiveMessageCommandOutput;
      try {
        received = await client.send(
          new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 2, MessageSystemAttributeNames: ["All"] }),
          { abortSignal: controller.signal },
        );
      } catch {
        if (controller.signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      for (const message of received.Messages ?? []) {
        const event: SQSEvent = {
          Records: [
            {
              messageId: message.MessageId!,
              receiptHandle: message.ReceiptHandle!,
              body: message.Body!,
              attributes: {
                ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? "1",
                SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
                SenderId: "local",
                ApproximateFirstReceiveTimestamp: message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
              },
              messageAttributes: {},
              md5OfBody: message.MD5OfBody ?? "",
              eventSource: "aws:sqs",
              eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue.queueUrl.split("/").pop()}#${randomUUID()}`,
              awsRegion: "us-east-1",
            },
          ],
        };
        const failed = await worker(event).then(
          (answer) => answer.batchItemFailures.length > 0,
          () => true,
        );
        // Done: deleted, while the poller asks for the next one. Failed: left for the queue to deliver
        // again after its visibility timeout.
        if (!failed) void client.send(new DeleteMessageCommand({ QueueUrl: queue.queueUrl, ReceiptHandle: message.ReceiptHandle })).catch(() => undefined);
      }
    }
  };
  const loops = Array.from({ length: pollers }, loop);
  return {
    stop: async () => {
      controller.abort();
      await Promise.allSettled(loops);
      client.destroy();
    },
  };
}
