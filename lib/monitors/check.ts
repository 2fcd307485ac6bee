import { CopyObjectCommand } from "@aws-sdk/client-s3";
import { config } from "../config.js";
import type { AppError } from "../errors.js";
import { attempt, diedError, heldElsewhere, sweepDead } from "../jobs/attempt.js";
import { itemDone } from "../jobs/feed.js";
import type { CheckMessage } from "../jobs/queue.js";
import { putObject } from "../jobs/requests.js";
import { sendOwnEvent } from "../jobs/webhooks.js";
import { LEASE_MARGIN_MS, WORK_RESERVE_MS, WORKER_LIMIT_MS, WORKER_MARGIN_MS } from "../jobs/worker-time.js";
import { MONITOR_BASELINES_PREFIX, MONITOR_CHECKS_PREFIX } from "../packaging.js";
import { renderTimeout } from "../render/errors.js";
import { viewportFor } from "../render/viewport.js";
import { loadStored } from "../storage/outputs.js";
import { s3 } from "../storage/s3.js";
import { textDiff, type VisualDiff, visualDiff } from "./diff.js";
import { decode, diffImage, thumbnail } from "./images.js";
import { deleteObjects, imageLinks } from "./objects.js";
import { type Observation, observe } from "./observe.js";
import {
  type Check,
  changeMonitor,
  checkPiece,
  checkPrice,
  dropCheck,
  finishCheck,
  getCheck,
  getMonitor,
  hooksOf,
  type Monitor,
  noteOnMonitor,
  startCheck,
} from "./store.js";

// A monitor's check, run by a jobs worker (functions/job-worker.ts) when the queue delivers its
// message (docs/api.md, "Monitors"): taken once at a time, charged as the screenshot (or, for text
// alone, the content) it takes, the page observed (lib/monitors/observe.ts), compared with the
// monitor's baseline, kept, and announced. A message delivered again charges the check once (its
// charge's request id is the check's). A check that fails is not charged, and is retried sooner
// than the next scheduled one; FAILURE_STREAK failures in a row send one monitor.failed and back
// the monitor off, PAUSE_STREAK pause it (monitor.paused, reason "failing"). A balance that cannot
// pay pauses the monitor (monitor.paused, reason "insufficient_balance"), nothing run.

/** Failures in a row after which the monitor says so and backs off. */
const FAILURE_STREAK = 3;
/** Failures in a row after which the monitor pauses (a page gone for good should not keep a worker busy, nor the queue long). */
const PAUSE_STREAK = 10;
/** The retries before the streak, and the backoff after it, doubling up to a day. */
const RETRY_MS = 60_000;
const MAX_BACKOFF_MS = 86_400_000;
/** Lines of text added and removed a check keeps, each. */
const MAX_TEXT_LINES = 200;

const checkKey = (monitor: Monitor, checkId: string, name: string) => `${MONITOR_CHECKS_PREFIX}${monitor.id}/${checkId}.${name}`;
const baselineKey = (monitor: Monitor, checkId: string, name: string) => `${MONITOR_BASELINES_PREFIX}${monitor.id}/${checkId}.${name}`;

const copyObject = (from: string, to: string) =>
  s3.send(new CopyObjectCommand({ Bucket: config.BUCKET_NAME, CopySource: `${config.BUCKET_NAME}/${from}`, Key: to }));

/** A check's comparison of what it saw with the baseline. */
interface Comparison {
  readonly outcome: "baseline" | "unchanged" | "changed";
  readonly changedPercent?: number;
  readonly boxes?: Check["boxes"];
  readonly text?: Check["text"];
  /** The changed regions in the capture's own pixels (the diff image marks them). */
  readonly pixelBoxes?: VisualDiff["boxes"];
}

