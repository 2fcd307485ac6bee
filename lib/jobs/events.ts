import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHeld, documents, queryAll } from "../billing/dynamodb.js";
import { JOB_HOOK_PREFIX, jobHookKey, monitorHookKey, type TableKey } from "../billing/keys.js";
import { config } from "../config.js";
import { JOB_RETENTION_DAYS, MONITOR_HISTORY_DAYS } from "../packaging.js";
import { enqueueAttempt, type WebhookMessage } from "./queue.js";
import { type Job, type JobItem, jobStatus, noteEnded, readJob } from "./store.js";

// The events of jobs and monitors (docs/api.md, "Jobs", "Monitors"): each kept with its job (or
// monitor) once, and its first delivery attempt queued; the attempts themselves are
// lib/jobs/webhooks.ts's. Apart from them, what only announces (a worker, the reconciler's and the
// schedule's sweeps, a cancel) bundles no HTTP client nor the network guard.

/** One attempt: when, and the status it got or why it got none. */
export interface Attempt {
  readonly at: string;
  readonly status?: number;
  readonly error?: string;
}

/** Whose events these are: a job's or a monitor's, where its deliveries are kept and where they go. */
export interface HookOwner {
  readonly accountId: string;
  readonly webhookUrl?: string | undefined;
  /** What a message of its deliveries names it by. */
  readonly ref: { readonly jobId: string } | { readonly monitorId: string } | { readonly crawlId: string };
  /** Where its delivery `id` is kept. */
  readonly key: (deliveryId: string) => TableKey;
  readonly retentionDays: number;
}

/** A job as the owner of its webhooks. */
export const jobHooks = (job: Job): HookOwner => ({
  accountId: job.accountId,
  webhookUrl: job.webhookUrl,
  ref: { jobId: job.id },
  key: (id) => jobHookKey(job.id, id),
  retentionDays: JOB_RETENTION_DAYS,
});

/** A monitor as the owner of its webhooks. */
export const monitorHooks = (monitor: { id: string; accountId: string; webhookUrl?: string | undefined }): HookOwner => ({
  accountId: monitor.accountId,
  webhookUrl: monitor.webhookUrl,
  ref: { monitorId: monitor.id },
  key: (id) => monitorHookKey(monitor.id, id),
  retentionDays: MONITOR_HISTORY_DAYS,
});

/** An event and its delivery, as kept with its job or monitor. */
export interface Delivery {
  readonly id: string;
  readonly type: "job.completed" | "job.item" | "monitor.changed" | "monitor.failed" | "monitor.paused" | "crawl.completed";
  readonly status: "pending" | "delivered" | "failed";
  readonly attempts: readonly Attempt[];
  /** The body sent, the same on every attempt. */
  readonly payload: string;
}

/**
 * Keeps event `type` of `job` with `data` under its id (`<job id>.<name>`: one event per name) and
 * queues its first attempt, if the job has a webhook.
 */
export const sendEvent = (job: Job, type: Delivery["type"], name: string, data: Record<string, unknown>, now = Date.now()): Promise<void> =>
  sendOwnEvent(jobHooks(job), `${job.id}.${name}`, type, { job_id: job.id, ...data }, now);

/**
 * Keeps event `type` of `owner` with `data` as delivery `id` (one event per id) and queues its first
 * attempt, if the owner has a webhook. Sent again (its sender died before queueing it, and its
 * message came back), the event kept first stands and its first attempt is queued again: the
 * attempt is made once however many messages ask for it (deliver claims it).
 */
export async function sendOwnEvent(owner: HookOwner, id: string, type: Delivery["type"], data: Record<string, unknown>, now = Date.now()): Promise<void> {
  if (!owner.webhookUrl) return;
  const payload = JSON.stringify({ type, timestamp: new Date(now).toISOString(), data });
  await conditionHeld(
    documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: {
          ...owner.key(id),
          id,
          type,
          status: "pending",
          attempts: [],
          payload,
          createdAt: now,
          expiresAt: Math.floor(now / 1000) + owner.retentionDays * 86_400,
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    ),
  );
  const message: WebhookMessage = { kind: "webhook", ...owner.ref, accountId: owner.accountId, deliveryId: id, attempt: 1, dueAt: now };
  await enqueueAttempt(message, 0);
}

/** The webhook events of a job (or of the owner whose delivery keys `key` makes) and their attempts, oldest first. */
export async function readDeliveries(owner: string | Pick<HookOwner, "key">): Promise<Delivery[]> {
  const pk = typeof owner === "string" ? jobHookKey(owner, "").pk : owner.key("").pk;
  return (await queryAll<Delivery & { createdAt: number }>(pk, JOB_HOOK_PREFIX)).sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * The webhooks' owners jobs do not know (lib/monitors, lib/crawl): a monitor by its account and id,
 * a crawl by its id; null when it is gone.
 */
export interface HookOwners {
  monitor(accountId: string, monitorId: string): Promise<HookOwner | null>;
  crawl(crawlId: string): Promise<HookOwner | null>;
}
export type MonitorHooksOf = HookOwners["monitor"];

/**
 * After items of `job` ended (`ended`: one that ran, or those cancelled): each one that ran its
 * `job.item` event when the job asks for them, then, noted as ended, once every item has, the job's
 * `job.completed`. All of it may be done again (the item's message delivered again after its worker
 * died or failed to queue an event): noting is idempotent and an event is kept once.
 */
export async function announce(job: Job, ended: readonly JobItem[]): Promise<void> {
  if (!job.webhookUrl) return;
  if (job.webhookEvents?.includes("item"))
    for (const item of ended.filter((i) => i.status === "succeeded" || i.status === "failed"))
      await sendEvent(job, "job.item", `item.${item.index}`, {
        index: item.index,
        status: item.status,
        charged_micro_usd: item.charged ?? 0,
        ...(item.error ? { error: item.error } : {}),
      });
  const noted = await noteEnded(
    job.id,
    ended.map((item) => item.index),
  );
  if (!noted || (noted.endedItems?.size ?? 0) < noted.count) return;
  // Every item has ended: read once, for the job's counts.
  const found = await readJob(job.id);
  if (!found) return;
  const counts = Object.fromEntries(["succeeded", "failed", "cancelled"].map((status) => [status, found.items.filter((i) => i.status === status).length]));
  await sendEvent(job, "job.completed", "completed", {
    status: jobStatus(found.job, found.items),
    counts,
    charged_micro_usd: found.items.reduce((sum, i) => sum + (i.charged ?? 0), 0),
  });
}
