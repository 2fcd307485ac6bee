import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { documents, ignoreFailedCondition } from "../billing/dynamodb.js";
import { receiversKey, webhookSecretKey } from "../billing/keys.js";
import { releaseSlot, takeSlot } from "../billing/slots.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { guardedStatus } from "../metadata/fetch.js";
import { type Attempt, type Delivery, type HookOwner, type HookOwners, jobHooks } from "./events.js";
import { enqueueAttempt, type WebhookMessage } from "./queue.js";
import { getJob } from "./store.js";

// Webhooks of jobs and monitors (docs/api.md, "Jobs", "Monitors"): events (kept and queued by
// lib/jobs/events.ts) POSTed to the job's (or monitor's) webhookUrl, signed as the
// Standard Webhooks specification defines (webhook-id, webhook-timestamp, webhook-signature:
// "v1," and the base64 HMAC-SHA256 of "id.timestamp.body" with the account's secret), each attempt
// through the network guard with a short timeout and no redirect followed, retried with backoff
// for about a day on anything but a 2xx. Each event and its attempts are kept with its job (or monitor).
// The senders are shared by every account, so one account's slow or dead receivers hold at most
// SENDERS_PER_ACCOUNT of them, for one short attempt at a time: an account's attempts, to whichever
// of its receivers (as many origins as it likes: a wildcard domain is free), run SENDERS_PER_ACCOUNT
// at a time (slots: lib/billing/slots.ts), and an account whose receivers fail RECEIVER_STRIKES
// times in a row is left alone for a while (its attempts wait on the queue, not in a sender).

/** Seconds before each retry after the first attempt (about a day in all), as Standard Webhooks' senders do. */
const RETRY_SECONDS = [5, 30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600];
/** An attempt gives up after this long (a receiver should answer at once and work later). */
const ATTEMPT_TIMEOUT_MS = 5_000;
/** An account's attempts made at once, whatever their receivers (of the 5 senders: lib/routes.ts, consumers). */
const SENDERS_PER_ACCOUNT = 1;
/** Failures in a row of an account's receivers after which they are backed off, and the first and longest backoff. */
const RECEIVER_STRIKES = 3;
const RECEIVER_BACKOFF_MS = [30_000, 15 * 60_000] as const;
/** An attempt whose account's senders are all busy waits this long on the queue. */
const BUSY_RECEIVER_SECONDS = 1;
/** SQS delays a message 15 minutes at most: a later attempt waits in steps. */
const MAX_DELAY_SECONDS = 900;

const SECRET_PREFIX = "whsec_";

/** Makes (or replaces) the account's webhook secret; the answer is the only place it is shown. */
export async function rotateWebhookSecret(accountId: string, now = Date.now()): Promise<string> {
  const secret = `${SECRET_PREFIX}${randomBytes(24).toString("base64")}`;
  await documents.send(
    new PutCommand({ TableName: config.TABLE_NAME, Item: { ...webhookSecretKey(accountId), secret, createdAt: new Date(now).toISOString() } }),
  );
  return secret;
}

/** The account's webhook secret, or null when it has none. */
export async function webhookSecretOf(accountId: string): Promise<string | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: webhookSecretKey(accountId), ConsistentRead: true }));
  return (Item?.secret as string | undefined) ?? null;
}

/** The webhook-signature header of `body` sent as message `id` at `timestamp` (unix seconds). */
function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** One POST of `payload` to `url`, signed; the status it got, or why it got none. */
async function attempt(url: string, secret: string, id: string, payload: string, now: number): Promise<Attempt> {
  const timestamp = Math.floor(now / 1000);
  const sent = await guardedStatus(
    new URL(url),
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Shotline-Webhooks/1.0",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook(secret, id, timestamp, payload),
      },
      body: payload,
    },
    ATTEMPT_TIMEOUT_MS,
  );
  return { at: new Date(now).toISOString(), ...sent };
}

