// The monitors' schedule in process (lib/monitors/schedule.ts), against a table of this file's own
// in the shared DynamoDB Local (so that no other file's monitors are due in it, nor these in the
// stack's schedule) and a local SQS of its own: 1,000 monitors due in one run are queued each once,
// however many runs meet them, each account's share of the workers sent and the rest left in its feed.
import { ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { ownQueues, useSharedStackInProcess } from "../helpers/in-process.js";

const { sqs, queues, environment } = await ownQueues();
useSharedStackInProcess({ TABLE_NAME: `shotline-monitors-tick-${process.pid}`, ...environment });
const { BatchWriteCommand, DeleteCommand } = await import("@aws-sdk/lib-dynamodb");
const { ensureTable } = await import("../../dev/stack.js");
const { documents, queryAll } = await import("../../lib/billing/dynamodb.js");
const { dueKey, monitorKey } = await import("../../lib/billing/keys.js");
const { config } = await import("../../lib/config.js");
const { monitorRequest, monitorSpecOf } = await import("../../lib/http/monitor-schemas.js");
const { scheduleChecks } = await import("../../lib/monitors/schedule.js");
const { checkNow, dropCheck, getMonitor, listChecks } = await import("../../lib/monitors/store.js");
const { itemsInFlightPerAccount } = await import("../../lib/jobs/feed.js");
await ensureTable();

const client = new SQSClient({ region: config.AWS_REGION, endpoint: sqs.endpoint, credentials: LOCAL_CREDENTIALS });

/** Every message on this file's jobs queue now (received, so not again for a minute). */
async function drain(): Promise<Record<string, unknown>[]> {
  const messages: Record<string, unknown>[] = [];
  for (let empty = 0; empty < 2; ) {
    const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: queues.jobs.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!Messages.length) empty++;
    messages.push(...Messages.map((m) => JSON.parse(m.Body!) as Record<string, unknown>));
  }
  return messages;
}

