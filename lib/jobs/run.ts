import { contentBody } from "../api/content.js";
import { animationEnvelopeOf, EXTENSIONS, envelopeOf, logFiles } from "../api/envelopes.js";
import { animationOf, type JobRequest, sourceOf } from "../api/schemas.js";
import type { Charge } from "../billing/ledger.js";
import { guardedStatus } from "../metadata/fetch.js";
import { animate, animationWorkMs } from "../render/animate/animate.js";
import { type Capture, capture } from "../render/capture.js";
import { renderTimeout } from "../render/errors.js";
import { JOB_CAPTURE_HEIGHT } from "../render/limits.js";
import type { CaptureOptions } from "../render/options.js";
import type { PageLogs } from "../render/page-log.js";
import { priceOf, routeById } from "../routes.js";
import { attempt, chargePiece, closeLease, heldElsewhere } from "./attempt.js";
import { announce } from "./events.js";
import { itemDone } from "./feed.js";
import type { ItemMessage } from "./queue.js";
import { loadRequest, openItemRequest, outputKeyOf, putObject } from "./requests.js";
import { finishItem, getJob, itemPiece, type Job, type JobItem, readJob, releaseItemHold, startItem } from "./store.js";
import { LEASE_MARGIN_MS, WORK_RESERVE_MS, WORKER_LIMIT_MS, WORKER_MARGIN_MS } from "./worker-time.js";

// A job's item, run by the worker (functions/job-worker.ts) when the queue delivers its message:
// taken (once at a time), charged as its endpoint would be, run with its own page-load limit, its
// output and answer kept with the job, then delivered, or refunded when it failed: the steps a
// monitor's check takes too, written once (lib/jobs/attempt.ts). A message delivered twice, or again
// after its worker died, charges the item once: the charge's request id is the item's, its time
// fixed at the first start, and the reconciler holds off until the queue can no longer redeliver it;
// an item whose worker died on its last delivery is ended by the sweeper (lib/jobs/sweep.ts).

type Item = JobRequest["items"][number];
type Outcome = Pick<JobItem, "result" | "outputKey" | "imageKey" | "logKeys"> & { output: { body: Buffer; contentType: string } };

/** An upload gives up after this long, or sooner when the item's time runs out. */
const UPLOAD_TIMEOUT_MS = 60_000;
/** An upload left less than this is not tried. */
const UPLOAD_MIN_MS = 1_000;

/**
 * PUTs an item's output to the customer's `upload` URL (a presigned URL of their bucket) under the
 * network guard, no redirect followed, by `until` at most (the item's end inside its worker's
 * limit): what it answered, or why it did not.
 */
async function upload(target: NonNullable<Item["upload"]>, output: Outcome["output"], until: number): Promise<NonNullable<JobItem["upload"]>> {
  const left = Math.min(UPLOAD_TIMEOUT_MS, until - Date.now());
  if (left < UPLOAD_MIN_MS) return { status: "failed", error: "no time was left for it within the item's time limit" };
  const sent = await guardedStatus(
    new URL(target.url),
    { method: "PUT", headers: { "content-type": output.contentType, "content-length": String(output.body.length), ...target.headers }, body: output.body },
    left,
  );
  if ("error" in sent) return { status: "failed", error: sent.error };
  return { status: sent.status >= 200 && sent.status < 300 ? "uploaded" : "failed", http_status: sent.status };
}

