import { randomBytes } from "node:crypto";
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { openSecrets, redactedControls, splitSecrets } from "../api/secrets.js";
import { conditionHeld, documents, queryAll, queryPages, setClause, transactIf } from "../billing/dynamodb.js";
import { dueKey, feedCheckKey, MONITOR_CHECK_PREFIX, MONITOR_PREFIX, monitorCheckKey, monitorKey } from "../billing/keys.js";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { closeLease, type Lease, type Piece, takeLease } from "../jobs/attempt.js";
import { type MonitorHooksOf, monitorHooks } from "../jobs/events.js";
import { feed } from "../jobs/feed.js";
import { describeError, log } from "../log.js";
import { MONITOR_HISTORY_DAYS } from "../packaging.js";
import type { CaptureOptions } from "../render/options.js";
import { PRICES } from "../routes.js";
import { seal } from "../storage/sealed.js";

// Monitors (docs/api.md, "Monitors"): a page checked on a schedule, each check compared with the
// monitor's baseline (its capture and text at the last change). A monitor lives in its account's
// partition (another account's id reads nothing); its next check is a row of the DUE partition,
// sorted by time, which the schedule reads each minute (lib/monitors/schedule.ts); a check is a row
// of the monitor's own partition, queued to the jobs' workers through its account's feed
// (lib/jobs/feed.ts: the account's share of the workers), run by lib/monitors/check.ts.

type MonitorMode = "visual" | "text" | "both";
type Outcome = "baseline" | "unchanged" | "changed" | "failed";

/** What a monitor watches and how, as its handlers validated it. */
export interface MonitorSpec {
  /** The request as the customer gave it (defaults filled in): what GET shows and PATCH changes. */
  readonly request: Record<string, unknown> & { readonly url: string; readonly webhookUrl?: string };
  /** Seconds between checks. */
  readonly every: number;
  readonly mode: MonitorMode;
  /** The changed share of the compared area, in percent, past which a visual change counts. */
  readonly thresholdPercent: number;
  readonly ignoreText: readonly string[];
  /** The render's options (ignoreSelectors among its hidden or removed elements). */
  readonly options: CaptureOptions;
}

/** A check's summary, as the monitor keeps its last one. */
interface CheckSummary {
  readonly id: string;
  readonly at: string;
  readonly outcome: Outcome;
  readonly changedPercent?: number;
}

/** A spec as kept at rest: its request and options as an answer shows them, their secrets sealed (lib/storage/sealed.ts) for the monitor's life. */
interface KeptSpec extends MonitorSpec {
  readonly sealed?: string;
  readonly secretKey?: string;
}

export interface Monitor extends KeptSpec {
  readonly id: string;
  readonly accountId: string;
  readonly createdAt: string;
  readonly paused: boolean;
  /** Why it is paused: asked (PATCH), its account's balance could not pay for a check, or its checks kept failing (lib/monitors/check.ts). */
  readonly pausedReason?: "requested" | "insufficient_balance" | "failing";
  /** When its next scheduled check is due (epoch ms); absent while paused. */
  readonly nextDueAt?: number;
  /** Checks failed in a row, and whether the streak's monitor.failed was sent. */
  readonly failures: number;
  readonly failedNotified?: boolean;
  /**
   * A check of it queued or running (the first queued while none was): the schedule queues no other
   * until it ends, so a monitor's backlog is one check however long its checks wait.
   */
  readonly openCheck?: string;
  /** Bumped by a change that makes the baseline meaningless (another page, other options): a check begun before it keeps no baseline. */
  readonly generation: number;
  readonly baseline?: { readonly checkId: string; readonly at: string; readonly imageKey?: string; readonly textKey?: string };
  readonly lastCheck?: CheckSummary;
  readonly lastChange?: CheckSummary & { readonly thumbKey?: string };
}

