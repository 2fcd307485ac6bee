import type { SQSEvent } from "aws-lambda";
import { writeResult } from "../lib/crawl/result.js";
import { runPage } from "../lib/crawl/run.js";
import { crawlHooksOf } from "../lib/crawl/store.js";
import { consume } from "../lib/jobs/consume.js";
import type { CheckMessage, CrawlResultMessage, ItemMessage, PageMessage, WebhookMessage } from "../lib/jobs/queue.js";
import { runItem } from "../lib/jobs/run.js";
import { sendAttempt } from "../lib/jobs/webhooks.js";
import { runCheck } from "../lib/monitors/check.js";
import { monitorHooksOf } from "../lib/monitors/store.js";
import { asTenant } from "../lib/tenant.js";

// The jobs worker: fed by the jobs queue (lib/routes.ts, consumers), it runs one item a message
// (lib/jobs/run.ts), one monitor's check (lib/monitors/check.ts), one crawl's page (lib/crawl/run.ts),
// or an ended crawl's whole result (lib/crawl/result.ts). A webhook attempt found on
// this queue (queued there before webhooks had a queue of their own) is made as the webhook sender
// would make it.
export const handler = (event: SQSEvent) =>
  consume<ItemMessage | CheckMessage | PageMessage | CrawlResultMessage | WebhookMessage>(event, async (message, receiveCount) =>
    message.kind === "webhook"
      ? sendAttempt(message, { monitor: monitorHooksOf, crawl: crawlHooksOf })
      : message.kind === "crawl-result"
        ? writeResult(message.crawlId).then(() => "done" as const)
        : // The account's work, in the pools a process shares (lib/tenant.ts).
          asTenant(`acct:${message.accountId ?? ""}`, () =>
            message.kind === "check"
              ? runCheck(message, receiveCount)
              : message.kind === "page"
                ? runPage(message, receiveCount)
                : runItem(message, receiveCount),
          ),
  );