/** A claimed attempt is another's to make again this long after its own timeout (its sender died). */
const CLAIM_MARGIN_MS = 20_000;

/**
 * Claims attempt `message.attempt` of its delivery: the delivery as it is, or null when that
 * attempt is not to be made here (made already, claimed by a live sender: the same attempt's
 * message twice, as an event announced again queues it; or the delivery is gone with its job).
 */
async function claimAttempt(owner: HookOwner, message: WebhookMessage, now: number): Promise<Delivery | null> {
  try {
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: owner.key(message.deliveryId),
        UpdateExpression: "SET claimedUntil = :until",
        ConditionExpression: "#status = :pending AND size(attempts) = :before AND (attribute_not_exists(claimedUntil) OR claimedUntil < :now)",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":pending": "pending", ":before": message.attempt - 1, ":until": now + ATTEMPT_TIMEOUT_MS + CLAIM_MARGIN_MS, ":now": now },
        ReturnValues: "ALL_NEW",
      }),
    );
    return Attributes as Delivery;
  } catch (error) {
    ignoreFailedCondition(error);
    return null;
  }
}

/** The queue's delay, in whole seconds, for a message due at `dueAt`: none when due, at most MAX_DELAY_SECONDS (it waits again then). */
const delayUntil = (dueAt: number, now: number) => Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil((dueAt - now) / 1000)));

/** Queues the attempt after `message`'s (made at `madeAt`, failed, with a retry left), due after its backoff. */
async function queueNext(message: WebhookMessage, madeAt: number, now: number): Promise<void> {
  const next: WebhookMessage = {
    ...message,
    attempt: message.attempt + 1,
    dueAt: madeAt + RETRY_SECONDS[message.attempt - 1]! * 1000 * config.WEBHOOK_BACKOFF_SCALE,
  };
  await enqueueAttempt(next, delayUntil(next.dueAt, now));
}

/**
 * A message whose attempt could not be claimed: when that attempt was made and kept and the
 * delivery still waits (pending, this attempt its last), its sender may have died before queueing
 * the next one, which is queued again (a second message for it is claimed once, like any).
 */
async function queueNextAgain(owner: HookOwner, message: WebhookMessage, now: number): Promise<void> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: owner.key(message.deliveryId), ConsistentRead: true }));
  const delivery = Item as Delivery | undefined;
  if (delivery?.status !== "pending" || delivery.attempts.length !== message.attempt) return;
  await queueNext(message, Date.parse(delivery.attempts.at(-1)!.at), now);
}

/**
 * Handles a delivery message: not yet due, it waits on the queue again (in steps of at most 15
 * minutes); due, it claims the attempt (once: a second message for it does nothing), makes it,
 * keeps its outcome, and queues the next one after a failure (anything but a 2xx), until
 * RETRY_SECONDS run out. Its message coming back after the outcome was kept (its sender died or
 * could not queue the next) queues the next attempt again.
 */
export async function deliver(message: WebhookMessage, job: HookOwner, now = Date.now()): Promise<void> {
  const grouped: WebhookMessage = { ...message, accountId: job.accountId };
  if (message.dueAt > now) {
    await enqueueAttempt(grouped, delayUntil(message.dueAt, now));
    return;
  }
  // An account whose receivers were backed off after failing: the attempt waits on the queue (it is not spent).
  const backedOff = await receiversUntil(job.accountId);
  if (backedOff > now) {
    await enqueueAttempt(grouped, delayUntil(backedOff, now));
    return;
  }
  // SENDERS_PER_ACCOUNT attempts at a time of one account, to whichever receivers: the others wait on the queue, not in a sender.
  const pool = `hook#${job.accountId}`;
  const holder = randomUUID();
  const slot = await takeSlot(pool, SENDERS_PER_ACCOUNT, holder, now + ATTEMPT_TIMEOUT_MS + CLAIM_MARGIN_MS);
  if (slot === null) {
    await enqueueAttempt(grouped, BUSY_RECEIVER_SECONDS);
    return;
  }
  try {
    await attemptOnce(grouped, job, now);
  } finally {
    await releaseSlot(pool, slot, holder).catch(() => undefined); // its lease ends it anyway
  }
}

