import type { SQSEvent } from "aws-lambda";
import { consume } from "../lib/jobs/consume.js";
import type { ItemMessage, WebhookMessage } from "../lib/jobs/queue.js";
import { runItem } from "../lib/jobs/run.js";
import { sendAttempt } from "../lib/jobs/webhooks.js";

// The jobs worker: fed by the jobs queue (lib/routes.ts, consumers), it runs one item a message
// (lib/jobs/run.ts). A webhook attempt found on this queue (queued there before webhooks had a
// queue of their own) is made as the webhook sender would make it.
export const handler = (event: SQSEvent) =>
  consume<ItemMessage | WebhookMessage>(event, async (message, receiveCount) =>
    message.kind === "webhook" ? sendAttempt(message) : runItem(message, receiveCount),
  );
