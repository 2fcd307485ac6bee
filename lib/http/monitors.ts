import type { z } from "zod";
import { redactedControls } from "../api/secrets.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { readDeliveries } from "../jobs/events.js";
import { feed } from "../jobs/feed.js";
import { log } from "../log.js";
import { imageLinks } from "../monitors/objects.js";
import { type Check, checkPrice, countMonitors, createMonitor, hooksOf, listMonitors, type Monitor } from "../monitors/store.js";
import { MONITOR_HISTORY_DAYS } from "../packaging.js";
import { routeById } from "../routes.js";
import { downloadLink } from "../storage/outputs.js";
import { type monitorRequest, monitorSpecOf } from "./monitor-schemas.js";
import { assertReachable, assertWebhook } from "./outbound.js";
import { json } from "./responses.js";

// Monitors as the API answers them (docs/api.md, "Monitors"): what it watches (its request as
// given, its secrets redacted), its state and schedule, its last check and last change (a thumbnail link signed now), and
// its checks with their images behind links signed now, for DOWNLOAD_LINK_SECONDS.

/** Most monitors one account may have. */
const MAX_MONITORS_PER_ACCOUNT = 500;

/** A monitor's state: paused (and why), failing (its last checks failed), or active. */
const statusOf = (monitor: Monitor) => (monitor.paused ? "paused" : monitor.failures > 0 ? "failing" : "active");

/** The answer for `monitor` (with its webhook's recent deliveries when `deliveries`). */
export async function monitorAnswer(monitor: Monitor, deliveries = false) {
  const thumb = monitor.lastChange?.thumbKey ? await downloadLink(monitor.lastChange.thumbKey) : null;
  const { thumbKey: _, ...lastChange } = monitor.lastChange ?? { thumbKey: undefined };
  const hooks = deliveries && monitor.request.webhookUrl ? (await readDeliveries(hooksOf(monitor))).slice(-20) : [];
  // Its request as given, but for the secrets it sends the page (docs/api.md, "Monitors", secrets in answers).
  const request = redactedControls(monitor.request);
  return {
    id: monitor.id,
    ...request,
    status: statusOf(monitor),
    ...(monitor.paused ? { paused_reason: monitor.pausedReason ?? "requested" } : {}),
    created_at: monitor.createdAt,
    ...(monitor.nextDueAt !== undefined ? { next_check_at: new Date(monitor.nextDueAt).toISOString() } : {}),
    failures_in_a_row: monitor.failures,
    price_micro_usd_per_check: checkPrice(monitor),
    ...(monitor.baseline ? { baseline_at: monitor.baseline.at } : {}),
    ...(monitor.lastCheck ? { last_check: monitor.lastCheck } : {}),
    ...(monitor.lastChange ? { last_change: { ...lastChange, ...(thumb ? { thumbnailUrl: thumb.url } : {}) } } : {}),
    ...(deliveries && monitor.request.webhookUrl
      ? { webhook: { url: request.webhookUrl, deliveries: hooks.map((d) => ({ id: d.id, type: d.type, status: d.status, attempts: d.attempts })) } }
      : {}),
  };
}

/** A check as GET .../checks lists it. */
export async function checkAnswer(check: Check) {
  return {
    id: check.id,
    trigger: check.trigger,
    status: check.status,
    queued_at: check.queuedAt,
    ...(check.startedAt ? { started_at: check.startedAt } : {}),
    ...(check.finishedAt ? { finished_at: check.finishedAt } : {}),
    ...(check.outcome ? { outcome: check.outcome } : {}),
    ...(check.changedPercent !== undefined ? { changedPercent: check.changedPercent } : {}),
    ...(check.boxes ? { boxes: check.boxes } : {}),
    ...(check.images ? { images: await imageLinks(check.images) } : {}),
    ...(check.text ? { text: check.text } : {}),
    ...(check.page ? { page: check.page } : {}),
    charged_micro_usd: check.charged ?? 0,
    ...(check.error ? { error: check.error } : {}),
  };
}

/** What the history answer says of its own bounds. */
export const historyNote = { history_days: MONITOR_HISTORY_DAYS, links_expire_in_seconds: config.DOWNLOAD_LINK_SECONDS };

/** Logs what a handler left to the reconciler (a feed that failed): the work waits, it is not lost. */
const leftToReconciler = (what: string, monitorId: string) => (error: unknown) =>
  log.error(`${what} failed; the reconciler will`, { monitorId, error: error instanceof Error ? error.message : String(error) });

/** POST /api/v1/monitors (and the MCP tool create_monitor): the monitor made, its first check queued. */
export async function createMonitorAnswer(accountId: string, body: z.output<typeof monitorRequest>) {
  // A page the guard would refuse is refused now, not by every check after (each again at its connections).
  await assertReachable("url", body.url);
  if (body.webhookUrl) await assertWebhook(accountId, body.webhookUrl);
  if ((await countMonitors(accountId)) >= MAX_MONITORS_PER_ACCOUNT)
    throw new AppError("TOO_MANY_MONITORS", `An account has at most ${MAX_MONITORS_PER_ACCOUNT} monitors; delete one first.`);
  const { monitor, checkId } = await createMonitor(accountId, monitorSpecOf(body));
  await feed(accountId).catch(leftToReconciler("sending a monitor's first check", monitor.id));
  return json({ ...(await monitorAnswer(monitor)), first_check_id: checkId }, 201, {
    Location: routeById("monitors-get").path.replace("{monitorId}", monitor.id),
  });
}

/** GET /api/v1/monitors (and the MCP tool list_monitors). */
export const monitorsAnswer = async (accountId: string) =>
  json({ monitors: await Promise.all((await listMonitors(accountId)).map((monitor) => monitorAnswer(monitor))) });