/** When the account's receivers may be tried again (epoch ms; 0 when they are not backed off). */
async function receiversUntil(accountId: string): Promise<number> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: receiversKey(accountId), ConsistentRead: true }));
  return Number(Item?.until ?? 0);
}

/** Records an attempt's outcome for its account's receivers: a success forgets their failures; the RECEIVER_STRIKES-th failure in a row (and each after) backs them off, doubling. */
async function noteReceivers(accountId: string, delivered: boolean, now: number): Promise<void> {
  const key = receiversKey(accountId);
  if (delivered) {
    // Forgotten whole (an account whose receivers never failed has no row to keep).
    await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: key }));
    return;
  }
  const { Attributes } = await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: key,
      UpdateExpression: "ADD failures :one SET expiresAt = :expires",
      ExpressionAttributeValues: { ":one": 1, ":expires": Math.floor(now / 1000) + 86_400 },
      ReturnValues: "ALL_NEW",
    }),
  );
  const failures = Number(Attributes?.failures ?? 1);
  if (failures < RECEIVER_STRIKES) return;
  const backoff = Math.min(RECEIVER_BACKOFF_MS[1], RECEIVER_BACKOFF_MS[0] * 2 ** (failures - RECEIVER_STRIKES)) * config.WEBHOOK_BACKOFF_SCALE;
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: key,
      UpdateExpression: "SET #until = :until",
      ExpressionAttributeNames: { "#until": "until" },
      ExpressionAttributeValues: { ":until": now + backoff },
    }),
  );
}

/** Makes attempt `message.attempt` of its delivery, once, holding one of its account's sender slots. */
async function attemptOnce(message: WebhookMessage, job: HookOwner, now: number): Promise<void> {
  const delivery = await claimAttempt(job, message, now);
  if (!delivery) return queueNextAgain(job, message, now);
  const secret = await webhookSecretOf(job.accountId);
  const outcome: Attempt = secret
    ? await attempt(job.webhookUrl!, secret, delivery.id, delivery.payload, now)
    : { at: new Date(now).toISOString(), error: "no webhook secret" };
  const delivered = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
  if (secret) await noteReceivers(job.accountId, delivered, now);
  const retryIn = RETRY_SECONDS[message.attempt - 1];
  const status = delivered ? "delivered" : retryIn === undefined || !secret ? "failed" : "pending";
  const attempts = [...delivery.attempts, outcome];
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: job.key(delivery.id),
      UpdateExpression: "SET attempts = :attempts, #status = :status REMOVE claimedUntil",
      // Only this attempt writes it (a sender whose claim ran out and was taken over finds it kept already).
      ConditionExpression: "size(attempts) = :before",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":attempts": attempts,
        ":status": status,
        ":before": delivery.attempts.length,
      },
    }),
  );
  if (status === "pending") await queueNext(message, now, now);
  else if (status === "failed") {
    log.warn("webhook not delivered", {
      ...job.ref,
      deliveryId: delivery.id,
      attempts: attempts.length,
      last: describeError(outcome.error ?? outcome.status),
    });
  }
}

/** Handles delivery attempt `message` of a job's (or a monitor's, or a crawl's) webhook; its owner gone, there is nothing to deliver. */
export async function sendAttempt(message: WebhookMessage, owners: HookOwners): Promise<"done"> {
  // A monitor's messages always name its account (its key); a job's and a crawl's are found by their id.
  const owner =
    message.monitorId !== undefined
      ? await owners.monitor(message.accountId ?? "", message.monitorId)
      : message.crawlId !== undefined
        ? await owners.crawl(message.crawlId)
        : await getJob(message.jobId ?? "").then((job) => job && jobHooks(job));
  if (owner) await deliver(message, owner);
  return "done";
}