/** A check as kept (its lease: lib/jobs/attempt.ts). */
export interface Check extends Lease {
  readonly id: string;
  readonly monitorId: string;
  readonly status: "queued" | "running" | "done";
  readonly trigger: "scheduled" | "manual";
  readonly queuedAt: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly outcome?: Outcome;
  readonly charged?: number;
  readonly changedPercent?: number;
  /** Changed regions, in the new capture's CSS px. */
  readonly boxes?: readonly { x: number; y: number; width: number; height: number }[];
  readonly images?: { readonly before?: string; readonly after?: string; readonly diff?: string };
  readonly text?: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly tooLarge?: true };
  readonly error?: { readonly code: string; readonly message: string };
  /** What was captured, as the answer of /screenshot says it (the final URL, the title, a capture at the load limit). */
  readonly page?: { readonly url: string | null; readonly title: string; readonly incomplete?: string };
}

const MONITOR_ID = /^mon_[A-Za-z0-9_-]{22}$/;
const CHECK_ID = /^chk_[0-9a-z]{9}[A-Za-z0-9_-]{12}$/;

const newMonitorId = () => `mon_${randomBytes(16).toString("base64url").slice(0, 22)}`;
/** A check's id: its time first, so the monitor's checks sort by it. */
const newCheckId = (now = Date.now()) => `chk_${now.toString(36).padStart(9, "0")}${randomBytes(9).toString("base64url")}`;

const historyExpiry = (now: number) => Math.floor(now / 1000) + MONITOR_HISTORY_DAYS * 86_400;

/** The check row and its FEED row (lib/jobs/feed.ts sends it as the account's share of the workers allows): queued together. */
export function queuedCheckItems(monitor: Pick<Monitor, "id" | "accountId">, trigger: Check["trigger"], now: number) {
  const id = newCheckId(now);
  const check: Check = { id, monitorId: monitor.id, status: "queued", trigger, queuedAt: new Date(now).toISOString() };
  return {
    id,
    items: [
      { Put: { TableName: config.TABLE_NAME, Item: { ...monitorCheckKey(monitor.id, id), ...check, expiresAt: historyExpiry(now) } } },
      {
        Put: {
          TableName: config.TABLE_NAME,
          Item: {
            ...feedCheckKey(monitor.accountId, now, id),
            accountId: monitor.accountId,
            message: { kind: "check", accountId: monitor.accountId, monitorId: monitor.id, checkId: id },
          },
        },
      },
    ],
  };
}

/** Whose secrets a monitor's sealed ones are: they open for it alone. */
const monitorContext = (id: string) => `monitor ${id}`;

/** `spec` as monitor `id` keeps it at rest: the secrets of its request (and so of its options) sealed. */
export async function keptSpec(spec: MonitorSpec, id: string): Promise<KeptSpec> {
  const { open, secret } = splitSecrets(spec.request);
  if (!secret) return spec;
  const sealed = await seal(secret, monitorContext(id));
  return { ...spec, request: open, options: redactedControls(spec.options), sealed: sealed.box, secretKey: sealed.key };
}

/** `monitor` with its secrets back: what its check sends the page, what a change keeps. */
export async function openMonitor(monitor: Monitor): Promise<Monitor> {
  if (monitor.sealed === undefined) return monitor;
  const secret = await openSecrets(monitor.sealed, monitor.secretKey, monitorContext(monitor.id));
  const inOptions = Object.entries(secret).filter(([field]) => field in monitor.options);
  return { ...monitor, request: { ...monitor.request, ...secret }, options: { ...monitor.options, ...Object.fromEntries(inOptions) } };
}

/** Records a new monitor of `accountId`, its first check queued now (its baseline) and its next due after `every`. */
export async function createMonitor(accountId: string, spec: MonitorSpec, now = Date.now()): Promise<{ monitor: Monitor; checkId: string }> {
  const id = newMonitorId();
  const nextDueAt = now + spec.every * 1000;
  const monitor: Monitor = {
    ...(await keptSpec(spec, id)),
    id,
    accountId,
    createdAt: new Date(now).toISOString(),
    paused: false,
    nextDueAt,
    failures: 0,
    generation: 0,
  };
  const first = queuedCheckItems(monitor, "manual", now);
  await transactIf({
    TransactItems: [
      {
        Put: {
          TableName: config.TABLE_NAME,
          Item: { ...monitorKey(accountId, id), ...monitor, openCheck: first.id },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      ...dueMoves(monitor, undefined, nextDueAt),
      ...first.items,
    ],
  });
  return { monitor, checkId: first.id };
}

/** Monitor `id` of `accountId`, or null (another account's is null too). */
export async function getMonitor(accountId: string, id: string): Promise<Monitor | null> {
  if (!MONITOR_ID.test(id)) return null;
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: monitorKey(accountId, id), ConsistentRead: true }));
  return (Item as Monitor | undefined) ?? null;
}