/** Compares what a check saw with the monitor's baseline (none yet: this one is it). */
async function compare(monitor: Monitor, seen: Observation): Promise<Comparison> {
  if (!monitor.baseline) return { outcome: "baseline" };
  const scale = viewportFor(monitor.options).deviceScaleFactor;
  let visualChange = false;
  let result: Omit<Comparison, "outcome"> = {};
  if (seen.capture && monitor.baseline.imageKey) {
    const [before, after] = await Promise.all([loadStored(monitor.baseline.imageKey).then(decode), decode(seen.capture.body)]);
    const diff = visualDiff(before, after);
    visualChange = diff.changedPercent > monitor.thresholdPercent;
    const css = (value: number) => Math.round(value / scale);
    result = {
      changedPercent: diff.changedPercent,
      boxes: diff.boxes.map((box) => ({ x: css(box.x), y: css(box.y), width: Math.max(1, css(box.width)), height: Math.max(1, css(box.height)) })),
      pixelBoxes: diff.boxes,
    };
  }
  let textChange = false;
  if (seen.lines && monitor.baseline.textKey) {
    const before = JSON.parse((await loadStored(monitor.baseline.textKey)).toString("utf8")) as string[];
    const { added, removed } = textDiff(before, seen.lines);
    textChange = added.length + removed.length > 0;
    result = { ...result, text: { added: added.slice(0, MAX_TEXT_LINES), removed: removed.slice(0, MAX_TEXT_LINES) } };
  }
  return { outcome: visualChange || textChange ? "changed" : "unchanged", ...result };
}

/**
 * Keeps what a check saw: for a first check or a change, its capture and text become the baseline
 * (and, for a change, the before, after and diff images are kept with the check, with a thumbnail).
 */
async function keep(monitor: Monitor, checkId: string, seen: Observation, comparison: Comparison) {
  if (comparison.outcome === "unchanged") return { images: undefined, baseline: undefined, thumbKey: undefined };
  const baseline = {
    checkId,
    at: new Date().toISOString(),
    ...(seen.capture ? { imageKey: baselineKey(monitor, checkId, "png") } : {}),
    ...(seen.lines ? { textKey: baselineKey(monitor, checkId, "json") } : {}),
  };
  await Promise.all([
    seen.capture && putObject(baseline.imageKey!, seen.capture.body, "image/png"),
    seen.lines && putObject(baseline.textKey!, JSON.stringify(seen.lines), "application/json"),
  ]);
  if (comparison.outcome === "baseline" || !seen.capture || !monitor.baseline?.imageKey || !comparison.pixelBoxes) {
    return { images: undefined, baseline, thumbKey: undefined };
  }
  const images = {
    before: checkKey(monitor, checkId, "before.png"),
    after: checkKey(monitor, checkId, "after.png"),
    diff: checkKey(monitor, checkId, "diff.png"),
  };
  const marked = await diffImage(seen.capture.body, seen.capture, comparison.pixelBoxes);
  const thumbKey = checkKey(monitor, checkId, "thumb.webp");
  await Promise.all([
    copyObject(monitor.baseline.imageKey, images.before),
    putObject(images.after, seen.capture.body, "image/png"),
    putObject(images.diff, marked, "image/png"),
    thumbnail(marked, seen.capture, comparison.pixelBoxes).then((thumb) => putObject(thumbKey, thumb, "image/webp")),
  ]);
  return { images, baseline, thumbKey };
}

/** When a monitor that has failed `failures` times in a row is checked next: a minute after the first failures, then backing off, doubling up to a day. */
const retryAfter = (failures: number, every: number) =>
  failures < FAILURE_STREAK ? Math.min(RETRY_MS, every * 1000) : Math.min(MAX_BACKOFF_MS, Math.max(every * 1000, RETRY_MS) * 2 ** (failures - FAILURE_STREAK));

/** Moves a monitor's next check to `at` (only while its schedule is as read; a change meanwhile wins). */
async function reschedule(monitor: Monitor, at: number, set: Record<string, unknown>): Promise<void> {
  if (monitor.paused || (await changeMonitor(monitor, { ...set, nextDueAt: at }))) return;
  // Its schedule changed meanwhile (the schedule claimed it, a PATCH): the note stands without the move.
  await noteOnMonitor(monitor, set);
}

/** The webhook data of a check. */
const eventData = (monitor: Monitor, check: Partial<Check> & { id: string }) => ({
  monitor_id: monitor.id,
  ...(monitor.request.name ? { name: monitor.request.name } : {}),
  url: monitor.request.url,
  check_id: check.id,
  ...(check.outcome ? { outcome: check.outcome } : {}),
  ...(check.changedPercent !== undefined ? { changedPercent: check.changedPercent } : {}),
  ...(check.boxes ? { boxes: check.boxes } : {}),
  ...(check.text ? { text: check.text } : {}),
  ...(check.error ? { error: check.error } : {}),
});