/** Runs the work of one item under `deadline`; what is kept of it. */
async function work(jobId: string, index: number, endpoint: JobRequest["endpoint"], item: Item, deadline: Parameters<typeof capture>[2]): Promise<Outcome> {
  const storeCapture = async (shot: Capture, suffix = "") => {
    const key = outputKeyOf(jobId, index, `${suffix}${EXTENSIONS[shot.format]}`);
    await putObject(key, shot.body, shot.contentType);
    return { key, envelope: envelopeOf(shot) };
  };
  // Logs are kept with the job, their summary in the result; the job's answer links them.
  const storeLogs = async (logs: PageLogs | undefined) => {
    const files = logFiles(logs);
    const logKeys = Object.fromEntries(files.map(({ kind, file }) => [kind, outputKeyOf(jobId, index, `${file.name}.${file.extension}`)]));
    await Promise.all(files.map(({ kind, body }) => putObject(logKeys[kind]!, body, "application/json")));
    return { summaries: Object.fromEntries(files.map(({ kind, summary }) => [kind, summary])), kept: files.length ? { logKeys } : {} };
  };
  if (endpoint === "content") {
    const { timeout: _, ...body } = item as Extract<JobRequest, { endpoint: "content" }>["items"][number];
    let imageKey: string | undefined;
    const { answer, logs } = await contentBody(body, deadline, async (shot) => {
      const stored = await storeCapture(shot, "snapshot.");
      imageKey = stored.key;
      return stored.envelope;
    });
    const logged = await storeLogs(logs);
    const outputKey = outputKeyOf(jobId, index, "json");
    const json = Buffer.from(JSON.stringify(answer));
    await putObject(outputKey, json, "application/json");
    const { url, title, rendered, tokens, incomplete, geo } = answer;
    return {
      outputKey,
      result: {
        url,
        title,
        rendered,
        ...(incomplete ? { incomplete } : {}),
        ...(geo ? { geo } : {}),
        tokens,
        format: body.format,
        ...(answer.screenshot ? { screenshot: answer.screenshot } : {}),
        ...logged.summaries,
      },
      imageKey,
      ...logged.kept,
      output: { body: json, contentType: "application/json" },
    };
  }
  if (endpoint === "animate") {
    const { timeout: _, upload: __, ...body } = item as Extract<JobRequest, { endpoint: "animate" }>["items"][number];
    const { options, animation } = animationOf(body);
    const made = await animate(sourceOf(body), options, animation, deadline, { maxHeight: JOB_CAPTURE_HEIGHT });
    const key = outputKeyOf(jobId, index, EXTENSIONS[made.format]);
    await putObject(key, made.body, made.contentType);
    const logged = await storeLogs(made.logs);
    return {
      outputKey: key,
      result: { ...animationEnvelopeOf(made), ...logged.summaries },
      ...logged.kept,
      output: { body: made.body, contentType: made.contentType },
    };
  }
  const { timeout: _, ...body } = item as Extract<JobRequest, { endpoint: "screenshot" | "html-to-screenshot" }>["items"][number];
  const { url: _url, html: _html, ...options } = body as typeof body & { url?: string; html?: string };
  const shot = await capture(sourceOf(body), options as CaptureOptions, deadline, { maxHeight: JOB_CAPTURE_HEIGHT });
  const stored = await storeCapture(shot);
  const logged = await storeLogs(shot.logs);
  return {
    outputKey: stored.key,
    result: { ...stored.envelope, ...logged.summaries },
    ...logged.kept,
    output: { body: shot.body, contentType: shot.contentType },
  };
}

/**
 * Charges item `index` of `job` `price` (lib/jobs/attempt.ts, chargePiece): keyed by the item, at the
 * time of its first start; out of the job's hold when it has one. The same item charged again (a
 * redelivery) is the same charge.
 */
export const chargeItem = (job: Job, index: number, price: number, taken: JobItem): Promise<Charge> =>
  chargePiece(itemPiece(job, index), taken, itemPrice(job, price));

/** What an item of `job` is charged: `amount` as its endpoint, out of the job's hold when it has one. */
const itemPrice = (job: Job, amount: number) => ({ amount, endpoint: job.endpoint, ...(job.hold ? { hold: job.id } : {}) });

/**
 * The end of item `index` of `job`: kept, its OPEN row closed, announced, its slot let go (held on
 * `heldOnMs` more when it failed for its own reason: lib/jobs/feed.ts, itemDone).
 */
const ender =
  (job: Job, index: number, message: Pick<ItemMessage, "slot">) =>
  async (outcome: Parameters<typeof finishItem>[2], heldOnMs = 0): Promise<"done"> => {
    await finishItem(job.id, index, outcome);
    await closeLease(itemPiece(job, index));
    await announce(job, [{ index, ...outcome }]);
    // Its slot goes to the account's next waiting item.
    await itemDone(message, job.accountId, heldOnMs);
    return "done";
  };

/**
 * Runs item `message` if it is to run: "done" when the message is spent (the item ran, had ended,
 * or belongs to no job), "busy" when a live worker holds the item (the message comes back later).
 * The attempt itself is lib/jobs/attempt.ts's, as a monitor's check's is: failures of our own (the
 * table, the bucket) are thrown, and the queue delivers the message again, up to JOB_MAX_RECEIVES
 * times; at the last one a failure to run the item fails it and refunds it instead. One after the
 * item ended (its webhooks) is thrown too: the message that comes back finds the item ended and
 * announces it again.
 */
