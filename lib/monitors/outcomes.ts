import { redactedControls } from "../api/secrets.js";
import type { AppError } from "../errors.js";
import { diedError, sweepDead } from "../jobs/attempt.js";
import { sendOwnEvent } from "../jobs/events.js";
import { type Check, changeMonitor, finishCheck, getMonitor, hooksOf, type Monitor, noteOnMonitor } from "./store.js";

// How a monitor's check ends when it did not succeed, whoever ends it: its worker (lib/monitors/check.ts),
// or the sweeper, for a check whose worker died on its last delivery (the monitors' schedule's run,
// functions/monitors-schedule.ts, which renders nothing: so this module imports no part of a render).
// A failed check is not charged, and is retried sooner than the next scheduled one; FAILURE_STREAK
// failures in a row send one monitor.failed and back the monitor off, PAUSE_STREAK pause it
// (monitor.paused, reason "failing"). A balance that cannot pay pauses the monitor (monitor.paused,
// reason "insufficient_balance"), nothing run.

/** Failures in a row after which the monitor says so and backs off. */
const FAILURE_STREAK = 3;
/** Failures in a row after which the monitor pauses (a page gone for good should not keep a worker busy, nor the queue long). */
const PAUSE_STREAK = 10;
/** The retries before the streak, and the backoff after it, doubling up to a day. */
const RETRY_MS = 60_000;
const MAX_BACKOFF_MS = 86_400_000;
/** When a monitor that has failed `failures` times in a row is checked next: a minute after the first failures, then backing off, doubling up to a day. */
const retryAfter = (failures: number, every: number) =>
  failures < FAILURE_STREAK ? Math.min(RETRY_MS, every * 1000) : Math.min(MAX_BACKOFF_MS, Math.max(every * 1000, RETRY_MS) * 2 ** (failures - FAILURE_STREAK));

/** Moves a monitor's next check to `at` (only while its schedule is as read; a change meanwhile wins). */
export async function reschedule(monitor: Monitor, at: number, set: Record<string, unknown>): Promise<void> {
  if (monitor.paused || (await changeMonitor(monitor, { ...set, nextDueAt: at }))) return;
  // Its schedule changed meanwhile (the schedule claimed it, a PATCH): the note stands without the move.
  await noteOnMonitor(monitor, set);
}

/** The webhook data of a check. */
export const eventData = (monitor: Monitor, check: Partial<Check> & { id: string }) => ({
  monitor_id: monitor.id,
  ...(monitor.request.name ? { name: monitor.request.name } : {}),
  url: redactedControls({ url: monitor.request.url }).url,
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
export async function failed(monitor: Monitor, check: Check, error: AppError, now: number, charged = 0): Promise<void> {
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
    url: redactedControls({ url: monitor.request.url }).url,
    reason,
    message,
  });
  return true;
}

/** Pauses a monitor whose account's balance cannot pay for its check; monitor.paused says so. */
export async function pauseUnpaid(monitor: Monitor, check: Check, error: AppError): Promise<void> {
  await finishCheck(monitor, check.id, failure(error));
  await pause(monitor, check, "insufficient_balance", `${error.message} The monitor is paused; top up, then resume it with PATCH {"paused": false}.`);
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