/** The owner of monitor `id`'s webhooks, or null when it is gone (functions/webhook-sender.ts). */
export const monitorHooksOf: MonitorHooksOf = async (accountId, id) => {
  const monitor = await getMonitor(accountId, id);
  return monitor && hooksOf(monitor);
};

/** A monitor as the owner of its webhooks. */
export const hooksOf = (monitor: Monitor) => monitorHooks({ id: monitor.id, accountId: monitor.accountId, webhookUrl: monitor.request.webhookUrl });

/** Every monitor of `accountId`, oldest first. */
export const listMonitors = async (accountId: string): Promise<Monitor[]> =>
  (await queryAll<Monitor>(monitorKey(accountId, "").pk, MONITOR_PREFIX)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));

/** How many monitors `accountId` has. */
export async function countMonitors(accountId: string): Promise<number> {
  let count = 0;
  const pages = queryPages({
    KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
    ExpressionAttributeValues: { ":pk": monitorKey(accountId, "").pk, ":prefix": MONITOR_PREFIX },
    Select: "COUNT",
  });
  for await (const page of pages) count += page.Count ?? 0;
  return count;
}

/** The writes that move a monitor's DUE row from `from` to `to` (either absent: none to delete, none to write). */
export const dueMoves = (monitor: Pick<Monitor, "id" | "accountId">, from: number | undefined, to: number | undefined) => [
  ...(from === undefined ? [] : [{ Delete: { TableName: config.TABLE_NAME, Key: dueKey(from, monitor.accountId, monitor.id) } }]),
  ...(to === undefined
    ? []
    : [
        {
          Put: {
            TableName: config.TABLE_NAME,
            Item: { ...dueKey(to, monitor.accountId, monitor.id), accountId: monitor.accountId, monitorId: monitor.id, dueAt: to },
          },
        },
      ]),
];

type Fields = Record<string, unknown>;

/**
 * Changes `monitor` as it was read: SET `set`, REMOVE `remove`, and its due row to `nextDueAt`
 * (undefined: none, paused), in one transaction that holds only while nobody changed its schedule
 * meanwhile. False when someone did (read it again).
 */
export async function changeMonitor(monitor: Monitor, fields: Fields, remove: readonly string[] = []): Promise<boolean> {
  const nextDueAt = "nextDueAt" in fields ? (fields.nextDueAt as number | undefined) : monitor.nextDueAt;
  const removed = [...remove, ...("nextDueAt" in fields && fields.nextDueAt === undefined ? ["nextDueAt"] : [])];
  const { set, names, values } = setClause(fields);
  const was = monitor.nextDueAt;
  return transactIf({
    TransactItems: [
      {
        Update: {
          TableName: config.TABLE_NAME,
          Key: monitorKey(monitor.accountId, monitor.id),
          UpdateExpression: `${set}${removed.length ? ` REMOVE ${removed.map((name) => `#${name}`).join(", ")}` : ""}`,
          ConditionExpression: was === undefined ? "attribute_exists(pk) AND attribute_not_exists(nextDueAt)" : "attribute_exists(pk) AND nextDueAt = :was",
          ExpressionAttributeNames: { ...names, ...Object.fromEntries(removed.map((name) => [`#${name}`, name])) },
          ExpressionAttributeValues: { ...values, ...(was === undefined ? {} : { ":was": was }) },
        },
      },
      ...(nextDueAt !== was ? dueMoves(monitor, was, nextDueAt) : []),
    ],
  });
}