/** A failed check's outcome: nothing charged (unless its worker died after its charge was delivered), and why. */
const failure = (error: AppError, charged = 0) => ({ outcome: "failed" as const, charged, error: { code: error.code, message: error.message } });

/**
 * A check that could not run: not charged, the failure counted, retried sooner or backed off; at the
 * streak's length, monitor.failed once; at PAUSE_STREAK failures in a row, the monitor pauses
 * (monitor.paused, reason "failing") until PATCH {"paused": false} resumes it.
 */
async function failed(monitor: Monitor, check: Check, error: AppError, now: number, charged = 0): Promise<void> {
  const outcome = failure(error, charged);
  await finishCheck(monitor, check.id, outcome);
  const failures = monitor.failures + 1;
  const notify = failures >= FAILURE_STREAK && !monitor.failedNotified;
  const notes = {
    failures,
    failedNotified: monitor.failedNotified || notify,
    lastCheck: { id: check.id, at: new Date(now).toISOString(), outcome: "failed" },
  };
  const message = `Its last ${failures} checks failed; the last: ${error.message} The monitor is paused; resume it with PATCH {"paused": false}.`;
  // Paused (the failures noted with it), or, not (or a change meanwhile won), retried or backed off.
  const paused = failures >= PAUSE_STREAK && !monitor.paused && (await pause(monitor, check, "failing", message, notes));
  if (!paused) await reschedule(monitor, now + retryAfter(failures, monitor.every), notes);
  if (notify)
    await sendOwnEvent(hooksOf(monitor), `${monitor.id}.failed.${check.id}`, "monitor.failed", {
      ...eventData(monitor, { ...check, ...outcome }),
      failures,
    });
}

/**
 * Pauses `monitor` (as read: a change meanwhile wins, and false says so) for `reason`, noting `set`
 * with it; monitor.paused says why, once per check.
 */
async function pause(monitor: Monitor, check: Check, reason: Exclude<Monitor["pausedReason"], undefined>, message: string, set: Record<string, unknown> = {}) {
  if (!(await changeMonitor(monitor, { ...set, paused: true, pausedReason: reason, nextDueAt: undefined }))) return false;
  await sendOwnEvent(hooksOf(monitor), `${monitor.id}.paused.${check.id}`, "monitor.paused", {
    monitor_id: monitor.id,
    ...(monitor.request.name ? { name: monitor.request.name } : {}),
    url: monitor.request.url,
    reason,
    message,
  });
  return true;
}

/** Pauses a monitor whose account's balance cannot pay for its check; monitor.paused says so. */
async function pauseUnpaid(monitor: Monitor, check: Check, error: AppError): Promise<void> {
  await finishCheck(monitor, check.id, failure(error));
  await pause(monitor, check, "insufficient_balance", `${error.message} The monitor is paused; top up, then resume it with PATCH {"paused": false}.`);
}

/**
 * Runs check `message` if it is to run: "done" when the message is spent, "busy" while a live worker
 * holds it. The attempt itself is lib/jobs/attempt.ts's, as a job item's is: failures of our own (the
 * table, the bucket) are thrown, and the queue delivers the message again, up to JOB_MAX_RECEIVES
 * times; at the last, the check fails instead.
 */
