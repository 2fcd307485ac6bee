import type { SQSEvent } from "aws-lambda";
import { consume } from "../lib/jobs/consume.js";
import type { WebhookMessage } from "../lib/jobs/queue.js";
import { sendAttempt } from "../lib/jobs/webhooks.js";

// The webhook sender: fed by the webhooks queue (lib/routes.ts, consumers), it makes one delivery
// attempt a message (lib/jobs/webhooks.ts), without a browser, apart from the jobs' items.
export const handler = (event: SQSEvent) => consume<WebhookMessage>(event, sendAttempt);
