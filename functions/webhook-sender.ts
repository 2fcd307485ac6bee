import type { SQSEvent } from "aws-lambda";
import { crawlHooksOf } from "../lib/crawl/store.js";
import { consume } from "../lib/jobs/consume.js";
import type { WebhookMessage } from "../lib/jobs/queue.js";
import { sendAttempt } from "../lib/jobs/webhooks.js";
import { monitorHooksOf } from "../lib/monitors/store.js";

// The webhook sender: fed by the webhooks queue (lib/routes.ts, consumers), it makes one delivery
// attempt a message (lib/jobs/webhooks.ts) of a job's or a monitor's event, without a browser,
// apart from the jobs' items.
export const handler = (event: SQSEvent) => consume<WebhookMessage>(event, (message) => sendAttempt(message, { monitor: monitorHooksOf, crawl: crawlHooksOf }));
