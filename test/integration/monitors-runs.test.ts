// Monitors' checks in process, against the shared stack's DynamoDB Local, s3rver and Chromium, with
// a local SQS of this file's own (so that the stack's worker does not take these messages): a
// paused monitor runs nothing, an account that cannot pay pauses its monitor charged nothing, and a
// check whose message comes twice runs and is charged once. The schedule: monitors-tick.test.ts.
import { describe, expect, inject, it } from "vitest";
import { admin, signUp } from "../../dev/harness/dev-process.js";
import { ownQueues, useSharedStackInProcess } from "../helpers/in-process.js";

useSharedStackInProcess({ ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host, ...(await ownQueues()).environment });
const { GetCommand } = await import("@aws-sdk/lib-dynamodb");
const { chargeForRequest, markDelivered } = await import("../../lib/billing/ledger.js");
const { documents, queryAll } = await import("../../lib/billing/dynamodb.js");
const { accountKey } = await import("../../lib/billing/keys.js");
const { config } = await import("../../lib/config.js");
const { monitorRequest, monitorSpecOf } = await import("../../lib/http/monitor-schemas.js");
const { runCheck } = await import("../../lib/monitors/check.js");
const { changeMonitor, checkNow, createMonitor, getCheck, getMonitor, hooksOf, noteOnMonitor } = await import("../../lib/monitors/store.js");
const { rotateWebhookSecret } = await import("../../lib/jobs/webhooks.js");
const { readDeliveries } = await import("../../lib/jobs/events.js");

const base = inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let counter = 0;

const account = async (dollars: number) => {
  const email = `schedule-${Date.now()}-${counter++}@monitors.test`;
  const { account_id: accountId } = await signUp(base, email);
  if (dollars) admin(inject("localDir"), "credit", email, String(dollars));
  return accountId;
};
const spec = (extra: Record<string, unknown> = {}) =>
  monitorSpecOf(monitorRequest.parse({ url: fixture(`/monitor/article?id=sched-${counter++}`), width: 800, height: 400, every: "5m", ...extra }));

