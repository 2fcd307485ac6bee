// A job's webhooks through the local stack: events POSTed to a receiver on the fixture server,
// verified with the Standard Webhooks reference library for Node (standardwebhooks); retried on
// a 5xx until delivered; a redirect not followed; a webhook URL on a private address refused
// before anything is made; none without a secret to sign with. (The stack retries at a thousandth
// of the schedule: test/global-setup.ts.)
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import { fundedKey } from "../../dev/harness/dev-process.js";
import { canaryHits, type ErrorBody, postJson, rgb } from "../helpers/api.js";
import { readImage } from "../helpers/image.js";

const base = inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let counter = 0;
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const account = () => fundedKey(base, inject("localDir"), `hooks-${Date.now()}-${counter++}@jobs.test`, 10);
const secretOf = async (key: string) => {
  const res = await fetch(`${base}/api/v1/webhook-secret`, { method: "POST", headers: auth(key) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
};
const shot = { url: fixture("/simple"), width: 320, deviceScaleFactor: 1 };
const html = { html: "", width: 320, height: 100, deviceScaleFactor: 1 };
const balance = async (key: string) =>
  ((await (await fetch(`${base}/api/v1/usage`, { headers: auth(key) })).json()) as { balance_micro_usd: number }).balance_micro_usd;

type Delivery = { id: string; type: string; status: string; attempts: { status?: number; error?: string }[] };
type Job = { id: string; status: string; webhook?: { deliveries: Delivery[] } } & ErrorBody;
type Seen = { headers: Record<string, string>; body: string; at: number };

const seen = async (id: string) => (await (await fetch(fixture(`/hooks/seen?id=${id}`))).json()) as Seen[];

/** The job once `until` holds, read every 250 ms for at most `ms`. */
async function waitFor(key: string, id: string, until: (job: Job) => boolean, ms = 60_000): Promise<Job> {
  const end = Date.now() + ms;
  for (;;) {
    const job = (await (await fetch(`${base}/api/v1/jobs/${id}`, { headers: auth(key) })).json()) as Job;
    if (until(job) || Date.now() > end) return job;
    await sleep(250);
  }
}

describe("job webhooks", () => {
  it("sends job.completed once, signed as Standard Webhooks defines (verified by its library), and shows the delivery", async () => {
    const key = await account();
    const secret = await secretOf(key);
    const hook = `done-${Date.now()}`;
    const { id } = (await (
      await postJson("/api/v1/jobs", { endpoint: "screenshot", items: [shot, shot, shot], webhookUrl: fixture(`/hooks/in?id=${hook}`) }, auth(key))
    ).json()) as Job;
    const job = await waitFor(key, id, (j) => j.webhook?.deliveries[0]?.status === "delivered");
    expect(job.status).toBe("completed");
    expect(job.webhook!.deliveries).toMatchObject([{ type: "job.completed", status: "delivered", attempts: [{ status: 204 }] }]);
    const received = await seen(hook);
    expect(received).toHaveLength(1);
    const payload = new Webhook(secret).verify(received[0]!.body, received[0]!.headers) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({
      type: "job.completed",
      data: { job_id: id, status: "completed", counts: { succeeded: 3, failed: 0, cancelled: 0 }, charged_micro_usd: 15_000 },
    });
    expect(received[0]!.headers["webhook-id"]).toBe(job.webhook!.deliveries[0]!.id);
    // Another secret does not verify it: the signature is the account's.
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 7).toString("base64")}`).verify(received[0]!.body, received[0]!.headers)).toThrow();
    // A new secret replaces the old one.
    expect(await secretOf(key)).not.toBe(secret);
  }, 90_000);

  it("a 50-item job: every output decoded, one job.completed verified by the reference library, exact charges", async () => {
    const key = await account();
    const secret = await secretOf(key);
    const before = await balance(key);
    const hook = `fifty-${Date.now()}`;
    // Every tenth document is 100 KB: too large for its message, its request waits in the bucket.
    const items = Array.from({ length: 50 }, (_, n) => ({
      html: `<body style="margin:0;background:#${(n * 5).toString(16).padStart(2, "0")}8040"><h1>Item ${n}</h1>${n % 10 ? "" : `<!--${"x".repeat(100_000)}-->`}</body>`,
      width: 320,
      deviceScaleFactor: 1,
    }));
    const submitted = await postJson("/api/v1/jobs", { endpoint: "html-to-screenshot", items, webhookUrl: fixture(`/hooks/in?id=${hook}`) }, auth(key));
    expect(submitted.status).toBe(202);
    const { id } = (await submitted.json()) as Job;
    const job = (await waitFor(key, id, (j) => j.webhook?.deliveries[0]?.status === "delivered", 120_000)) as Job & {
      items: { status: string; charged_micro_usd: number; result: { downloadUrl: string } }[];
    };
    expect(job.items.map((i) => i.status)).toEqual(Array(50).fill("succeeded"));
    // Each output is its own item's page: the background colour of item n.
    for (const [n, item] of job.items.entries()) {
      const image = await readImage(Buffer.from(await (await fetch(item.result.downloadUrl)).arrayBuffer()));
      expect(image.width, `item ${n}`).toBe(320);
      expect(rgb(image, 300, 190), `item ${n}`).toEqual({ r: n * 5, g: 0x80, b: 0x40 });
    }
    expect(await balance(key)).toBe(before - 50 * 5_000);
    const received = await seen(hook);
    expect(received).toHaveLength(1);
    expect(new Webhook(secret).verify(received[0]!.body, received[0]!.headers)).toMatchObject({
      type: "job.completed",
      data: { job_id: id, status: "completed", counts: { succeeded: 50 }, charged_micro_usd: 250_000 },
    });
  }, 180_000);

  it('with webhookEvents ["item"]: each item\'s end too; a 500 is retried until a 2xx, each attempt kept', async () => {
    const key = await account();
    const secret = await secretOf(key);
    const hook = `retry-${Date.now()}`;
    const submitted = await postJson(
      "/api/v1/jobs",
      {
        endpoint: "screenshot",
        items: [shot, { ...shot, url: fixture("/not-found") }],
        webhookUrl: fixture(`/hooks/in?id=${hook}&fail=2`),
        webhookEvents: ["item"],
      },
      auth(key),
    );
    const { id } = (await submitted.json()) as Job;
    const job = await waitFor(key, id, (j) => (j.webhook?.deliveries.length ?? 0) === 3 && j.webhook!.deliveries.every((d) => d.status !== "pending"));
    const deliveries = job.webhook!.deliveries;
    expect(deliveries.map((d) => d.status)).toEqual(["delivered", "delivered", "delivered"]);
    expect(deliveries.map((d) => d.type).sort()).toEqual(["job.completed", "job.item", "job.item"]);
    // The first two requests the receiver saw failed (500): their deliveries were attempted again.
    expect(deliveries.flatMap((d) => d.attempts.map((a) => a.status)).sort()).toEqual([204, 204, 204, 500, 500]);
    const received = await seen(hook);
    expect(received).toHaveLength(5);
    const events = received.map((r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { index?: number; status: string } });
    const items = events.filter((e) => e.type === "job.item").map((e) => [e.data.index, e.data.status]);
    expect(new Set(items.map((i) => JSON.stringify(i)))).toEqual(new Set([JSON.stringify([0, "succeeded"]), JSON.stringify([1, "failed"])]));
    // A retry is the same message: the same id and body, a fresh timestamp and signature.
    const byId = Object.groupBy(received, (r) => r.headers["webhook-id"]!);
    for (const tries of Object.values(byId)) expect(new Set(tries!.map((t) => t.body)).size).toBe(1);
  }, 90_000);

  it("sends each item's event as the item ends, not behind the items still queued (webhook attempts have a queue of their own)", async () => {
    const key = await account();
    await secretOf(key);
    const hook = `progress-${Date.now()}`;
    // Three waves of the stack's 4 rendering slots, each page answering after 2 s: the first
    // wave's events must not wait for the third wave to start.
    const items = Array.from({ length: 12 }, () => ({ ...shot, url: fixture("/simple?ttfb=2000") }));
    const submitted = await postJson(
      "/api/v1/jobs",
      { endpoint: "screenshot", items, webhookUrl: fixture(`/hooks/in?id=${hook}`), webhookEvents: ["item"] },
      auth(key),
    );
    const { id } = (await submitted.json()) as Job;
    const job = (await waitFor(key, id, (j) => j.webhook?.deliveries.filter((d) => d.status === "delivered").length === 13, 120_000)) as Job & {
      items: { status: string; started_at: string }[];
    };
    expect(job.items.map((i) => i.status)).toEqual(Array(12).fill("succeeded"));
    const itemEvents = (await seen(hook)).filter((r) => JSON.parse(r.body).type === "job.item");
    expect(itemEvents).toHaveLength(12);
    const lastStart = Math.max(...job.items.map((i) => Date.parse(i.started_at)));
    expect(Math.min(...itemEvents.map((r) => r.at))).toBeLessThan(lastStart);
  }, 150_000);

  it("follows no redirect: a 302 is an attempt that failed", async () => {
    const key = await account();
    await secretOf(key);
    const hook = `moved-${Date.now()}`;
    const { id } = (await (
      await postJson("/api/v1/jobs", { endpoint: "screenshot", items: [shot], webhookUrl: fixture(`/hooks/in?id=${hook}&redirect=1`) }, auth(key))
    ).json()) as Job;
    const job = await waitFor(key, id, (j) => (j.webhook?.deliveries[0]?.attempts.length ?? 0) >= 2);
    expect(job.webhook!.deliveries[0]!.attempts.slice(0, 2).map((a) => a.status)).toEqual([302, 302]);
    expect(await seen(`${hook}-redirected`)).toEqual([]);
  }, 90_000);

  it("refuses a webhook URL on a private address, or without a secret, before anything is made (no connection tried)", async () => {
    const key = await account();
    const refused = async (webhookUrl: string, pattern: RegExp) => {
      const res = await postJson("/api/v1/jobs", { endpoint: "screenshot", items: [shot], webhookUrl }, auth(key));
      expect(res.status, webhookUrl).toBe(400);
      expect(((await res.json()) as ErrorBody).error.message).toMatch(pattern);
    };
    await refused(fixture("/hooks/in?id=no-secret"), /no webhook secret to sign with; make one with POST \/api\/v1\/webhook-secret/);
    await secretOf(key);
    // Literal addresses: refused by the guard without a lookup or a connection.
    for (const url of ["http://10.0.0.1/hook", "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/hook", `${inject("canaryUrl")}/hook`]) {
      await refused(url, /webhookUrl: .*a private address/);
    }
    const listed = (await (await fetch(`${base}/api/v1/jobs`, { headers: auth(key) })).json()) as { jobs: unknown[] };
    expect(listed.jobs).toEqual([]);
    expect((await canaryHits()).filter((hit) => hit.includes("/hook"))).toEqual([]);
  });

  it("one account's receiver that never answers holds one sender at a time: another account's webhook arrives in seconds", async () => {
    // Twenty items whose events go to a receiver that accepts and never answers: first come, first
    // served, they would hold every sender for their whole timeout, again and again.
    const stuck = await account();
    await secretOf(stuck);
    const items = Array.from({ length: 20 }, () => ({ ...html, html: "<p>fast</p>" }));
    const stuckJob = await postJson(
      "/api/v1/jobs",
      { endpoint: "html-to-screenshot", items, webhookUrl: fixture("/zoo/hang"), webhookEvents: ["item"] },
      auth(stuck),
    );
    expect(stuckJob.status).toBe(202);
    const { id: stuckId } = (await stuckJob.json()) as Job;
    // Once its items have ended (their events queued), another account's job.
    await waitFor(stuck, stuckId, (j) => (j.webhook?.deliveries.length ?? 0) >= 10);
    const other = await account();
    await secretOf(other);
    const hook = `fair-${Date.now()}`;
    const submitted = Date.now();
    const { id } = (await (
      await postJson(
        "/api/v1/jobs",
        { endpoint: "html-to-screenshot", items: [{ ...html, html: "<p>mine</p>" }], webhookUrl: fixture(`/hooks/in?id=${hook}`) },
        auth(other),
      )
    ).json()) as Job;
    await waitFor(other, id, (j) => j.webhook?.deliveries[0]?.status === "delivered", 60_000);
    const arrived = (await seen(hook))[0]?.at;
    expect(arrived).toBeDefined();
    expect(arrived! - submitted).toBeLessThan(15_000);
    // The stuck receiver's attempts ran one at a time: never two of its events at once.
    const stuckJobNow = await waitFor(stuck, stuckId, () => true);
    const attempts = stuckJobNow.webhook!.deliveries.flatMap((d) => d.attempts.map((a) => Date.parse((a as { at: string }).at))).sort((a, b) => a - b);
    for (let i = 1; i < attempts.length; i++) expect(attempts[i]! - attempts[i - 1]!).toBeGreaterThanOrEqual(4_500);
  }, 120_000);
});
