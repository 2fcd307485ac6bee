// Work whose worker died on its last delivery (out of memory, killed at its time limit): its message
// goes to the dead-letter queue and no delivery is left to take it over, so the sweeper ends it
// (lib/jobs/attempt.ts, sweepDead: the reconciler's pass for items, the monitors' schedule for
// checks). In process against the shared stack's DynamoDB Local, with a local SQS of this file's
// own; the dead worker's state is left by the very functions a worker calls (take the piece on its
// last delivery, charge it) and nothing after them, as in jobs-redelivery.test.ts. The stack's own
// reconciler may sweep these items too (it runs every minute against the same table): every
// assertion is on what the item, the ledger and the events end as, whoever swept.
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, inject, it } from "vitest";
import { admin, signUp } from "../../dev/harness/dev-process.js";
import { ownQueues, useSharedStackInProcess } from "../helpers/in-process.js";

useSharedStackInProcess({ ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host, ...(await ownQueues()).environment });
const { DeleteCommand, QueryCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
const { documents, queryAll } = await import("../../lib/billing/dynamodb.js");
const { placeHold } = await import("../../lib/billing/holds.js");
const { config } = await import("../../lib/config.js");
const { JOB_MAX_RECEIVES } = await import("../../lib/packaging.js");
const { jobRequest } = await import("../../lib/api/schemas.js");
const { storeRequests } = await import("../../lib/jobs/requests.js");
const { chargeItem } = await import("../../lib/jobs/run.js");
const { sweepItems } = await import("../../lib/jobs/sweep.js");
const { createJob, newJobId, readJob, startItem } = await import("../../lib/jobs/store.js");
const { rotateWebhookSecret } = await import("../../lib/jobs/webhooks.js");
const { readDeliveries } = await import("../../lib/jobs/events.js");
const { monitorRequest, monitorSpecOf } = await import("../../lib/http/monitor-schemas.js");
const { sweepChecks } = await import("../../lib/monitors/outcomes.js");
const { checkPiece, createMonitor, getCheck, getMonitor, hooksOf, noteOnMonitor, startCheck } = await import("../../lib/monitors/store.js");
const { chargePiece } = await import("../../lib/jobs/attempt.js");

const base = inject("baseUrl");
let counter = 0;
const hookUrl = (name: string) => `${inject("fixtureUrl")}/hooks/in?id=${name}-${Date.now()}-${counter++}`;

/** A funded account ($10) with its webhook secret. */
async function account() {
  const email = `sweep-${Date.now()}-${counter++}@jobs.test`;
  const { api_key: key, account_id: accountId } = await signUp(base, email);
  admin(inject("localDir"), "credit", accountId, "10");
  await rotateWebhookSecret(accountId);
  return { key, accountId };
}

/** A job of `count` screenshot items with a webhook, all counted as sent (this file delivers nothing: the stack's feed must not send them). */
async function jobOf(accountId: string, count: number, path = "/simple", timeout = 30) {
  const { items } = jobRequest.parse({
    endpoint: "screenshot",
    items: Array.from({ length: count }, () => ({ url: `${inject("fixtureUrl")}${path}`, width: 320, deviceScaleFactor: 1, timeout })),
  });
  const id = newJobId();
  await placeHold(accountId, id, count * 5_000);
  await storeRequests(id, items);
  const { job } = await createJob(
    id,
    accountId,
    "screenshot",
    items.map((request) => ({ request, timeout: request.timeout, price: 5_000 })),
    { webhookUrl: hookUrl("swept") },
  );
  await documents.send(
    new UpdateCommand({
      TableName: config.TABLE_NAME,
      Key: { pk: `JOB#${id}`, sk: "JOB" },
      UpdateExpression: "SET sent = #count",
      ExpressionAttributeNames: { "#count": "count" },
    }),
  );
  return Object.assign(job, { requests: items });
}

/** What the account may spend plus what its jobs hold: a hold's release or a refund puts it back whole. */
const money = async (key: string) => {
  const usage = (await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, number>;
  return { balance: usage.balance_micro_usd!, held: usage.held_micro_usd! };
};

/** The account's usage entries for request `requestId`. */
const entriesOf = async (accountId: string, requestId: string) =>
  (
    (
      await documents.send(
        new QueryCommand({ TableName: config.TABLE_NAME, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": `ACCT#${accountId}` } }),
      )
    ).Items ?? []
  ).filter((entry) => entry.requestId === requestId);

const openRowsOf = async (owner: string) => (await queryAll<{ owner: string }>("OPEN")).filter((row) => row.owner === owner);

describe("the sweeper", () => {
  it("a worker killed mid-item on its last delivery (SIGKILL while its page loads): the first sweep after its lease ends it failed, refunded once, job.completed sent", async () => {
    const { key, accountId } = await account();
    // One item whose page never answers, its page-load limit 5 s: its worker is busy when it is killed.
    const job = await jobOf(accountId, 1, "/hang", 5);
    const before = await money(key);
    const message = { jobId: job.id, index: 0, accountId, timeout: 5, request: job.requests[0] };
    // The worker, a process of its own, on the message's last delivery (the queue has none left to give).
    const child = spawn(process.execPath, ["--import", "tsx", "test/helpers/worker-child.ts", JSON.stringify(message), String(JOB_MAX_RECEIVES), "150000"], {
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    for (const stream of [child.stdout!, child.stderr!])
      stream.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
    child.once("exit", (code, signal) => {
      output += ` [exit ${code} ${signal}]`;
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      // Killed once it has charged the item (its page is loading; the render would end it in 5 s).
      for (const until = Date.now() + 30_000; (await entriesOf(accountId, `${job.id}.0`)).length === 0; await sleep(50))
        if (Date.now() > until) throw new Error(`the worker did not charge the item in time: ${output}`);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    const dead = (await readJob(job.id))!.items[0]!;
    expect(dead).toMatchObject({ status: "running", receives: JOB_MAX_RECEIVES });
    expect((await money(key)).held).toBe(before.held - 5_000);
    // Its lease is the worker's whole limit (150 s) and a margin after it started: before that, the sweep leaves it alone.
    expect(dead.leaseUntil! - Date.parse(dead.startedAt!)).toBeLessThanOrEqual(150_000 + 15_000);
    await sweepItems(dead.leaseUntil! - 1);
    expect((await readJob(job.id))!.items[0]!.status).toBe("running");
    // The first sweep after it (each minute) ends it; a second changes nothing.
    await sweepItems(dead.leaseUntil! + 1);
    await sweepItems(dead.leaseUntil! + 60_000);
    expect((await readJob(job.id))!.items[0]).toMatchObject({ status: "failed", charged: 0, error: { code: "INTERNAL_ERROR" } });
    expect((await entriesOf(accountId, `${job.id}.0`)).map((e) => [e.status, e.amount])).toEqual([["refunded", 5_000]]);
    expect(await money(key)).toEqual({ balance: before.balance + 5_000, held: before.held - 5_000 });
    const deliveries = await readDeliveries(job.id);
    expect(deliveries.map((d) => d.type)).toEqual(["job.completed"]);
    expect(JSON.parse(deliveries[0]!.payload).data).toMatchObject({ status: "completed", counts: { failed: 1 } });
    expect(await openRowsOf(job.id)).toEqual([]);
  }, 90_000);

  it("ends an item whose worker died mid-item on its last delivery: failed, refunded once, job.completed sent; an earlier delivery's is left to the queue", async () => {
    const { key, accountId } = await account();
    const job = await jobOf(accountId, 3);
    const before = await money(key);
    // Item 0's worker took it on its last delivery and charged it, then died (its lease now over).
    const taken = (await startItem(job, 0, Date.now() - 1, Date.now(), JOB_MAX_RECEIVES))!;
    await chargeItem(job, 0, 5_000, taken);
    // Item 1's worker died on its last delivery before charging it: its share is still held.
    await startItem(job, 1, Date.now() - 1, Date.now(), JOB_MAX_RECEIVES);
    // Item 2's worker died on its first delivery: its message comes back, and takes it over.
    await startItem(job, 2, Date.now() - 1, Date.now(), 1);
    expect(await money(key)).toEqual({ balance: before.balance, held: before.held - 5_000 });
    expect(await openRowsOf(job.id)).toHaveLength(3);

    // The sweeper's pass (the reconciler's, each minute), twice: the second changes nothing.
    await sweepItems(Date.now());
    await sweepItems(Date.now());
    const { items } = (await readJob(job.id))!;
    expect(items.map((i) => [i.status, i.charged, i.error?.code])).toEqual([
      ["failed", 0, "INTERNAL_ERROR"],
      ["failed", 0, "INTERNAL_ERROR"],
      ["running", undefined, undefined],
    ]);
    // Item 0's charge refunded once (to the balance), item 1's share given back once: nothing spent.
    expect((await entriesOf(accountId, `${job.id}.0`)).map((e) => [e.status, e.amount])).toEqual([["refunded", 5_000]]);
    expect(await entriesOf(accountId, `${job.id}.1`)).toEqual([]);
    expect(await money(key)).toEqual({ balance: before.balance + 10_000, held: before.held - 10_000 });
    // Only item 2 is still open; no job.completed yet (it is not the last).
    expect((await openRowsOf(job.id)).map((row) => (row as unknown as { id: number }).id)).toEqual([2]);
    expect(await readDeliveries(job.id)).toEqual([]);

    // Item 2's message came back on its last delivery and found it held by a worker that then died too.
    await startItem(job, 2, Date.now() - 1, Date.now(), JOB_MAX_RECEIVES);
    await sweepItems(Date.now());
    expect((await readJob(job.id))!.items[2]).toMatchObject({ status: "failed", charged: 0 });
    expect(await money(key)).toEqual({ balance: before.balance + 15_000, held: before.held - 15_000 });
    const deliveries = await readDeliveries(job.id);
    expect(deliveries.map((d) => d.type)).toEqual(["job.completed"]);
    expect(JSON.parse(deliveries[0]!.payload).data).toMatchObject({ status: "completed", counts: { succeeded: 0, failed: 3 }, charged_micro_usd: 0 });
    expect(await openRowsOf(job.id)).toEqual([]);
  }, 60_000);

  it("leaves alone an item whose worker is alive on its last delivery", async () => {
    const { accountId } = await account();
    const job = await jobOf(accountId, 1);
    await startItem(job, 0, Date.now() + 120_000, Date.now(), JOB_MAX_RECEIVES);
    await sweepItems(Date.now());
    expect((await readJob(job.id))!.items[0]!.status).toBe("running");
    expect(await openRowsOf(job.id)).toHaveLength(1);
  });

  it("ends a check whose worker died on its last delivery: failed, refunded once, counted in the streak (monitor.failed), the monitor's next check free to queue", async () => {
    const { key, accountId } = await account();
    const spec = monitorSpecOf(
      monitorRequest.parse({ url: `${inject("fixtureUrl")}/monitor/article?id=swept-${counter++}`, every: "5m", webhookUrl: hookUrl("swept-check") }),
    );
    const { monitor, checkId } = await createMonitor(accountId, spec);
    // Its first check's FEED row goes: the stack's feed must not send it to the stack's own worker.
    for (const row of await queryAll<{ pk: string; sk: string }>("FEED"))
      if (row.sk.endsWith(checkId)) await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sk } }));
    expect((await getMonitor(accountId, monitor.id))!.openCheck).toBe(checkId);
    // Two failures already: this one completes the streak.
    await noteOnMonitor(monitor, { failures: 2 });
    const before = await money(key);
    const taken = (await startCheck(monitor, checkId, Date.now() - 1, Date.now(), JOB_MAX_RECEIVES))!;
    await chargePiece(checkPiece(monitor, checkId), taken, { amount: 5_000, endpoint: "monitor-check" });
    expect((await money(key)).balance).toBe(before.balance - 5_000);
    await sweepChecks(Date.now());
    await sweepChecks(Date.now());
    expect(await getCheck(monitor.id, checkId)).toMatchObject({ status: "done", outcome: "failed", charged: 0, error: { code: "INTERNAL_ERROR" } });
    expect((await entriesOf(accountId, checkId)).map((e) => e.status)).toEqual(["refunded"]);
    expect((await money(key)).balance).toBe(before.balance);
    const after = (await getMonitor(accountId, monitor.id))!;
    expect(after).toMatchObject({ failures: 3, failedNotified: true });
    expect(after.openCheck).toBeUndefined();
    const deliveries = await readDeliveries(hooksOf(after));
    expect(deliveries.map((d) => d.type)).toEqual(["monitor.failed"]);
    expect(JSON.parse(deliveries[0]!.payload).data).toMatchObject({ monitor_id: monitor.id, check_id: checkId, failures: 3 });
    expect(await openRowsOf(monitor.id)).toEqual([]);
  }, 60_000);
});
