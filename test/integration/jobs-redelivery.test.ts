// A job item delivered again: after its worker died mid-item (its lease over, its charge made and
// pending), and twice at once. The worker runs in process against the shared stack's DynamoDB Local,
// s3rver and Chromium, as Lambda runs it; the dead worker's state is left by the very functions a
// worker calls (take the item, charge it) and nothing after them. One render, charged once.
import { ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, inject, it } from "vitest";
import { admin, signUp } from "../../dev/harness/dev-process.js";
import { createQueues } from "../../dev/jobs-local.js";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { startSqsLocal } from "../../dev/sqs-local.js";
import { canaryHits } from "../helpers/api.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";

// The fixture pages are on loopback: let this process's network guard through to them, as the
// stack's is. A queue of this file's own (the local SQS), for the messages its webhooks send.
let sqs = await startSqsLocal();
const queues = await createQueues(sqs.endpoint, 60);
afterAll(() => sqs.stop());
useSharedStackInProcess({
  ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host,
  SQS_ENDPOINT: sqs.endpoint,
  JOBS_QUEUE_URL: queues.jobs.queueUrl,
  WEBHOOKS_QUEUE_URL: queues.webhooks.queueUrl,
  // Retries a thousandth of their schedule apart, as the stack's in the other files.
  WEBHOOK_BACKOFF_SCALE: "0.001",
});
const { GetCommand, QueryCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
const { documents } = await import("../../lib/billing/dynamodb.js");
const { reconcileCharges } = await import("../../lib/billing/ledger.js");
const { placeHold } = await import("../../lib/billing/holds.js");
const { takeSlot } = await import("../../lib/billing/slots.js");
const { config } = await import("../../lib/config.js");
const { jobRequest } = await import("../../lib/api/schemas.js");
const { storeRequests } = await import("../../lib/jobs/requests.js");
const { chargeItem, runItem } = await import("../../lib/jobs/run.js");
const { createJob, finishItem, getJob, newJobId, readJob, reconcileHolds, startItem } = await import("../../lib/jobs/store.js");
const { deliver, rotateWebhookSecret } = await import("../../lib/jobs/webhooks.js");
const { jobHooks, readDeliveries, sendEvent } = await import("../../lib/jobs/events.js");

const base = inject("baseUrl");
let counter = 0;

/** Counts job `id`'s items as sent: these tests deliver their messages themselves (the stack's reconciler must not feed them to its own worker). */
const markSent = (id: string) =>
  documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: { pk: `JOB#${id}`, sk: "JOB" },
      UpdateExpression: "SET sent = #count",
      ExpressionAttributeNames: { "#count": "count" },
    }),
  );

/** An account with $10, and a job of `count` screenshot items of it (with `webhookUrl`, if given). */
async function jobOf(count: number, webhookUrl?: string, path = "/simple") {
  const email = `redelivery-${Date.now()}-${counter++}@jobs.test`;
  const { api_key: key, account_id: accountId } = await signUp(base, email);
  admin(inject("localDir"), "credit", accountId, "10");
  const { items } = jobRequest.parse({
    endpoint: "screenshot",
    items: Array.from({ length: count }, () => ({ url: `${inject("fixtureUrl")}${path}`, width: 320, deviceScaleFactor: 1 })),
  });
  const id = newJobId();
  // As POST /api/v1/jobs does: the items' price held, their requests stored, the job recorded.
  await placeHold(accountId, id, count * 5_000);
  await storeRequests(id, items);
  const requests = items.map((request) => ({ request, timeout: request.timeout, price: 5_000 }));
  const { job } = await createJob(id, accountId, "screenshot", requests, webhookUrl ? { webhookUrl } : {});
  await markSent(id);
  // Item 0's message as the queue delivers it (its request in it).
  return { job, key, message: { jobId: id, index: 0, timeout: items[0]!.timeout, request: items[0] } };
}

/** The account's money: what it may spend, and what its jobs hold (a charge takes from the hold, a refund gives to the balance). */
const balance = async (key: string) => {
  const usage = (await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
    balance_micro_usd: number;
    held_micro_usd: number;
  };
  return usage.balance_micro_usd + usage.held_micro_usd;
};

