// An account's share of what the jobs share, held by hostile accounts (docs/api.md, "Fair shares"):
// the webhook senders, whatever receivers an account names; the job workers, when its items fail
// and are refunded; the feed's reads, however long its backlog. In process against a table of this
// file's own in the shared DynamoDB Local (no other file's accounts, and no stack feeding these) and
// a local SQS of its own; receivers are HTTP servers of this file on loopback, each its own origin.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { ownQueues, useSharedStackInProcess } from "../helpers/in-process.js";

/** Receivers that answer `status` after `delayMs`, counting the requests they hold at once. */
async function receivers(count: number, status: number, delayMs: number) {
  const state = { inFlight: 0, most: 0, requests: 0 };
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = http.createServer((request, response) => {
        state.requests++;
        state.most = Math.max(state.most, ++state.inFlight);
        request.resume();
        setTimeout(() => {
          state.inFlight--;
          response.writeHead(status).end();
        }, delayMs);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return server;
    }),
  );
  afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));
  return { state, origins: servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
}

const slow = await receivers(6, 204, 1_500);
const failing = await receivers(4, 500, 0);
const { sqs, queues, environment } = await ownQueues();
useSharedStackInProcess({
  TABLE_NAME: `shotline-jobs-shares-${process.pid}`,
  ALLOWED_PRIVATE_HOSTS: [...slow.origins, ...failing.origins].map((origin) => new URL(origin).host).join(","),
  ...environment,
});
const { GetCommand, PutCommand } = await import("@aws-sdk/lib-dynamodb");
const { ensureTable } = await import("../../dev/stack.js");
const { documents, queryAll } = await import("../../lib/billing/dynamodb.js");
const { feedCheckKey, slotKey } = await import("../../lib/billing/keys.js");
const { config } = await import("../../lib/config.js");
const { feed, itemDone, itemsInFlightPerAccount } = await import("../../lib/jobs/feed.js");
const { createJob, newJobId } = await import("../../lib/jobs/store.js");
const { deliver, rotateWebhookSecret } = await import("../../lib/jobs/webhooks.js");
const { jobHooks, readDeliveries, sendEvent } = await import("../../lib/jobs/events.js");
await ensureTable();

const client = new SQSClient({ region: config.AWS_REGION, endpoint: sqs.endpoint, credentials: LOCAL_CREDENTIALS });
afterAll(() => client.destroy());

/** Every message on this file's queue `queue` now (received, so not again for a minute). */
async function drain(queue: "jobs" | "webhooks"): Promise<Record<string, unknown>[]> {
  const messages: Record<string, unknown>[] = [];
  for (let empty = 0; empty < 2; ) {
    const { Messages = [] } = await client.send(new ReceiveMessageCommand({ QueueUrl: queues[queue].queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!Messages.length) empty++;
    messages.push(...Messages.map((m) => JSON.parse(m.Body!) as Record<string, unknown>));
  }
  return messages;
}

let counter = 0;
const accountId = () => `shares-${Date.now()}-${counter++}`;

/** A job of `accountId` with a webhook at `webhookUrl` (the table's job row; webhooks need nothing else), its job.completed event kept and queued. */
async function jobWithEvent(account: string, webhookUrl: string) {
  const job = { id: newJobId(), accountId: account, endpoint: "screenshot" as const, createdAt: new Date().toISOString(), count: 1, webhookUrl };
  await sendEvent(job, "job.completed", "completed", { status: "completed" });
  return job;
}

describe("webhook senders, per account", () => {
  it("an account with six receivers (six origins) holds one sender at a time: one attempt made, the others wait on the queue", async () => {
    const account = accountId();
    await rotateWebhookSecret(account);
    const jobs = await Promise.all(slow.origins.map((origin) => jobWithEvent(account, `${origin}/hook`)));
    // Their first attempts' messages, as the senders receive them.
    expect((await drain("webhooks")).filter((m) => m.accountId === account)).toHaveLength(6);
    // Six senders take the six attempts at once.
    await Promise.all(
      jobs.map((job) =>
        deliver({ kind: "webhook", jobId: job.id, accountId: account, deliveryId: `${job.id}.completed`, attempt: 1, dueAt: 0 }, jobHooks(job)),
      ),
    );
    expect(slow.state).toMatchObject({ requests: 1, most: 1 });
    const attempted = await Promise.all(jobs.map(async (job) => (await readDeliveries(job.id))[0]!.attempts.length));
    expect(attempted.sort()).toEqual([0, 0, 0, 0, 0, 1]);
    // The five not made wait on the queue, a second each, unspent.
    await sleep(1_500);
    const waiting = (await drain("webhooks")).filter((m) => m.accountId === account);
    expect(waiting.map((m) => m.attempt)).toEqual([1, 1, 1, 1, 1]);
  }, 60_000);

  it("an account whose receivers fail three times in a row, at three origins, is backed off: its fourth receiver waits too", async () => {
    const account = accountId();
    await rotateWebhookSecret(account);
    const attempt = async (origin: string, now = Date.now()) => {
      const job = await jobWithEvent(account, `${origin}/hook`);
      await deliver({ kind: "webhook", jobId: job.id, accountId: account, deliveryId: `${job.id}.completed`, attempt: 1, dueAt: 0 }, jobHooks(job), now);
      return (await readDeliveries(job.id))[0]!.attempts.length;
    };
    for (const origin of failing.origins.slice(0, 3)) expect(await attempt(origin)).toBe(1);
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: { pk: `RECEIVER#${account}`, sk: "RECEIVER" } }));
    expect(Item).toMatchObject({ failures: 3 });
    expect(await attempt(failing.origins[3]!, Number(Item!.until) - 1)).toBe(0);
    expect(failing.state.requests).toBe(3);
  }, 60_000);
});

