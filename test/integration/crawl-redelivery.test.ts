// A crawl's page delivered again: after its worker died mid-page (its lease over, its charge made and
// pending), twice at once, and after its crawl was cancelled. The worker runs in process against the
// shared stack's DynamoDB Local and s3rver, on queues of this file's own (the stack's workers take
// none of these messages); the dead worker's state is left by the very functions a worker calls
// and nothing after them. One page, charged once; the crawl ends and its hold goes back.
import { describe, expect, inject, it } from "vitest";
import { admin, signUp } from "../../dev/harness/dev-process.js";
import { ownQueues, useSharedStackInProcess } from "../helpers/in-process.js";

const { environment, sqs, queues } = await ownQueues();
const sites = inject("crawlSites");
useSharedStackInProcess({ ALLOWED_PRIVATE_HOSTS: [new URL(sites.a).host, new URL(sites.b).host].join(","), ...environment });
const { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
const { documents } = await import("../../lib/billing/dynamodb.js");
const { config } = await import("../../lib/config.js");
const { feedKey } = await import("../../lib/billing/keys.js");
const { placeHold } = await import("../../lib/billing/holds.js");
const { chargePiece, takeLease } = await import("../../lib/jobs/attempt.js");
const { crawlRequest } = await import("../../lib/api/schemas.js");
const { createCrawl, getCrawl, getPage, newCrawlId, requeueLost, stopCrawl } = await import("../../lib/crawl/store.js");
const { pagePiece, runPage } = await import("../../lib/crawl/run.js");
const { reconcileCrawls } = await import("../../lib/crawl/reconcile.js");
const { writeResult } = await import("../../lib/crawl/result.js");
const { putObject } = await import("../../lib/jobs/requests.js");
const { s3 } = await import("../../lib/storage/s3.js");
const { GetObjectCommand } = await import("@aws-sdk/client-s3");
const { patternOf } = await import("../../lib/crawl/urls.js");
const { holdHostUntil, recordFound, releaseHostSlot, takeHostSlot } = await import("../../lib/crawl/store.js");
const { feed } = await import("../../lib/jobs/feed.js");
const { ReceiveMessageCommand, SQSClient } = await import("@aws-sdk/client-sqs");
const { LOCAL_CREDENTIALS } = await import("../../dev/ports.js");
const sqsClient = new SQSClient({ region: config.AWS_REGION, endpoint: sqs.endpoint, credentials: LOCAL_CREDENTIALS });
/** The page messages on this file's jobs queue, taken off it. */
async function drainPages(): Promise<{ crawlId: string; key: string }[]> {
  const messages: { crawlId: string; key: string; kind: string }[] = [];
  for (let empty = 0; empty < 2; ) {
    const { Messages = [] } = await sqsClient.send(new ReceiveMessageCommand({ QueueUrl: queues.jobs.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!Messages.length) empty++;
    messages.push(...Messages.map((m) => JSON.parse(m.Body!) as { crawlId: string; key: string; kind: string }));
  }
  return messages.filter((m) => m.kind === "page");
}

const base = inject("baseUrl");
let counter = 0;

/** The account's money: what it may spend and what its crawls hold. */
const money = async (key: string) => {
  const usage = (await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
    balance_micro_usd: number;
    held_micro_usd: number;
  };
  return usage.balance_micro_usd + usage.held_micro_usd;
};
const balance = async (key: string) =>
  ((await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_micro_usd: number }).balance_micro_usd;

/** A crawl of one page (site B's /b/1, no links followed), as POST /api/v1/crawl makes it, with no FEED row: these tests deliver its message themselves. */
async function crawlOfOne() {
  const { api_key: key, account_id: accountId } = await signUp(base, `crawl-redelivery-${Date.now()}-${counter++}@crawl.test`);
  admin(inject("localDir"), "credit", accountId, "10");
  const url = `${sites.b}/b/1`;
  const request = crawlRequest.parse({ url, limit: 1, depth: 0, source: "links", render: "never" });
  const id = newCrawlId();
  await placeHold(accountId, id, 2_000, new Date(), "crawl");
  const crawl = await createCrawl(
    { id, accountId, createdAt: new Date().toISOString(), request, held: 2_000 },
    { url, depth: 0, foundBy: "start", pattern: patternOf(url), barren: 0 },
  );
  await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: feedKey(accountId, crawl.createdAt, id) }));
  const [queued] = (
    await documents.send(
      new QueryCommand({
        TableName: config.TABLE_NAME,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :q)",
        ExpressionAttributeValues: { ":pk": `CRAWL#${id}`, ":q": "Q#" },
      }),
    )
  ).Items!;
  // As the feed sends it: its queue row moved to its sent marker.
  await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: queued!.pk, sk: queued!.sk } }));
  await documents.send(new PutCommand({ TableName: config.TABLE_NAME, Item: { pk: queued!.pk, sk: queued!.sent, at: Date.now() } }));
  return { key, accountId, crawl, message: queued!.message as import("../../lib/jobs/queue.js").PageMessage };
}

