import { config } from "../config.js";
import { AppError } from "../errors.js";
import { readDeliveries } from "../jobs/events.js";
import { type Job, type JobItem, jobStatus, readJob } from "../jobs/store.js";
import { JOB_RETENTION_DAYS } from "../packaging.js";
import { downloadLink } from "../storage/outputs.js";

// A job as GET /api/v1/jobs/{id} answers it (docs/api.md, "Jobs"): its status, and each item's
// status, charge, and result (the synchronous endpoint's JSON envelope, its output behind a link
// signed now, for an hour) or error.

/** The answer for `job` and its `items` (and its webhooks' deliveries, when it has a webhook). */
export async function jobAnswer(job: Job, items: readonly JobItem[]) {
  const deliveries = job.webhookUrl ? await readDeliveries(job.id) : [];
  const answered = await Promise.all(
    items.map(async (item) => {
      const link = item.outputKey ? await downloadLink(item.outputKey) : null;
      const image = item.imageKey ? await downloadLink(item.imageKey) : null;
      // Each log's summary in the result, with its link signed now.
      const logs = await Promise.all(
        Object.entries(item.logKeys ?? {}).map(async ([kind, key]) => {
          const { url, expiresAt } = await downloadLink(key);
          return [kind, { ...(item.result?.[kind] as object), url, expiresAt }] as const;
        }),
      );
      const result = item.result && {
        ...item.result,
        ...Object.fromEntries(logs),
        ...(link ? { downloadUrl: link.url, expiresAt: link.expiresAt } : {}),
        ...(image && item.result.screenshot
          ? { screenshot: { ...(item.result.screenshot as object), downloadUrl: image.url, expiresAt: image.expiresAt } }
          : {}),
      };
      return {
        index: item.index,
        status: item.status,
        charged_micro_usd: item.charged ?? 0,
        ...(item.startedAt ? { started_at: item.startedAt } : {}),
        ...(item.finishedAt ? { finished_at: item.finishedAt } : {}),
        ...(result ? { result } : {}),
        ...(item.error ? { error: item.error } : {}),
        ...(item.upload ? { upload: item.upload } : {}),
      };
    }),
  );
  return {
    id: job.id,
    endpoint: job.endpoint,
    status: jobStatus(job, items),
    created_at: job.createdAt,
    expires_at: new Date(Date.parse(job.createdAt) + JOB_RETENTION_DAYS * 86_400_000).toISOString(),
    counts: Object.fromEntries(
      ["queued", "running", "succeeded", "failed", "cancelled"].map((status) => [status, items.filter((i) => i.status === status).length]),
    ),
    charged_micro_usd: items.reduce((sum, item) => sum + (item.charged ?? 0), 0),
    links_expire_in_seconds: config.DOWNLOAD_LINK_SECONDS,
    items: answered,
    ...(job.webhookUrl
      ? {
          webhook: {
            url: job.webhookUrl,
            events: ["job.completed", ...(job.webhookEvents?.includes("item") ? ["job.item"] : [])],
            deliveries: deliveries.map((d) => ({ id: d.id, type: d.type, status: d.status, attempts: d.attempts })),
          },
        }
      : {}),
  };
}

/** Job `id` with its items if it is `accountId`'s; another account's job is as unknown as one that does not exist. */
export async function ownJob(accountId: string, id: string): Promise<{ job: Job; items: JobItem[] }> {
  const found = await readJob(id);
  if (!found || found.job.accountId !== accountId) throw new AppError("NOT_FOUND", "No such job (jobs are kept 7 days).");
  return found;
}