export async function runCheck(message: CheckMessage, receiveCount: number, now = Date.now()): Promise<"done" | "busy"> {
  // Everything the check does ends by then, inside the worker's own limit.
  const until = Math.min(now + config.PAGE_LOAD_TIMEOUT_MS + WORK_RESERVE_MS, now + WORKER_LIMIT_MS - WORKER_MARGIN_MS);
  const done = async (heldOnMs = 0) => {
    await itemDone(message, message.accountId, heldOnMs);
    return "done" as const;
  };
  const monitor = await getMonitor(message.accountId, message.monitorId);
  const queued = await getCheck(message.monitorId, message.checkId);
  if (!monitor || !queued || queued.status === "done") return done();
  // A paused monitor runs nothing: a check queued before it was paused goes.
  if (monitor.paused && queued.status === "queued") {
    await dropCheck(monitor, queued.id);
    return done();
  }
  const piece = checkPiece(monitor, queued.id);
  const check = await startCheck(monitor, queued.id, until + LEASE_MARGIN_MS, now, receiveCount, message.slot);
  if (!check) {
    const again = await getCheck(monitor.id, queued.id);
    return again?.status === "running" && (again.leaseUntil ?? 0) >= now ? heldElsewhere(piece, receiveCount) : done();
  }
  const price = checkPrice(monitor);
  let heldOnMs = 0;
  await attempt(
    {
      piece,
      lease: check,
      receiveCount,
      price: { amount: price, endpoint: "monitor-check" },
      budget: { at: until, timeout: renderTimeout("The check did not finish within the page-load limit and the time to capture it.") },
      work: async (deadline) => {
        const seen = await observe(monitor, deadline);
        const comparison = await compare(monitor, seen);
        return { seen, comparison, kept: await keep(monitor, check.id, seen, comparison) };
      },
      succeeded: ({ seen, comparison, kept }) => succeeded(monitor, check, price, seen, comparison, kept),
      failed: async (error, how) => {
        if (how.unpaid) await pauseUnpaid(monitor, check, error);
        else {
          await failed(monitor, check, error, Date.now());
          if (!how.ours) heldOnMs = how.ranMs;
        }
      },
    },
    now,
  );
  return done(heldOnMs);
}

/** Ends a check whose work was done and charged: kept, noted on its monitor (its baseline moved on a change), monitor.changed sent. */
async function succeeded(monitor: Monitor, check: Check, price: number, seen: Observation, comparison: Comparison, kept: Awaited<ReturnType<typeof keep>>) {
  const { pixelBoxes: _, ...result } = comparison;
  const finished = { ...result, charged: price, page: seen.page, ...(kept.images ? { images: kept.images } : {}) };
  await finishCheck(monitor, check.id, finished);
  const summary = {
    id: check.id,
    at: new Date().toISOString(),
    outcome: comparison.outcome,
    ...(result.changedPercent !== undefined ? { changedPercent: result.changedPercent } : {}),
  };
  const notes = {
    lastCheck: summary,
    failures: 0,
    failedNotified: false,
    ...(comparison.outcome === "changed" ? { lastChange: { ...summary, ...(kept.thumbKey ? { thumbKey: kept.thumbKey } : {}) } } : {}),
  };
  if (kept.baseline) {
    // The baseline moves only while nobody changed what the monitor watches meanwhile (a PATCH of its page or options).
    const moved = await noteOnMonitor(
      monitor,
      { ...notes, baseline: kept.baseline },
      { expression: "generation = :generation", values: { ":generation": monitor.generation } },
    );
    await deleteObjects(moved ? [monitor.baseline?.imageKey, monitor.baseline?.textKey] : [kept.baseline.imageKey, kept.baseline.textKey]);
    if (!moved) await noteOnMonitor(monitor, notes);
  } else await noteOnMonitor(monitor, notes);
  // Back on its schedule after a failure's retry or backoff.
  if (monitor.failures > 0) await reschedule(monitor, Date.now() + monitor.every * 1000, {});
  if (comparison.outcome === "changed")
    await sendOwnEvent(hooksOf(monitor), `${monitor.id}.changed.${check.id}`, "monitor.changed", {
      ...eventData(monitor, { ...check, ...finished }),
      ...(kept.images ? { images: await imageLinks(kept.images) } : {}),
    });
}

/**
 * The sweeper's round of checks (the monitors' schedule's, each minute: lib/jobs/attempt.ts,
 * sweepDead): a check whose worker died on its last delivery ends failed, counted in its monitor's
 * streak as any failure is (monitor.failed, and the pause, when it completes one). How many it ended.
 */
export const sweepChecks = (now: number): Promise<number> =>
  sweepDead("check", now, async ({ open, lease, charge }) => {
    const monitor = await getMonitor(open.accountId, open.owner);
    const check = { ...(lease as Check), id: String(open.id), monitorId: open.owner };
    const error = diedError("check", charge);
    const charged = charge.state === "delivered" ? charge.amount : 0;
    if (monitor) await failed(monitor, check, error, now, charged);
    else await finishCheck({ id: open.owner, accountId: open.accountId }, check.id, failure(error, charged));
  });