const entriesOf = async (accountId: string, requestId: string) =>
  (
    (
      await documents.send(
        new QueryCommand({ TableName: config.TABLE_NAME, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": `ACCT#${accountId}` } }),
      )
    ).Items ?? []
  ).filter((item) => item.requestId === requestId);

describe("a crawl's page delivered again", () => {
  it("after its worker died mid-page: taken over once its lease is over, read, and charged once; the crawl ends with its hold given back", async () => {
    const { key, accountId, crawl, message } = await crawlOfOne();
    const before = await money(key);
    // The dead worker: took the page (its lease now over) and charged it, then nothing.
    const piece = pagePiece(crawl, message.key);
    const lease = (await takeLease(piece, Date.now() - 1))!;
    await chargePiece(piece, lease, { amount: 1_000, endpoint: "crawl", hold: crawl.id });
    expect(await money(key)).toBe(before - 1_000);
    // The queue delivers its message again.
    expect(await runPage(message, 2)).toBe("done");
    expect(await getPage(crawl.id, message.key)).toMatchObject({ status: "delivered", charged: 1_000 });
    expect(await getCrawl(crawl.id)).toMatchObject({ status: "completed", delivered: 1, charged: 1_000 });
    expect(await money(key)).toBe(before - 1_000);
    const entries = await entriesOf(accountId, piece.requestId);
    expect(entries.map((e) => [e.status, e.delivered, e.amount])).toEqual([["charged", true, 1_000]]);
    // The rest of its hold went back: nothing is held any more.
    expect(await balance(key)).toBe(before - 1_000);
  }, 60_000);

  it("after its worker died having charged it as a browser's read, read statically again: its crawl counts what the ledger charged, once", async () => {
    const { key, accountId, crawl, message } = await crawlOfOne();
    const before = await money(key);
    const piece = pagePiece(crawl, message.key);
    const lease = (await takeLease(piece, Date.now() - 1))!;
    // The dead worker's page was read in a browser (the site answered it otherwise then): $0.002, born delivered.
    await chargePiece(piece, lease, { amount: 2_000, endpoint: "crawl", hold: crawl.id }, true);
    expect(await runPage(message, 2)).toBe("done");
    expect(await getPage(crawl.id, message.key)).toMatchObject({ status: "delivered", rendered: false, charged: 2_000 });
    expect(await getCrawl(crawl.id)).toMatchObject({ status: "completed", delivered: 1, charged: 2_000 });
    const entries = await entriesOf(accountId, piece.requestId);
    expect(entries.map((e) => [e.status, e.delivered, e.amount])).toEqual([["charged", true, 2_000]]);
    expect(await balance(key)).toBe(before - 2_000);
  }, 60_000);

  it("twice at once: one reads it, the other finds it held; delivered once more after it ended, nothing happens", async () => {
    const { key, accountId, crawl, message } = await crawlOfOne();
    const before = await money(key);
    const outcomes = await Promise.all([runPage(message, 1), runPage(message, 1)]);
    expect(outcomes.sort()).toEqual(["busy", "done"]);
    expect(await runPage(message, 3)).toBe("done");
    expect(await getPage(crawl.id, message.key)).toMatchObject({ status: "delivered", charged: 1_000 });
    expect(await money(key)).toBe(before - 1_000);
    expect(await entriesOf(accountId, `${crawl.id}.${message.key}`)).toHaveLength(1);
  }, 60_000);

  it("whose worker died on its last delivery is ended by the sweeper, free, and its crawl ends", async () => {
    const { key, crawl, message } = await crawlOfOne();
    const before = await money(key);
    const piece = pagePiece(crawl, message.key);
    // Taken on the last delivery, charged, then the worker died: no message is left to take it over.
    const lease = (await takeLease(piece, Date.now() - 1, 3))!;
    await chargePiece(piece, lease, { amount: 1_000, endpoint: "crawl", hold: crawl.id });
    await reconcileCrawls(Date.now());
    expect(await getPage(crawl.id, message.key)).toMatchObject({ status: "failed", charged: 0 });
    expect(await getCrawl(crawl.id)).toMatchObject({ status: "completed", failed: 1, delivered: 0 });
    expect(await money(key)).toBe(before);
    expect(await balance(key)).toBe(before);
  }, 60_000);

  it("an ended crawl's result larger than an upload's part is written in parts, whole, once", async () => {
    const { crawl } = await crawlOfOne();
    // Three delivered pages of 4 MB of text each: 12 MB, two parts.
    for (let n = 0; n < 3; n++) {
      const outputKey = `jobs/${crawl.id}/pages/big${n}.json`;
      await putObject(outputKey, JSON.stringify({ url: `${sites.a}/big/${n}`, markdown: `${n}`.repeat(4 * 1024 * 1024) }), "application/json");
      await documents.send(
        new PutCommand({
          TableName: config.TABLE_NAME,
          Item: { pk: `CRAWL#${crawl.id}`, sk: `U#big${n}`, status: "delivered", outputKey, url: `${sites.a}/big/${n}` },
        }),
      );
    }
    expect(await writeResult(crawl.id)).toBeNull(); // still running: nothing written
    await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: { pk: `CRAWL#${crawl.id}`, sk: "CRAWL" },
        UpdateExpression: "SET #s = :c",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":c": "completed" },
      }),
    );
    const key = await writeResult(crawl.id);
    expect(key).toBe(`jobs/${crawl.id}/crawl.ndjson`);
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key! }));
    const lines = (await Body!.transformToString("utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { url: string; markdown: string });
    expect(lines.map((line) => [line.url, line.markdown.length, line.markdown[0]])).toEqual(
      [0, 1, 2].map((n) => [`${sites.a}/big/${n}`, 4 * 1024 * 1024, `${n}`]),
    );
    // Written once: a second message finds its key.
    expect(await writeResult(crawl.id)).toBe(key);
  }, 60_000);

  it("whose message was lost after it was sent: put back by the reconciler ten minutes on, then run once", async () => {
    const { key, crawl, message } = await crawlOfOne();
    const before = await money(key);
    const queuedRows = async () =>
      (
        await documents.send(
          new QueryCommand({
            TableName: config.TABLE_NAME,
            KeyConditionExpression: "pk = :pk AND begins_with(sk, :q)",
            ExpressionAttributeValues: { ":pk": `CRAWL#${crawl.id}`, ":q": "Q#" },
          }),
        )
      ).Items ?? [];
    // The reconciler's step, at a time of the test's (the whole round, run in the future, would touch other files' crawls).
    // Nine minutes on, it may still come: nothing is put back.
    expect(await requeueLost(crawl, Date.now() + 9 * 60_000)).toBe(0);
    expect(await queuedRows()).toEqual([]);
    // Eleven minutes on, its message is lost: it waits again, as it was sent the first time.
    expect(await requeueLost(crawl, Date.now() + 11 * 60_000)).toBe(1);
    const [again] = await queuedRows();
    expect(again!.message).toEqual(message);
    expect(await getCrawl(crawl.id)).toMatchObject({ status: "running" });
    expect(await runPage(again!.message, 1)).toBe("done");
    expect(await getPage(crawl.id, message.key)).toMatchObject({ status: "delivered", charged: 1_000 });
    expect(await money(key)).toBe(before - 1_000);
  }, 60_000);

  it("after its crawl was cancelled: skipped, free, and the crawl is cancelled", async () => {
    const { key, crawl, message } = await crawlOfOne();
    const before = await money(key);
    expect(await stopCrawl((await getCrawl(crawl.id))!, "cancelled")).toBe(true);
    expect(await runPage(message, 1)).toBe("done");
    expect(await getPage(crawl.id, message.key)).toMatchObject({ status: "skipped", reason: "cancelled" });
    expect(await getCrawl(crawl.id)).toMatchObject({ status: "cancelled", delivered: 0, charged: 0 });
    expect(await balance(key)).toBe(before);
  }, 60_000);

  it("a Retry-After keeps new requests off the host until it ends, and lets those in flight end: never more than two", async () => {
    const account = `host-${Date.now()}-${counter++}`;
    const host = "example.test:8080";
    const lease = Date.now() + 60_000;
    const first = await takeHostSlot(account, host, "page-1", lease);
    const second = await takeHostSlot(account, host, "page-2", lease);
    expect([first, second]).toEqual([{ index: expect.any(Number) }, { index: expect.any(Number) }]);
    expect(await takeHostSlot(account, host, "page-3", lease)).toEqual({ until: null });
    // A Retry-After of 0 (or a date past) frees no slot a live page holds.
    await holdHostUntil(account, host, Date.now());
    expect(await takeHostSlot(account, host, "page-3", lease)).toEqual({ until: null });
    // Retry-After: 1. The pages in flight end and let go; no slot is taken until it ends.
    const until = Date.now() + 1_000;
    await holdHostUntil(account, host, until);
    await releaseHostSlot(account, host, (first as { index: number }).index, "page-1");
    await releaseHostSlot(account, host, (second as { index: number }).index, "page-2");
    expect(await takeHostSlot(account, host, "page-3", lease)).toEqual({ until });
    // A shorter one later does not shorten it.
    await holdHostUntil(account, host, until - 500);
    expect(await takeHostSlot(account, host, "page-3", lease)).toEqual({ until });
    await new Promise((resolve) => setTimeout(resolve, until - Date.now() + 50));
    expect(await takeHostSlot(account, host, "page-3", lease)).toEqual({ index: expect.any(Number) });
  }, 60_000);

  it("one URL found by two pages in the same millisecond is recorded once, and its message is kept", async () => {
    const { crawl } = await crawlOfOne();
    const url = `${sites.b}/b/same-ms`;
    const found = { url, depth: 1, foundBy: "link" as const, pattern: patternOf(url), barren: 0 };
    const at = Date.now();
    const [a, b] = await Promise.all([recordFound(crawl, [found], at), recordFound(crawl, [found], at)]);
    expect([...a, ...b]).toHaveLength(1);
    const rows = await documents.send(
      new QueryCommand({
        TableName: config.TABLE_NAME,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :q)",
        ExpressionAttributeValues: { ":pk": `CRAWL#${crawl.id}`, ":q": "Q#01#" },
      }),
    );
    expect(rows.Items!.map((row) => (row.message as { url: string }).url)).toEqual([url]);
    expect(await getCrawl(crawl.id)).toMatchObject({ discovered: 2 });
  }, 60_000);

  it("a crawl holds at most three of its account's places in flight: its account's other work is sent too", async () => {
    const { accountId, crawl } = await crawlOfOne();
    const urls = Array.from({ length: 12 }, (_, i) => `${sites.b}/b/bound-${i}`);
    await recordFound(
      crawl,
      urls.map((url) => ({ url, depth: 1, foundBy: "link" as const, pattern: patternOf(url), barren: 0 })),
    );
    // Its FEED row, as POST /api/v1/crawl writes it (the helper's crawl has none), and a second crawl of the account.
    const feedRow = (id: string, at: string) => ({
      ...feedKey(accountId, at, id),
      accountId,
      queue: { pk: `CRAWL#${id}`, prefix: "Q#", sent: { prefix: "S#", most: 3 } },
    });
    await documents.send(new PutCommand({ TableName: config.TABLE_NAME, Item: feedRow(crawl.id, crawl.createdAt) }));
    const other = newCrawlId();
    await documents.send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { pk: `CRAWL#${other}`, sk: "Q#01#x", message: { kind: "page", accountId, crawlId: other, key: "k", url: `${sites.a}/`, depth: 1 }, sent: "S#k" },
      }),
    );
    await documents.send(new PutCommand({ TableName: config.TABLE_NAME, Item: feedRow(other, new Date(Date.now() + 1).toISOString()) }));
    await drainPages();
    await feed(accountId);
    const sent = await drainPages();
    // Its start's marker is one of its three: two more of its pages, and the other crawl's page.
    expect(sent.filter((m) => m.crawlId === crawl.id)).toHaveLength(2);
    expect(sent.filter((m) => m.crawlId === other)).toHaveLength(1);
    await feed(accountId);
    expect(await drainPages()).toEqual([]);
  }, 60_000);
});