/** The account's usage entries and the PENDING markers of the item's charge. */
async function ledgerOf(accountId: string, requestId: string) {
  const query = async (pk: string) =>
    (await documents.send(new QueryCommand({ TableName: config.TABLE_NAME, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": pk } })))
      .Items ?? [];
  return {
    entries: (await query(`ACCT#${accountId}`)).filter((i) => i.requestId === requestId),
    pending: (await query("PENDING")).filter((i) => i.requestId === requestId),
  };
}

describe("a job item delivered again", () => {
  it("after its worker died mid-item: taken over once the lease is over, rendered, and charged once", async () => {
    const { job, key, message } = await jobOf(1);
    const before = await balance(key);
    // The dead worker: took the item (its lease now over) and charged it, then nothing.
    const taken = (await startItem(job, 0, Date.now() - 1))!;
    await chargeItem(job, 0, 5_000, taken);
    expect(await balance(key)).toBe(before - 5_000);
    expect((await ledgerOf(job.accountId, `${job.id}.0`)).pending).toHaveLength(1);
    // The queue delivers the message again.
    expect(await runItem(message, 2)).toBe("done");
    const { items } = (await readJob(job.id))!;
    expect(items[0]).toMatchObject({ status: "succeeded", charged: 5_000 });
    expect(await balance(key)).toBe(before - 5_000);
    const ledger = await ledgerOf(job.accountId, `${job.id}.0`);
    expect(ledger.entries.map((e) => [e.status, e.delivered, e.amount])).toEqual([["charged", true, 5_000]]);
    expect(ledger.pending).toEqual([]);
  }, 60_000);

  it("twice at once: one runs, the other finds it held; one charge", async () => {
    const { job, key, message } = await jobOf(1);
    const before = await balance(key);
    const outcomes = await Promise.all([runItem(message, 1), runItem(message, 1)]);
    expect(outcomes.sort()).toEqual(["busy", "done"]);
    expect((await readJob(job.id))!.items[0]).toMatchObject({ status: "succeeded", charged: 5_000 });
    expect(await balance(key)).toBe(before - 5_000);
    // Delivered once more after it ended: nothing happens.
    expect(await runItem(message, 2)).toBe("done");
    expect(await balance(key)).toBe(before - 5_000);
    expect((await ledgerOf(job.accountId, `${job.id}.0`)).entries).toHaveLength(1);
  }, 60_000);

  it("after its worker died between ending the item and announcing it: the redelivery completes the job, once", async () => {
    const { job, message } = await jobOf(1, `${inject("fixtureUrl")}/hooks/in?id=redelivered-${Date.now()}`);
    await rotateWebhookSecret(job.accountId);
    // The dead worker: took the item and ended it, then nothing (no job.completed queued).
    await startItem(job, 0, Date.now() + 60_000);
    await finishItem(job.id, 0, { status: "failed", charged: 0, error: { code: "INTERNAL_ERROR", message: "gone" } });
    expect(await readDeliveries(job.id)).toEqual([]);
    // The queue delivers its message again, twice: the job is noted complete and announced once.
    expect(await runItem(message, 2)).toBe("done");
    expect(await runItem(message, 3)).toBe("done");
    expect((await getJob(job.id))!.endedItems).toEqual(new Set([0]));
    const deliveries = await readDeliveries(job.id);
    expect(deliveries.map((d) => d.type)).toEqual(["job.completed"]);
    expect(JSON.parse(deliveries[0]!.payload).data).toMatchObject({ status: "completed", counts: { failed: 1, succeeded: 0 } });
  });

  it("a dead worker's charge is left alone by the reconciler while the queue may redeliver it, then refunded", async () => {
    // Charges backdated past the grace period (as test/integration/reconcile.test.ts does), so that no
    // other file's requests in flight are old enough for the reconciler.
    const grace = config.RECONCILE_GRACE_SECONDS * 1000;
    const deadAgo = async (minutes: number) => {
      const { job, key } = await jobOf(1);
      const taken = (await startItem(job, 0, Date.now() - 1))!;
      await chargeItem(job, 0, 5_000, { ...taken, chargeAt: new Date(Date.now() - minutes * 60_000).toISOString() });
      return { job, key };
    };
    // Started 10 minutes ago: past a request's grace, within the item's hold (an hour): held.
    const recent = await deadAgo(10);
    const recentBalance = await balance(recent.key);
    // Started two hours ago: past its hold, the queue done with it: refunded.
    const old = await deadAgo(120);
    const oldBalance = await balance(old.key);
    await reconcileCharges(Date.now(), grace);
    expect(await balance(recent.key)).toBe(recentBalance);
    expect((await ledgerOf(recent.job.accountId, `${recent.job.id}.0`)).pending).toHaveLength(1);
    expect(await balance(old.key)).toBe(oldBalance + 5_000);
    expect((await ledgerOf(old.job.accountId, `${old.job.id}.0`)).entries.map((e) => e.status)).toEqual(["refunded"]);
  });

  it("a webhook URL refused at delivery (its name now resolves to a private address): the attempt fails, nothing reaches it", async () => {
    // Accepted when the job was made (as a public name would be), the canary on loopback by delivery:
    // the guard refuses it there too, before any connection.
    const { job } = await jobOf(1, `${inject("canaryUrl")}/hook`);
    await rotateWebhookSecret(job.accountId);
    await sendEvent(job, "job.completed", "completed", { status: "completed" });
    const [pending] = await readDeliveries(job.id);
    await deliver({ kind: "webhook", jobId: job.id, deliveryId: pending!.id, attempt: 1, dueAt: Date.now() }, jobHooks(job));
    const [delivery] = await readDeliveries(job.id);
    expect(delivery!.attempts).toHaveLength(1);
    expect(delivery!.attempts[0]!.error).toMatch(/a private address/);
    expect(delivery!.status).toBe("pending");
    expect((await canaryHits()).filter((hit) => hit.includes("/hook"))).toEqual([]);
  });

  it("the same attempt asked for twice at once (an event announced again queues it again): one POST, one attempt kept", async () => {
    const hook = `twice-${Date.now()}`;
    const { job } = await jobOf(1, `${inject("fixtureUrl")}/hooks/in?id=${hook}`);
    await rotateWebhookSecret(job.accountId);
    await sendEvent(job, "job.completed", "completed", { status: "completed" });
    await sendEvent(job, "job.completed", "completed", { status: "completed" });
    const deliveries = await readDeliveries(job.id);
    expect(deliveries).toHaveLength(1);
    const message = { kind: "webhook", jobId: job.id, deliveryId: deliveries[0]!.id, attempt: 1, dueAt: Date.now() } as const;
    await Promise.all([deliver(message, jobHooks(job)), deliver(message, jobHooks(job))]);
    expect((await readDeliveries(job.id)).map((d) => [d.status, d.attempts.length])).toEqual([["delivered", 1]]);
    expect(await (await fetch(`${inject("fixtureUrl")}/hooks/seen?id=${hook}`)).json()).toHaveLength(1);
  });

  it("a webhook that could not be queued: the item stands, charged once; its message comes back and queues it", async () => {
    const hook = `unqueued-${Date.now()}`;
    const { job, key, message } = await jobOf(1, `${inject("fixtureUrl")}/hooks/in?id=${hook}`);
    await rotateWebhookSecret(job.accountId);
    const before = await balance(key);
    // The queue is down (this file's local SQS, stopped: a real fault, no mock) when the item ends.
    const port = Number(new URL(sqs.endpoint).port);
    await sqs.stop();
    await expect(runItem(message, 1)).rejects.toThrow();
    expect((await readJob(job.id))!.items[0]).toMatchObject({ status: "succeeded", charged: 5_000 });
    expect(await balance(key)).toBe(before - 5_000);
    // The queue is back (empty: it kept nothing) and delivers the item's message again.
    sqs = await startSqsLocal(port);
    await createQueues(sqs.endpoint, 60);
    expect(await runItem(message, 2)).toBe("done");
    expect(await balance(key)).toBe(before - 5_000);
    const client = new SQSClient({ endpoint: sqs.endpoint, region: "us-east-1", credentials: LOCAL_CREDENTIALS });
    const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: queues.webhooks.queueUrl, MaxNumberOfMessages: 10 }));
    client.destroy();
    expect(Messages).toHaveLength(1);
    await deliver(JSON.parse(Messages[0]!.Body!), jobHooks(job));
    expect((await readDeliveries(job.id)).map((d) => [d.type, d.status])).toEqual([["job.completed", "delivered"]]);
    const received = (await (await fetch(`${inject("fixtureUrl")}/hooks/seen?id=${hook}`)).json()) as { body: string }[];
    expect(received.map((r) => JSON.parse(r.body).data.counts)).toEqual([{ succeeded: 1, failed: 0, cancelled: 0 }]);
  }, 60_000);

  it("a retry that could not be queued: the failed attempt's message comes back and queues it", async () => {
    const hook = `unretried-${Date.now()}`;
    const { job } = await jobOf(1, `${inject("fixtureUrl")}/hooks/in?id=${hook}&fail=1`);
    await rotateWebhookSecret(job.accountId);
    await sendEvent(job, "job.completed", "completed", { status: "completed" });
    const [pending] = await readDeliveries(job.id);
    const first = { kind: "webhook", jobId: job.id, deliveryId: pending!.id, attempt: 1, dueAt: Date.now() } as const;
    // The queue is down (this file's local SQS, stopped: a real fault) when the first attempt, a 500, is to queue the next.
    const port = Number(new URL(sqs.endpoint).port);
    await sqs.stop();
    await expect(deliver(first, jobHooks(job))).rejects.toThrow();
    expect((await readDeliveries(job.id)).map((d) => [d.status, d.attempts.map((a) => a.status)])).toEqual([["pending", [500]]]);
    sqs = await startSqsLocal(port);
    await createQueues(sqs.endpoint, 60);
    // The first attempt's message comes back: the attempt is not made again, the next is queued.
    await deliver(first, jobHooks(job));
    const client = new SQSClient({ endpoint: sqs.endpoint, region: "us-east-1", credentials: LOCAL_CREDENTIALS });
    const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: queues.webhooks.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 5 }));
    client.destroy();
    expect(Messages.map((m) => JSON.parse(m.Body!).attempt)).toEqual([2]);
    await deliver(JSON.parse(Messages[0]!.Body!), jobHooks(job));
    expect((await readDeliveries(job.id)).map((d) => [d.status, d.attempts.map((a) => a.status)])).toEqual([["delivered", [500, 204]]]);
    expect(await (await fetch(`${inject("fixtureUrl")}/hooks/seen?id=${hook}`)).json()).toHaveLength(2);
  }, 60_000);

  it("an item that fails as the customer's (its page a 404) is refunded, and its slot stays held as long again as it ran", async () => {
    const { job, key, message } = await jobOf(1, undefined, "/not-found");
    const before = await balance(key);
    const holder = `test-${Date.now()}`;
    const slot = (await takeSlot(`items#${job.accountId}`, 3, holder, Date.now() + 60_000))!;
    const started = Date.now();
    expect(await runItem({ ...message, accountId: job.accountId, slot: { index: slot, holder } }, 1)).toBe("done");
    const ended = Date.now();
    expect((await readJob(job.id))!.items[0]).toMatchObject({ status: "failed", charged: 0, error: { code: "INVALID_URL" } });
    expect(await balance(key)).toBe(before);
    // Held on, by the same holder, until about as long after its end as it ran.
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: `SLOT#items#${job.accountId}`, sk: String(slot) } }));
    expect(Item!.holder).toBe(holder);
    expect(Item!.leaseUntil).toBeGreaterThan(ended);
    expect(Item!.leaseUntil).toBeLessThanOrEqual(ended + (ended - started));
  }, 60_000);

  it("a message for no job (expired, or made up) is spent without a charge", async () => {
    expect(await runItem({ jobId: newJobId(), index: 0, timeout: 30 }, 1)).toBe("done");
  });

  it("a hold whose job is gone (never recorded, or expired) or has ended gives back what it holds, once, and goes", async () => {
    // A hold placed by a request that died before recording its job.
    const { api_key: key, account_id: accountId } = await signUp(base, `orphan-${Date.now()}-${counter++}@jobs.test`);
    const orphan = newJobId();
    await placeHold(accountId, orphan, 50_000);
    const usage = async () => (await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, number>;
    expect(await usage()).toMatchObject({ balance_micro_usd: 200_000, held_micro_usd: 50_000 });
    // Young, it may be a job still being recorded: left alone.
    await reconcileHolds(Date.now());
    expect(await usage()).toMatchObject({ balance_micro_usd: 200_000, held_micro_usd: 50_000 });
    await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: { pk: "HOLD", sk: orphan },
        UpdateExpression: "SET createdAt = :old",
        ExpressionAttributeValues: { ":old": new Date(Date.now() - 11 * 60_000).toISOString() },
      }),
    );
    // Twice (the stack's own reconciler may run meanwhile): given back once.
    await reconcileHolds(Date.now());
    await reconcileHolds(Date.now());
    expect(await usage()).toMatchObject({ balance_micro_usd: 250_000, held_micro_usd: 0 });
    expect((await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: "HOLD", sk: orphan } }))).Item).toBeUndefined();
    // A job whose item ended without a charge or a release (its worker died between the two): the rest comes back.
    const { job } = await jobOf(1);
    const taken = (await startItem(job, 0, Date.now() + 60_000))!;
    expect(taken.price).toBe(5_000);
    await finishItem(job.id, 0, { status: "failed", charged: 0, error: { code: "INTERNAL_ERROR", message: "test" } });
    const before = (await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: "HOLD", sk: job.id } }))).Item;
    expect(before).toMatchObject({ held: 5_000 });
    await reconcileHolds(Date.now());
    expect((await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: "HOLD", sk: job.id } }))).Item).toBeUndefined();
  });

  it("an item with a slow page and an upload that never answers ends inside its worker's limit, with its result", async () => {
    const { account_id: accountId } = await signUp(base, `bounded-${Date.now()}-${counter++}@jobs.test`);
    const { items } = jobRequest.parse({
      endpoint: "screenshot",
      items: [
        { url: `${inject("fixtureUrl")}/simple?ttfb=3000`, width: 320, deviceScaleFactor: 1, timeout: 10, upload: { url: `${inject("fixtureUrl")}/zoo/hang` } },
      ],
    });
    const id = newJobId();
    await placeHold(accountId, id, 5_000);
    await storeRequests(id, items);
    await createJob(id, accountId, "screenshot", [{ request: items[0], timeout: 10, price: 5_000 }]);
    await markSent(id);
    // A worker limit of 20 s (150 s deployed): the page takes 3 s, and the upload would wait its whole 60 s.
    const started = Date.now();
    expect(await runItem({ jobId: id, index: 0, timeout: 10, request: items[0] }, 1, started, 20_000)).toBe("done");
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(20_000);
    const item = (await readJob(id))!.items[0]!;
    expect(item).toMatchObject({ status: "succeeded", charged: 5_000, upload: { status: "failed" } });
    expect(item.result).toMatchObject({ width: 320 });
  }, 60_000);

  it("a receiver that keeps failing is backed off after 3 failures in a row, its due attempt waiting unspent; a 2xx forgets it", async () => {
    const hook = `backoff-${Date.now()}`;
    const url = `${inject("fixtureUrl")}/hooks/in?id=${hook}&fail=3`;
    const { job } = await jobOf(1, url);
    await rotateWebhookSecret(job.accountId);
    await sendEvent(job, "job.completed", "completed", { status: "completed" });
    const deliveryId = `${job.id}.completed`;
    const attempt = (n: number, now = Date.now()) =>
      deliver({ kind: "webhook", jobId: job.id, accountId: job.accountId, deliveryId, attempt: n, dueAt: 0 }, jobHooks(job), now);
    for (let n = 1; n <= 3; n++) await attempt(n);
    const receiver = (await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: `RECEIVER#${job.accountId}`, sk: "RECEIVER" } })))
      .Item as { failures: number; until: number };
    expect(receiver.failures).toBe(3);
    // Backed off: the fourth attempt, due before `until`, is not made, and not spent.
    await attempt(4, receiver.until - 1);
    expect((await readDeliveries(job.id))[0]!.attempts).toHaveLength(3);
    // After it, it is made; the receiver answers 2xx now, and its failures are forgotten.
    await attempt(4, receiver.until + 1);
    const [delivery] = await readDeliveries(job.id);
    expect(delivery).toMatchObject({ status: "delivered" });
    expect(delivery!.attempts.map((a) => a.status)).toEqual([500, 500, 500, 204]);
    expect(
      (await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: `RECEIVER#${job.accountId}`, sk: "RECEIVER" } }))).Item,
    ).toBeUndefined();
  });
});