/** Updates fields of a monitor that its schedule does not depend on (a check's results); nothing when it is gone. */
export async function noteOnMonitor(
  monitor: Pick<Monitor, "id" | "accountId">,
  fields: Fields,
  condition?: { expression: string; values: Fields },
): Promise<boolean> {
  const { set, names, values } = setClause(fields);
  return conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: monitorKey(monitor.accountId, monitor.id),
        UpdateExpression: set,
        ConditionExpression: `attribute_exists(pk)${condition ? ` AND ${condition.expression}` : ""}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ...condition?.values },
      }),
    ),
  );
}

/** Deletes a monitor and its due row (its checks and events expire with their history). */
export async function deleteMonitor(monitor: Monitor): Promise<void> {
  await transactIf(
    {
      TransactItems: [
        { Delete: { TableName: config.TABLE_NAME, Key: monitorKey(monitor.accountId, monitor.id) } },
        ...(monitor.nextDueAt === undefined
          ? []
          : [{ Delete: { TableName: config.TABLE_NAME, Key: dueKey(monitor.nextDueAt, monitor.accountId, monitor.id) } }]),
      ],
    },
    [],
  );
}

/** Queues a check of `monitor` now (POST .../check): its id. */
async function queueCheck(monitor: Monitor, trigger: Check["trigger"], now = Date.now()): Promise<string> {
  const queued = queuedCheckItems(monitor, trigger, now);
  await transactIf(
    {
      TransactItems: [
        ...queued.items,
        {
          Update: {
            TableName: config.TABLE_NAME,
            Key: monitorKey(monitor.accountId, monitor.id),
            // Queued only when its monitor has no open check (checkNow): this one is it.
            UpdateExpression: "SET openCheck = :id",
            ExpressionAttributeValues: { ":id": queued.id },
          },
        },
      ],
    },
    [],
  );
  return queued.id;
}

/**
 * A queued check older than this (and twice its monitor's interval) is taken for lost (its message
 * went to the dead-letter queue before a worker took it): it no longer holds its monitor's place.
 */
const QUEUED_CHECK_LOST_MS = 3_600_000;

/** Whether `check` of `monitor` waits to run: queued, and not lost (QUEUED_CHECK_LOST_MS). */
const waiting = (check: Check | null, monitor: Pick<Monitor, "every">, now: number) =>
  check?.status === "queued" && now - Date.parse(check.queuedAt) < Math.max(QUEUED_CHECK_LOST_MS, 2 * monitor.every * 1000);

/** Whether check `checkId` of `monitor` is still to end: running, or waiting to run. */
export async function stillOpen(monitor: Pick<Monitor, "id" | "every">, checkId: string, now = Date.now()): Promise<boolean> {
  const check = await getCheck(monitor.id, checkId);
  return check?.status === "running" || waiting(check, monitor, now);
}

/** Check `checkId` of monitor `monitorId`, or null. */
export async function getCheck(monitorId: string, checkId: string): Promise<Check | null> {
  if (!CHECK_ID.test(checkId)) return null;
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: monitorCheckKey(monitorId, checkId), ConsistentRead: true }));
  return (Item as Check | undefined) ?? null;
}

/** The newest `limit` checks of monitor `monitorId`, newest first, and where the next page starts. */
export async function listChecks(monitorId: string, limit: number, before?: string): Promise<{ checks: Check[]; next: string | null }> {
  const page = await documents.send(
    new QueryCommand({
      TableName: config.TABLE_NAME,
      KeyConditionExpression: before ? "pk = :pk AND sk BETWEEN :prefix AND :before" : "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: {
        ":pk": monitorCheckKey(monitorId, "").pk,
        ":prefix": MONITOR_CHECK_PREFIX,
        ...(before ? { ":before": `${MONITOR_CHECK_PREFIX}${before}` } : {}),
      },
      ScanIndexForward: false,
      // One more than asked: the cursor is exclusive (the check named by `before` is not listed again).
      Limit: limit + 1,
    }),
  );
  const found = ((page.Items ?? []) as Check[]).filter((check) => check.id !== before);
  const checks = found.slice(0, limit);
  return { checks, next: found.length > limit || page.LastEvaluatedKey ? (checks.at(-1)?.id ?? null) : null };
}

/** Check `checkId` of `monitor` as a piece of the workers' work (lib/jobs/attempt.ts): charged under its id. */
export const checkPiece = (monitor: Pick<Monitor, "id" | "accountId">, checkId: string): Piece => ({
  kind: "check",
  accountId: monitor.accountId,
  owner: monitor.id,
  id: checkId,
  key: monitorCheckKey(monitor.id, checkId),
  requestId: checkId,
});

/**
 * Takes check `checkId` of `monitor` for a worker until `leaseUntil` (lib/jobs/attempt.ts, takeLease):
 * a queued one, or a running one whose worker's lease ended (it died). The check as taken, or null
 * when it is not to be run.
 */
export const startCheck = (
  monitor: Pick<Monitor, "id" | "accountId">,
  checkId: string,
  leaseUntil: number,
  now = Date.now(),
  receives = 1,
  slot?: Lease["slot"],
): Promise<Check | null> => takeLease<Check>(checkPiece(monitor, checkId), leaseUntil, receives, slot, now);

/** Ends a running check with its outcome (only if it is still running): its lease closed, its monitor's open check let go. */
export async function finishCheck(
  monitor: Pick<Monitor, "id" | "accountId">,
  checkId: string,
  outcome: Omit<Check, "id" | "monitorId" | "status" | "trigger" | "queuedAt">,
  now = Date.now(),
) {
  const { set, names, values } = setClause({ ...outcome, status: "done", finishedAt: new Date(now).toISOString() });
  await conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: monitorCheckKey(monitor.id, checkId),
        UpdateExpression: `${set} REMOVE leaseUntil`,
        ConditionExpression: "#status = :running",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ":running": "running" },
      }),
    ),
  );
  await closeLease(checkPiece(monitor, checkId));
  await letGoOpenCheck(monitor, checkId);
}

/** Drops a check that will not run (its monitor paused or gone before it started), and lets its monitor's open check go. */
export async function dropCheck(monitor: Pick<Monitor, "id" | "accountId">, checkId: string): Promise<void> {
  await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: monitorCheckKey(monitor.id, checkId) }));
  await letGoOpenCheck(monitor, checkId);
}

/** Forgets `monitor`'s open check if it is `checkId` (the schedule queues the next one again). */
const letGoOpenCheck = (monitor: Pick<Monitor, "id" | "accountId">, checkId: string) =>
  conditionHeld(
    documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: monitorKey(monitor.accountId, monitor.id),
        UpdateExpression: "REMOVE openCheck",
        ConditionExpression: "openCheck = :id",
        ExpressionAttributeValues: { ":id": checkId },
      }),
    ),
  );

/** What a check of `monitor` costs: a screenshot's price, or content's for text alone (a capture and its text are one page load). */
export const checkPrice = (monitor: Pick<Monitor, "mode">) => (monitor.mode === "text" ? PRICES.content : PRICES.screenshot);

/** Monitor `id` if it is `accountId`'s; another account's is as unknown as one that does not exist. */
export async function ownMonitor(accountId: string, id: string): Promise<Monitor> {
  const monitor = await getMonitor(accountId, id);
  if (!monitor) throw new AppError("NOT_FOUND", "No such monitor.");
  return monitor;
}

/** Queues a check of `accountId`'s monitor `id` now (POST .../check, the MCP tool check_monitor): its id. */
export async function checkNow(accountId: string, id: string): Promise<{ monitor: Monitor; checkId: string }> {
  const monitor = await ownMonitor(accountId, id);
  if (monitor.paused) throw new AppError("MONITOR_PAUSED", 'The monitor is paused; resume it with PATCH {"paused": false} first.');
  // Asked again while a check waits to run, the answer is that one: a loop of calls cannot grow the
  // account's backlog. (One already running may be seeing what the monitor watched before a change.)
  const open = monitor.openCheck ? await getCheck(monitor.id, monitor.openCheck) : null;
  if (open && waiting(open, monitor, Date.now())) return { monitor, checkId: open.id };
  const checkId = await queueCheck(monitor, "manual");
  await feed(accountId).catch((error: unknown) =>
    log.error("sending a monitor's check failed; the reconciler will", { monitorId: monitor.id, error: describeError(error) }),
  );
  return { monitor, checkId };
}