/** Writes monitors (they need not have accounts) of a page on a closed port straight to the table, each due at `due`, every `every` seconds. */
async function seed(monitors: readonly { accountId: string; id: string }[], due: number, every?: number) {
  const spec = monitorSpecOf(monitorRequest.parse({ url: "http://127.0.0.1:9/watched", every: "5m" }));
  const rows = monitors.flatMap(({ accountId, id }) => [
    {
      ...monitorKey(accountId, id),
      id,
      accountId,
      request: spec.request,
      every: every ?? spec.every,
      mode: spec.mode,
      thresholdPercent: spec.thresholdPercent,
      ignoreText: spec.ignoreText,
      options: spec.options,
      createdAt: new Date().toISOString(),
      paused: false,
      nextDueAt: due,
      failures: 0,
      generation: 0,
    },
    { ...dueKey(due, accountId, id), accountId, monitorId: id, dueAt: due },
  ]);
  for (let i = 0; i < rows.length; i += 25)
    await documents.send(new BatchWriteCommand({ RequestItems: { [config.TABLE_NAME]: rows.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
}

describe("the monitors' schedule", () => {
  it("finds 1,000 monitors due in one run and queues each once: a second run, and two at once, queue nothing more", async () => {
    // 1,000 monitors of 100 accounts (they need not exist to be scheduled), due half a minute ago.
    const then = Date.now();
    const accounts = Array.from({ length: 100 }, (_, a) => `sched-acct-${Date.now()}-${a}`);
    const monitors = accounts.flatMap((accountId) =>
      Array.from({ length: 10 }, (_, m) => ({
        accountId,
        id: `mon_${`${accountId}${m}`
          .replace(/[^A-Za-z0-9]/g, "")
          .slice(-18)
          .padStart(22, "x")}`,
      })),
    );
    const due = then - 30_000;
    await seed(monitors, due);
    const [first, second] = await Promise.all([scheduleChecks(then), scheduleChecks(then)]);
    expect(first + second).toBe(1000);
    expect(await scheduleChecks(then + 1000)).toBe(0);
    // Each monitor has one check queued, its next due `every` later, its due row moved there.
    const checks = await Promise.all(monitors.map(({ id }) => listChecks(id, 10)));
    expect(checks.map(({ checks: c }) => c.length)).toEqual(monitors.map(() => 1));
    const stored = await Promise.all(monitors.map(({ accountId, id }) => getMonitor(accountId, id)));
    expect(new Set(stored.map((m) => m!.nextDueAt))).toEqual(new Set([due + 300_000]));
    // Each account's share of the workers went to the queue (3 under npm run dev), the rest wait in its feed; no check twice.
    const messages = await drain();
    expect(messages.every((m) => m.kind === "check")).toBe(true);
    expect(new Set(messages.map((m) => m.checkId)).size).toBe(messages.length);
    for (const accountId of accounts) expect(messages.filter((m) => m.accountId === accountId).length).toBe(3);
    expect(await queryAll("FEED")).toHaveLength(1000 - 300);
  }, 120_000);

  it("500 monitors of one account due every tick, its share of the workers full: each keeps one check waiting, and the ticks between queue nothing", async () => {
    // Only these are due in this file's table from now on.
    for (const row of await queryAll<{ pk: string; sk: string }>("DUE"))
      await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sk } }));
    const accountId = `busy-acct-${Date.now()}`;
    const then = Date.now();
    const due = then - 30_000;
    // Due every minute (below what the API accepts, written straight to the table), so that every run meets them all.
    const every = 60;
    const monitors = Array.from({ length: 500 }, (_, m) => `mon_${`busy${m}`.padStart(22, "y")}`);
    await seed(
      monitors.map((id) => ({ accountId, id })),
      due,
      every,
    );
    const waiting = async () => (await queryAll<{ sk: string }>("FEED")).filter((row) => row.sk.startsWith(`${accountId}#`)).length;
    const checksOf = async () => (await Promise.all(monitors.map((id) => listChecks(id, 10)))).map(({ checks }) => checks.length);

    expect(await scheduleChecks(then)).toBe(500);
    const sent = (await drain()).filter((m) => m.accountId === accountId);
    expect(sent.length).toBe(itemsInFlightPerAccount());
    expect(await waiting()).toBe(500 - sent.length);
    // Three more runs, each after the monitors are due again: their checks still wait, so nothing is queued (nor charged).
    for (let tick = 1; tick <= 3; tick++) expect(await scheduleChecks(then + tick * every * 1000 + 1000)).toBe(0);
    expect(await checksOf()).toEqual(monitors.map(() => 1));
    expect(await waiting()).toBe(500 - sent.length);
    // Each tick moved them on: none is left due behind.
    expect(new Set((await Promise.all(monitors.map((id) => getMonitor(accountId, id)))).map((m) => m!.nextDueAt))).toEqual(new Set([due + 4 * every * 1000]));
    // One check ends (here: dropped, as a paused monitor's is): its monitor, and only it, is queued at the next run.
    const [first] = (await listChecks(monitors[0]!, 1)).checks;
    await dropCheck({ id: monitors[0]!, accountId }, first!.id);
    expect(await scheduleChecks(then + 4 * every * 1000 + 1000)).toBe(1);
    expect((await listChecks(monitors[0]!, 10)).checks).toHaveLength(1);
    expect(await waiting()).toBe(500 - sent.length + 1);
  }, 180_000);

  it("a check asked for while one waits to run answers that one: a loop of calls queues nothing more", async () => {
    const accountId = `manual-acct-${Date.now()}`;
    const id = `mon_${`manual${Date.now()}`.padStart(22, "m")}`;
    await seed([{ accountId, id }], Date.now() + 3_600_000);
    // No worker takes this file's queue: the first check waits.
    const first = await checkNow(accountId, id);
    for (let i = 0; i < 5; i++) expect((await checkNow(accountId, id)).checkId).toBe(first.checkId);
    expect((await listChecks(id, 10)).checks.map((c) => c.id)).toEqual([first.checkId]);
    // Once it has gone (dropped, as a pause drops it), the next call queues one of its own.
    await dropCheck({ id, accountId }, first.checkId);
    const next = await checkNow(accountId, id);
    expect(next.checkId).not.toBe(first.checkId);
    await drain();
  });
});
