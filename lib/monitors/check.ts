import { CopyObjectCommand } from "@aws-sdk/client-s3";
import { config } from "../config.js";
import { attempt, heldElsewhere } from "../jobs/attempt.js";
import { sendOwnEvent } from "../jobs/events.js";
import { itemDone } from "../jobs/feed.js";
import type { CheckMessage } from "../jobs/queue.js";
import { putObject } from "../jobs/requests.js";
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
import { eventData, failed, pauseUnpaid, reschedule } from "./outcomes.js";
import {
  type Check,
  checkPiece,
  checkPrice,
  dropCheck,
  finishCheck,
  getCheck,
  getMonitor,
  hooksOf,
  type Monitor,
  noteOnMonitor,
  openMonitor,
  startCheck,
} from "./store.js";

// A monitor's check, run by a jobs worker (functions/job-worker.ts) when the queue delivers its
// message (docs/api.md, "Monitors"): taken once at a time, charged as the screenshot (or, for text
// alone, the content) it takes, the page observed (lib/monitors/observe.ts), compared with the
// monitor's baseline, kept, and announced. A message delivered again charges the check once (its
// charge's request id is the check's). How a check that failed ends (retried, backed off, paused):
// lib/monitors/outcomes.ts, shared with the sweeper.

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
    const { added, removed, tooLarge } = textDiff(before, seen.lines);
    textChange = tooLarge === true || added.length + removed.length > 0;
    result = { ...result, text: { added: added.slice(0, MAX_TEXT_LINES), removed: removed.slice(0, MAX_TEXT_LINES), ...(tooLarge ? { tooLarge } : {}) } };
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
        // Its secrets open for the check alone (sealed at rest: lib/monitors/store.ts, keptSpec).
        const seen = await observe(await openMonitor(monitor), deadline);
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