describe("monitors' checks in process", () => {
  it("a paused monitor runs nothing: its queued check is dropped; an account that cannot pay pauses its monitor, charged nothing", async () => {
    const rich = await account(5);
    const { monitor, checkId } = await createMonitor(rich, spec());
    await changeMonitor(monitor, { paused: true, pausedReason: "requested", nextDueAt: undefined });
    expect(await runCheck({ kind: "check", accountId: rich, monitorId: monitor.id, checkId }, 1)).toBe("done");
    expect(await getCheck(monitor.id, checkId)).toBeNull();
    // No due row: the schedule never meets it.
    expect(await queryAll<{ sk: string }>("DUE").then((due) => due.filter((row) => row.sk.endsWith(monitor.id)))).toEqual([]);

    const poor = await account(0);
    // Its signup bonus spent, as charges spend it (the ledger stays sound: the final test checks it).
    const { Item: before } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: accountKey(poor), ConsistentRead: true }));
    const drained = await chargeForRequest(poor, Number(before!.balance), { requestId: `drain-${poor}`, endpoint: "screenshot", at: new Date() });
    await markDelivered(drained);
    const unpaid = await createMonitor(poor, spec());
    expect(await runCheck({ kind: "check", accountId: poor, monitorId: unpaid.monitor.id, checkId: unpaid.checkId }, 1)).toBe("done");
    expect(await getCheck(unpaid.monitor.id, unpaid.checkId)).toMatchObject({ outcome: "failed", charged: 0, error: { code: "INSUFFICIENT_BALANCE" } });
    expect(await getMonitor(poor, unpaid.monitor.id)).toMatchObject({ paused: true, pausedReason: "insufficient_balance" });
    expect((await getMonitor(poor, unpaid.monitor.id))!.nextDueAt).toBeUndefined();
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: accountKey(poor), ConsistentRead: true }));
    expect(Item).toMatchObject({ balance: 0, totalSpent: Number(before!.balance) });
  }, 60_000);

  it("a check whose message comes twice at once runs once and is charged once", async () => {
    const accountId = await account(5);
    const { monitor, checkId } = await createMonitor(accountId, spec({ mode: "visual" }));
    const message = { kind: "check" as const, accountId, monitorId: monitor.id, checkId };
    const outcomes = await Promise.all([runCheck(message, 1), runCheck(message, 1)]);
    expect(outcomes.sort()).toEqual(["busy", "done"]);
    expect(await runCheck(message, 2)).toBe("done");
    expect(await getCheck(monitor.id, checkId)).toMatchObject({ status: "done", outcome: "baseline", charged: 5_000 });
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: accountKey(accountId), ConsistentRead: true }));
    expect(Item!.totalSpent).toBe(5_000);
  }, 60_000);

  it("a monitor failing 10 times in a row pauses and says so (monitor.paused, reason failing); PATCH {paused: false} resumes it, its failures forgotten", async () => {
    const email = `failing-${Date.now()}-${counter++}@monitors.test`;
    const { api_key: key, account_id: accountId } = await signUp(base, email);
    admin(inject("localDir"), "credit", email, "5");
    await rotateWebhookSecret(accountId);
    const page = `failing-${counter++}`;
    await fetch(fixture(`/monitor/set?id=${page}&v=down`));
    const { monitor, checkId } = await createMonitor(
      accountId,
      monitorSpecOf(monitorRequest.parse({ url: fixture(`/monitor/article?id=${page}`), every: "5m", webhookUrl: fixture(`/hooks/in?id=${page}`) })),
    );
    // Eight failures in a row already (its first check is the ninth).
    await noteOnMonitor(monitor, { failures: 8, failedNotified: true });
    expect(await runCheck({ kind: "check", accountId, monitorId: monitor.id, checkId }, 1)).toBe("done");
    expect(await getCheck(monitor.id, checkId)).toMatchObject({ outcome: "failed", charged: 0, error: { code: "INVALID_URL" } });
    expect(await getMonitor(accountId, monitor.id)).toMatchObject({ paused: false, failures: 9 });
    // The tenth: paused, its due row gone, one monitor.paused with the reason and the last error.
    const tenth = (await checkNow(accountId, monitor.id)).checkId;
    expect(await runCheck({ kind: "check", accountId, monitorId: monitor.id, checkId: tenth }, 1)).toBe("done");
    const paused = (await getMonitor(accountId, monitor.id))!;
    expect(paused).toMatchObject({ paused: true, pausedReason: "failing", failures: 10 });
    expect(paused.nextDueAt).toBeUndefined();
    expect(await queryAll<{ sk: string }>("DUE").then((due) => due.filter((row) => row.sk.endsWith(monitor.id)))).toEqual([]);
    const events = await readDeliveries(hooksOf(paused));
    expect(events.map((d) => d.type)).toEqual(["monitor.paused"]);
    expect(JSON.parse(events[0]!.payload).data).toMatchObject({ monitor_id: monitor.id, reason: "failing" });
    expect(JSON.parse(events[0]!.payload).data.message).toContain("500");
    // The API says so, and resumes it.
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const shown = (await (await fetch(`${base}/api/v1/monitors/${monitor.id}`, { headers: auth })).json()) as Record<string, unknown>;
    expect(shown).toMatchObject({ status: "paused", paused_reason: "failing", failures_in_a_row: 10 });
    const resumed = await fetch(`${base}/api/v1/monitors/${monitor.id}`, { method: "PATCH", headers: auth, body: JSON.stringify({ paused: false }) });
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toMatchObject({ status: "active", failures_in_a_row: 0 });
    expect(await getMonitor(accountId, monitor.id)).toMatchObject({ paused: false, failures: 0 });
  }, 60_000);
});