export async function runItem(message: ItemMessage, receiveCount: number, now = Date.now(), workerLimitMs = WORKER_LIMIT_MS): Promise<"done" | "busy"> {
  const deadlineAt = now + message.timeout * 1000 + WORK_RESERVE_MS;
  // Everything the item does, its upload included, ends by then: inside the worker's own limit, so that it always ends with a result.
  const endBy = now + workerLimitMs - WORKER_MARGIN_MS;
  // Read and taken at once: a message of no job (expired, or made up) finds nothing and takes nothing.
  const request = (message.request ??
    loadRequest(message.jobId, message.index).catch((error: unknown) => {
      if ((error as { name?: string }).name === "NoSuchKey") return null;
      throw error;
    })) as Promise<Item | null> | Item;
  // Its account names its lease's OPEN row (a message from before messages named it: read from the job first).
  const accountId = message.accountId ?? (await getJob(message.jobId))?.accountId;
  const piece = accountId ? itemPiece({ id: message.jobId, accountId }, message.index) : null;
  const [job, kept, taken] = await Promise.all([
    getJob(message.jobId),
    request,
    accountId && startItem({ id: message.jobId, accountId }, message.index, Math.max(deadlineAt, endBy) + LEASE_MARGIN_MS, now, receiveCount, message.slot),
  ]);
  if (!job || !piece) {
    if (message.accountId) await itemDone(message, message.accountId);
    return "done";
  }
  if (!taken) {
    const state = await settled(job, message.index, now);
    if (state === "busy") return heldElsewhere(piece, receiveCount);
    await itemDone(message, job.accountId);
    return state;
  }
  const end = ender(job, message.index, message);
  if (!kept) {
    await releaseItemHold(job, taken);
    return end({ status: "failed", charged: 0, error: { code: "INTERNAL_ERROR", message: "The item's request is gone; it was not charged." } });
  }
  // Its request as kept: what it costs and how long it may take are in the clear; its secrets open
  // in its work (a failure to open them is ours: tried again, then failed and refunded).
  let opened: Item | undefined;
  // The price held when the job was submitted (priced again only for a job from before holds).
  const price = taken.price ?? priceOf(routeById(job.endpoint).price!, kept);
  // An animation's frames take their time past the page's load, within the worker's own limit.
  const animation = job.endpoint === "animate" ? animationOf(kept as Extract<JobRequest, { endpoint: "animate" }>["items"][number]) : null;
  const itemEnd = animation ? Math.min(endBy, deadlineAt + animationWorkMs(animation.options, animation.animation)) : deadlineAt;
  await attempt(
    {
      piece,
      lease: taken,
      receiveCount,
      price: itemPrice(job, price),
      budget: {
        at: itemEnd,
        timeout: renderTimeout(`The item did not finish within its ${kept.timeout} s page-load limit and the time to capture it.`),
        pageLoadMs: kept.timeout * 1000,
      },
      work: async (deadline) => {
        // Its secrets, sealed at rest, open for this run alone (their key is deleted when it ends).
        opened = await openItemRequest(job.id, message.index, kept, taken.secretKey);
        return work(job.id, message.index, job.endpoint, opened, deadline);
      },
      succeeded: async ({ output, ...made }) => {
        // Charged whatever the customer's bucket answers.
        const uploaded = opened?.upload ? await upload(opened.upload, output, endBy) : undefined;
        await end({ status: "succeeded", charged: price, ...made, ...(uploaded ? { upload: uploaded } : {}) });
      },
      failed: async (error, how) => {
        await end({ status: "failed", charged: 0, error: { code: error.code, message: error.message } }, how.ours ? 0 : how.ranMs);
      },
    },
    now,
  );
  return "done";
}

/**
 * An item this message could not take: "busy" while another worker holds it (it runs: the message
 * is not spent); else it has ended, and is announced again, in case the worker that ended it died
 * before it could be (or failed to queue its webhooks).
 */
async function settled(job: Job, index: number, now: number): Promise<"done" | "busy"> {
  const item = (await readJob(job.id))?.items.find((i) => i.index === index);
  if (item?.status === "running" && (item.leaseUntil ?? 0) >= now) return "busy";
  if (item && item.status !== "queued" && item.status !== "running") await announce(job, [item]);
  return "done";
}
