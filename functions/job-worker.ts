import type { SQSEvent } from "aws-lambda";
import { runPage } from "../lib/crawl/run.js";
import { consume } from "../lib/jobs/consume.js";
import type { CheckMessage, ItemMessage, PageMessage, WebhookMessage } from "../lib/jobs/queue.js";
import { runItem } from "../lib/jobs/run.js";
import { sendAttempt } from "../lib/jobs/webhooks.js";
import { runCheck } from "../lib/monitors/check.js";
import { monitorHooksOf } from "../lib/monitors/store.js";
import { asTenant } from "../lib/tenant.js";

// The jobs worker: fed by the jobs queue (lib/routes.ts, consumers), it runs one item a message
// (lib/jobs/run.ts), one monitor's check (lib/monitors/check.ts), or one crawl's page (lib/crawl/run.ts). A webhook attempt found on
// this queue (queued there before webhooks had a queue of their own) is made as the webhook sender
// would make it.
export const handler = (event: SQSEvent) =>
  consume<ItemMessage | CheckMessage | PageMessage | WebhookMessage>(event, async (message, receiveCount) =>
    message.kind === "webhook"
      ? sendAttempt(message, monitorHooksOf)
      : // The account's work, in the pools a process shares (lib/tenant.ts).
        asTenant(`acct:${message.accountId ?? ""}`, () =>
          message.kind === "check"
            ? runCheck(message, receiveCount)
            : message.kind === "page"
              ? runPage(message, receiveCount)
              : runItem(message, receiveCount),
        ),
  );