describe("the job workers' share", () => {
  it("a failure refunded as the customer's keeps its slot as long again as it ran: the account's next item waits", async () => {
    const account = accountId();
    const size = itemsInFlightPerAccount();
    const requests = Array.from({ length: size + 5 }, () => ({ price: 5_000, timeout: 30, request: { url: "http://127.0.0.1:9/", timeout: 30 } }));
    await createJob(newJobId(), account, "screenshot", requests);
    await drain("jobs");
    expect(await feed(account)).toBe(size);
    const sent = (await drain("jobs")).filter((m) => m.accountId === account) as { slot: { index: number; holder: string } }[];
    expect(sent).toHaveLength(size);
    // Each of its items failed after 20 s, refunded: the slots stay held, nothing more is sent.
    const ended = Date.now();
    for (const message of sent) await itemDone(message, account, 20_000, ended);
    expect(await drain("jobs")).toEqual([]);
    for (const message of sent) {
      const { Item } = await documents.send(
        new GetCommand({ TableName: config.TABLE_NAME, Key: slotKey(`items#${account}`, message.slot.index), ConsistentRead: true }),
      );
      expect(Item).toMatchObject({ holder: message.slot.holder, leaseUntil: ended + 20_000 });
    }
    expect(await feed(account)).toBe(0);
  }, 60_000);

  it("an item that ends otherwise lets its slot go at once: the next is sent", async () => {
    const account = accountId();
    const size = itemsInFlightPerAccount();
    await createJob(
      newJobId(),
      account,
      "screenshot",
      Array.from({ length: size + 1 }, () => ({ price: 5_000, timeout: 30, request: { url: "http://127.0.0.1:9/" } })),
    );
    expect(await feed(account)).toBe(size);
    const sent = (await drain("jobs")).filter((m) => m.accountId === account) as { slot: { index: number; holder: string } }[];
    await itemDone(sent[0]!, account);
    expect((await drain("jobs")).filter((m) => m.accountId === account)).toHaveLength(1);
  }, 60_000);
});

describe("the feed", () => {
  it("reads a page of an account's backlog of 500, not all of it, each time one of its items ends", async () => {
    const account = accountId();
    const size = itemsInFlightPerAccount();
    const now = Date.now();
    for (let i = 0; i < 500; i++) {
      const checkId = `chk_${String(i).padStart(9, "0")}backlogbacklog`;
      await documents.send(
        new PutCommand({
          TableName: config.TABLE_NAME,
          Item: { ...feedCheckKey(account, now + i, checkId), accountId: account, message: { kind: "check", accountId: account, monitorId: "mon_x", checkId } },
        }),
      );
    }
    // Every row of a query this process makes is counted.
    let read = 0;
    documents.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        read += ((out.output as { Items?: unknown[] } | undefined)?.Items ?? []).length;
        return out;
      },
      { step: "initialize", name: "countRowsRead" },
    );
    try {
      expect(await feed(account)).toBe(size);
      // The count counts: the first feed read its first page.
      expect(read).toBeGreaterThan(0);
      const sent = (await drain("jobs")).filter((m) => m.accountId === account) as { slot: { index: number; holder: string } }[];
      read = 0;
      // Its share is full: an item's end with its slot held on reads its slots' rows and sends nothing.
      await itemDone(sent[0]!, account, 60_000);
      expect(read).toBeLessThanOrEqual(size);
      // One slot free (handed on by the item that ended): one sent, a page of the FEED and the slots' rows read.
      read = 0;
      await itemDone(sent[1]!, account);
      expect(read).toBeLessThanOrEqual(10 + size);
      expect((await drain("jobs")).filter((m) => m.accountId === account)).toHaveLength(1);
      expect((await queryAll<{ sk: string }>("FEED")).filter((row) => row.sk.startsWith(`${account}#`))).toHaveLength(500 - size - 1);
    } finally {
      documents.middlewareStack.remove("countRowsRead");
    }
  }, 120_000);
});
