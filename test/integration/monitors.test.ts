// Monitors through the local stack (docs/api.md, "Monitors"): fixture pages whose version the test
// sets (dev/harness/monitor-pages.ts: bands 100 CSS px tall, so a change's place is known), checks
// run now (POST .../check) by the stack's jobs worker, their outcomes read from the history, their
// webhooks verified with the Standard Webhooks reference library. The schedule's own runs, a
// balance at zero and redelivered checks are in monitors-schedule.test.ts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import sharp from "sharp";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import { fundedKey } from "../../dev/harness/dev-process.js";
import { BAND } from "../../dev/harness/monitor-pages.js";
import { localKeyRing, unseal } from "../../lib/storage/sealed.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { getItem } from "../helpers/ledger.js";

const base = inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let counter = 0;
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const account = () => fundedKey(base, inject("localDir"), `monitors-${Date.now()}-${counter++}@monitors.test`, 10);
const pageId = () => `p${Date.now()}-${counter++}`;
const setVersion = (id: string, v: string) => fetch(fixture(`/monitor/set?id=${id}&v=${v}`)).then((r) => r.text());
const balance = async (key: string) =>
  ((await (await fetch(`${base}/api/v1/usage`, { headers: auth(key) })).json()) as { balance_micro_usd: number }).balance_micro_usd;

type Box = { x: number; y: number; width: number; height: number };
type Check = {
  id: string;
  status: string;
  outcome?: string;
  changedPercent?: number;
  boxes?: Box[];
  images?: { beforeUrl: string; afterUrl: string; diffUrl: string };
  text?: { added: string[]; removed: string[] };
  charged_micro_usd: number;
  error?: { code: string; message: string };
};
type Monitor = ErrorBody & {
  id: string;
  status: string;
  paused_reason?: string;
  next_check_at?: string;
  failures_in_a_row: number;
  first_check_id: string;
  last_check?: { outcome: string };
  last_change?: { id: string; thumbnailUrl?: string };
  webhook?: { deliveries: { type: string; status: string }[] };
};

const call = async <T>(key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth(key), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
};

/** The article page `id` watched at 1280 px, the whole page, at 1x. */
const articleMonitor = (id: string, extra: Record<string, unknown> = {}) => ({
  url: fixture(`/monitor/article?id=${id}`),
  every: "1h",
  width: 1280,
  height: 800,
  fullPage: true,
  ...extra,
});

async function create(key: string, body: Record<string, unknown>): Promise<Monitor> {
  const { status, body: monitor } = await call<Monitor>(key, "POST", "/api/v1/monitors", body);
  expect(status, JSON.stringify(monitor)).toBe(201);
  return monitor;
}

/** Check `checkId` of monitor `id` once it is done (read every 200 ms, for at most a minute). */
async function checkDone(key: string, id: string, checkId: string): Promise<Check> {
  const end = Date.now() + 60_000;
  for (;;) {
    const { body } = await call<{ checks: Check[] }>(key, "GET", `/api/v1/monitors/${id}/checks?limit=50`);
    const check = body.checks.find((c) => c.id === checkId);
    if (check?.status === "done" || Date.now() > end) return check!;
    await sleep(200);
  }
}

/** Runs a check of monitor `id` now and answers it when done. */
async function checkNow(key: string, id: string): Promise<Check> {
  const { status, body } = await call<{ check_id: string }>(key, "POST", `/api/v1/monitors/${id}/check`);
  expect(status).toBe(202);
  return checkDone(key, id, body.check_id);
}

const secretOf = async (key: string) =>
  ((await (await fetch(`${base}/api/v1/webhook-secret`, { method: "POST", headers: auth(key) })).json()) as { secret: string }).secret;
type Seen = { headers: Record<string, string>; body: string };
const seen = async (id: string) => (await (await fetch(fixture(`/hooks/seen?id=${id}`))).json()) as Seen[];
async function hooksSeen(id: string, count: number): Promise<Seen[]> {
  const end = Date.now() + 30_000;
  for (;;) {
    const got = await seen(id);
    if (got.length >= count || Date.now() > end) return got;
    await sleep(200);
  }
}

describe("monitors: what a check finds", () => {
  it("a paragraph's words changed: changed, a box around exactly that band, the lines added and removed, images, a verified monitor.changed", async () => {
    const key = await account();
    const secret = await secretOf(key);
    const id = pageId();
    const hook = `mon-${id}`;
    const before = await balance(key);
    const monitor = await create(key, articleMonitor(id, { name: "Pricing", webhookUrl: fixture(`/hooks/in?id=${hook}`) }));
    expect(monitor).toMatchObject({ status: "active", mode: "both", every: "1h", threshold: { percent: 0.1 }, name: "Pricing" });
    const first = await checkDone(key, monitor.id, monitor.first_check_id);
    expect(first).toMatchObject({ outcome: "baseline", charged_micro_usd: 5_000 });
    await setVersion(id, "edited");
    const check = await checkNow(key, monitor.id);
    expect(check.outcome).toBe("changed");
    expect(check.charged_micro_usd).toBe(5_000);
    // Paragraph 6 is band 7: y 700 to 800 in the new capture's CSS px; nothing else changed.
    expect(check.boxes!.length).toBeGreaterThan(0);
    for (const box of check.boxes!) {
      expect(box.y).toBeGreaterThanOrEqual(7 * BAND);
      expect(box.y + box.height).toBeLessThanOrEqual(8 * BAND);
    }
    expect(check.changedPercent).toBeGreaterThan(0);
    expect(check.changedPercent).toBeLessThan(5);
    expect(check.text!.added).toEqual(["Paragraph 6: the price is now forty-two dollars a month, not nineteen."]);
    expect(check.text!.removed).toHaveLength(1);
    expect(check.text!.removed[0]).toMatch(/^Paragraph 6: /);
    // The images: the baseline, the new capture, and the new capture with the change marked in red.
    const [beforePng, afterPng, diffPng] = await Promise.all(
      [check.images!.beforeUrl, check.images!.afterUrl, check.images!.diffUrl].map(async (url) => Buffer.from(await (await fetch(url)).arrayBuffer())),
    );
    for (const png of [beforePng, afterPng, diffPng]) expect((await sharp(png).metadata()).format).toBe("png");
    const pixel = async (png: Buffer, x: number, y: number) => [...(await sharp(png).extract({ left: x, top: y, width: 1, height: 1 }).raw().toBuffer())];
    const box = check.boxes![0]!;
    // The outline, just outside the box's left edge: red on the diff, white on the capture.
    expect(await pixel(diffPng!, Math.max(0, box.x - 3), box.y + 5)).toSatisfy((p: number[]) => p[0]! > 180 && p[1]! < 140 && p[2]! < 140);
    expect(await pixel(afterPng!, Math.max(0, box.x - 3), box.y + 5)).toEqual([255, 255, 255]);
    // monitor.changed, signed for the account, with what changed.
    const [received] = await hooksSeen(hook, 1);
    const payload = new Webhook(secret).verify(received!.body, received!.headers) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({
      type: "monitor.changed",
      data: { monitor_id: monitor.id, check_id: check.id, outcome: "changed", changedPercent: check.changedPercent, boxes: check.boxes, text: check.text },
    });
    expect((payload.data.images as Record<string, string>).diffUrl).toMatch(/^http/);
    // The monitor shows its last change, with a thumbnail of it.
    const { body: now } = await call<Monitor>(key, "GET", `/api/v1/monitors/${monitor.id}`);
    expect(now).toMatchObject({ last_check: { outcome: "changed" }, last_change: { id: check.id } });
    expect((await sharp(Buffer.from(await (await fetch(now.last_change!.thumbnailUrl!)).arrayBuffer())).metadata()).format).toBe("webp");
    expect(now.webhook!.deliveries).toMatchObject([{ type: "monitor.changed", status: "delivered" }]);
    // Checked again with nothing changed since: unchanged against the new baseline, no second event.
    expect((await checkNow(key, monitor.id)).outcome).toBe("unchanged");
    expect(await balance(key)).toBe(before - 3 * 5_000);
    await sleep(500);
    expect(await seen(hook)).toHaveLength(1);
  }, 120_000);

  it("a paragraph inserted at the top: the changed band is the insertion, not the page below it", async () => {
    const key = await account();
    const id = pageId();
    const monitor = await create(key, articleMonitor(id, { mode: "visual" }));
    await checkDone(key, monitor.id, monitor.first_check_id);
    await setVersion(id, "inserted");
    const check = await checkNow(key, monitor.id);
    expect(check.outcome).toBe("changed");
    // The inserted band is y 100 to 200 of the new capture; the twelve paragraphs below it moved down, unchanged.
    for (const box of check.boxes!) {
      expect(box.y).toBeGreaterThanOrEqual(BAND - 2);
      expect(box.y + box.height).toBeLessThanOrEqual(2 * BAND + 2);
    }
    // At most the inserted band's share of the 1,400 px page; compared in place, everything below it would be.
    expect(check.changedPercent).toBeLessThanOrEqual(100 / 14 + 0.5);
    expect(check.text).toBeUndefined();
  }, 90_000);

  it("a ticking clock under ignoreSelectors and a load counter under ignoreText: unchanged for ten checks; without them, changed", async () => {
    const key = await account();
    const url = fixture(`/monitor/clock?id=${pageId()}`);
    const ignoring = await create(key, { url, ignoreSelectors: ["#clock"], ignoreText: ["Updated \\d+ minutes ago"], width: 800, height: 500 });
    const plain = await create(key, { url: fixture(`/monitor/clock?id=${pageId()}`), width: 800, height: 500 });
    expect((await checkDone(key, ignoring.id, ignoring.first_check_id)).outcome).toBe("baseline");
    await checkDone(key, plain.id, plain.first_check_id);
    const changed = await checkNow(key, plain.id);
    expect(changed.outcome).toBe("changed");
    expect(changed.text!.added.some((line) => /^Updated \d+ minutes ago/.test(line))).toBe(true);
    for (let n = 0; n < 10; n++) {
      const check = await checkNow(key, ignoring.id);
      expect(check.outcome, `check ${n + 1}`).toBe("unchanged");
      expect(check.changedPercent).toBe(0);
    }
  }, 180_000);

  it("a threshold above the change: unchanged, its changed share still reported", async () => {
    const key = await account();
    const id = pageId();
    const monitor = await create(key, articleMonitor(id, { mode: "visual", threshold: { percent: 20 } }));
    await checkDone(key, monitor.id, monitor.first_check_id);
    await setVersion(id, "edited");
    const check = await checkNow(key, monitor.id);
    expect(check.outcome).toBe("unchanged");
    expect(check.changedPercent).toBeGreaterThan(0);
    expect(check.changedPercent).toBeLessThan(20);
  }, 90_000);

  it("a page that starts answering 500: failed, free, retried; one monitor.failed for the streak, and backed off", async () => {
    const key = await account();
    const secret = await secretOf(key);
    const id = pageId();
    const hook = `failing-${id}`;
    const monitor = await create(key, articleMonitor(id, { webhookUrl: fixture(`/hooks/in?id=${hook}`) }));
    await checkDone(key, monitor.id, monitor.first_check_id);
    const before = await balance(key);
    await setVersion(id, "down");
    for (let n = 1; n <= 4; n++) {
      const check = await checkNow(key, monitor.id);
      expect(check).toMatchObject({ outcome: "failed", charged_micro_usd: 0, error: { code: "INVALID_URL" } });
      expect(check.error!.message).toContain("500");
    }
    expect(await balance(key)).toBe(before);
    const { body: failing } = await call<Monitor>(key, "GET", `/api/v1/monitors/${monitor.id}`);
    expect(failing).toMatchObject({ status: "failing", failures_in_a_row: 4, last_check: { outcome: "failed" } });
    // Backed off: the next scheduled check is not before an hour (its `every`) times two.
    expect(Date.parse(failing.next_check_at!) - Date.now()).toBeGreaterThan(1.9 * 3_600_000);
    const received = await hooksSeen(hook, 1);
    await sleep(500);
    expect(await seen(hook)).toHaveLength(1);
    const payload = new Webhook(secret).verify(received[0]!.body, received[0]!.headers) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({ type: "monitor.failed", data: { monitor_id: monitor.id, failures: 3, error: { code: "INVALID_URL" } } });
    // The page recovers: the next check compares with the baseline, and the streak is over.
    await setVersion(id, "base");
    expect((await checkNow(key, monitor.id)).outcome).toBe("unchanged");
    const { body: recovered } = await call<Monitor>(key, "GET", `/api/v1/monitors/${monitor.id}`);
    expect(recovered).toMatchObject({ status: "active", failures_in_a_row: 0 });
  }, 120_000);
});

describe("monitors: the API", () => {
  it("PATCH of what it watches starts a new baseline; paused runs nothing (409 on a check, no next check); resumed, due at once; deleted, gone", async () => {
    const key = await account();
    const id = pageId();
    const monitor = await create(key, articleMonitor(id));
    await checkDone(key, monitor.id, monitor.first_check_id);
    // Another part of the page: the next check is a new baseline, not a change.
    const rewatched = await call<Monitor>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { fullPage: false, selector: "header" });
    expect(rewatched.status).toBe(200);
    expect((await checkNow(key, monitor.id)).outcome).toBe("baseline");
    // A field that does not change what it watches keeps the baseline.
    expect((await call<Monitor>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { name: "Header", threshold: { percent: 1 } })).body).toMatchObject({
      name: "Header",
    });
    expect((await checkNow(key, monitor.id)).outcome).toBe("unchanged");
    const paused = await call<Monitor>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { paused: true });
    expect(paused.body).toMatchObject({ status: "paused", paused_reason: "requested" });
    expect(paused.body.next_check_at).toBeUndefined();
    const refused = await call<ErrorBody>(key, "POST", `/api/v1/monitors/${monitor.id}/check`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("MONITOR_PAUSED");
    const resumed = await call<Monitor>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { paused: false, every: "5m", name: null });
    expect(resumed.body).toMatchObject({ status: "active", every: "5m" });
    expect(resumed.body).not.toHaveProperty("name");
    expect(Math.abs(Date.parse(resumed.body.next_check_at!) - Date.now())).toBeLessThan(10_000);
    // Listed, then deleted: gone for good.
    const { body: list } = await call<{ monitors: Monitor[] }>(key, "GET", "/api/v1/monitors");
    expect(list.monitors.map((m) => m.id)).toEqual([monitor.id]);
    expect((await call(key, "DELETE", `/api/v1/monitors/${monitor.id}`)).status).toBe(200);
    expect((await call(key, "GET", `/api/v1/monitors/${monitor.id}`)).status).toBe(404);
    expect((await call(key, "GET", `/api/v1/monitors/${monitor.id}/checks`)).status).toBe(404);
  }, 90_000);

  it("the secrets a monitor sends its page are never answered back: [redacted] in POST, GET, the list and PATCH; sent back, they keep their values", async () => {
    const key = await account();
    // Long and short ones: a 2-character cookie and header are as secret as the rest.
    const SECRETS = ["MONCOOKIE123", "MONHEADER456", "MONPASS789", "zq", "k9", "pw"];
    const secrets = {
      cookies: [
        { name: "session", value: "MONCOOKIE123" },
        { name: "tiny", value: "zq" },
      ],
      headers: { "X-Api-Token": "MONHEADER456", "X-Short": "k9" },
      httpAuth: { username: "ann", password: "MONPASS789" },
    };
    const runId = pageId();
    const monitor = await create(key, { url: fixture(`/logs/page?id=${runId}`), every: "1d", width: 400, height: 300, mode: "text", ...secrets });
    const { body: got } = await call<Monitor>(key, "GET", `/api/v1/monitors/${monitor.id}`);
    const { body: list } = await call<{ monitors: Monitor[] }>(key, "GET", "/api/v1/monitors");
    const renamed = await call<Monitor>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { name: "Logged in" });
    const shown = {
      cookies: [
        { name: "session", value: "[redacted]" },
        { name: "tiny", value: "[redacted]" },
      ],
      headers: { "X-Api-Token": "[redacted]", "X-Short": "[redacted]" },
      httpAuth: { username: "ann", password: "[redacted]" },
    };
    for (const [what, answer] of [
      ["POST", monitor],
      ["GET", got],
      ["list", list.monitors[0]],
      ["PATCH", renamed.body],
    ] as const) {
      expect(answer, what).toMatchObject(shown);
      const text = JSON.stringify(answer);
      for (const secret of SECRETS) expect(text, what).not.toContain(`"${secret}"`);
    }
    // The client sends back what it was shown, on a new page: the page is still sent the real values.
    const nextRun = pageId();
    const moved = await call<Monitor>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { url: fixture(`/logs/page?id=${nextRun}`), ...shown });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject(shown);
    expect((await checkNow(key, monitor.id)).status).toBe("done");
    const seenBy = (await (await fetch(fixture(`/logs/seen?id=${nextRun}`))).json()) as {
      path: string;
      cookie: string;
      authorization: string;
      token: string;
    }[];
    const document = seenBy.find((r) => r.path === "/logs/page")!;
    expect(document.cookie).toContain("session=MONCOOKIE123");
    expect(document.cookie).toContain("tiny=zq");
    expect(document.token).toBe("MONHEADER456");
    expect(document.authorization).toBe(`Basic ${Buffer.from("ann:MONPASS789").toString("base64")}`);
    // Moved to another origin (localhost: the same server under another name), the page's secrets do not follow it.
    const elsewhere = fixture(`/logs/page?id=${pageId()}`).replace("127.0.0.1", "localhost");
    const resentThere = await call<ErrorBody>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, { url: elsewhere, ...shown });
    expect(resentThere.status).toBe(400);
    expect(resentThere.body.error.message).toMatch(/cookies\.0\.value|headers\.X-Api-Token/);
    expect(resentThere.body.error.message).toContain("moved to another origin");
    const there = await call<Monitor & { headers?: unknown; cookies?: unknown; httpAuth?: unknown }>(key, "PATCH", `/api/v1/monitors/${monitor.id}`, {
      url: elsewhere,
    });
    expect(there.status, JSON.stringify(there.body)).toBe(200);
    expect(there.body.headers ?? {}).toEqual({});
    expect(there.body.cookies ?? []).toEqual([]);
    expect(there.body.httpAuth).toBeUndefined();

    // A password in the page's URL is one too: shown as [redacted], and the URL sent back as shown is the one kept.
    const withPassword = fixture(`/monitor/article?id=${pageId()}`).replace("://", "://ann:MONURL777@");
    const inUrl = await create(key, { url: withPassword, every: "1d", width: 400, height: 300, mode: "text" });
    const shownUrl = withPassword.replace("MONURL777", "[redacted]");
    expect((inUrl as unknown as { url: string }).url).toBe(shownUrl);
    const { body: gotUrl } = await call<{ url: string }>(key, "GET", `/api/v1/monitors/${inUrl.id}`);
    expect(gotUrl.url).toBe(shownUrl);
    const resent = await call<{ url: string; name: string }>(key, "PATCH", `/api/v1/monitors/${inUrl.id}`, { url: shownUrl, name: "same page" });
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ url: shownUrl, name: "same page" });
    expect(JSON.stringify([inUrl, gotUrl, resent.body])).not.toContain("MONURL777");
    // As stored: the URL as shown, and sealed (under the stack's local key), the page's own URL, its password and all.
    const { account_id } = (await call<{ account_id: string }>(key, "GET", "/api/v1/auto-topup")).body;
    const stored = (await getItem(`ACCT#${account_id}`, `MON#${inUrl.id}`)) as { request: { url: string }; sealed: string; secretKey: string };
    expect(stored.request.url).toBe(shownUrl);
    const localKey = localKeyRing(Buffer.from(readFileSync(path.join(inject("localDir"), "secrets.key"), "utf8").trim(), "base64"));
    expect(await unseal({ key: stored.secretKey, box: stored.sealed }, `monitor ${inUrl.id}`, localKey)).toEqual({ url: withPassword });
  }, 90_000);

  it("another account's monitor is 404 to every method, and its checks are not listed", async () => {
    const [owner, other] = [await account(), await account()];
    const monitor = await create(owner, articleMonitor(pageId()));
    for (const [method, path, body] of [
      ["GET", `/api/v1/monitors/${monitor.id}`],
      ["PATCH", `/api/v1/monitors/${monitor.id}`, { paused: true }],
      ["DELETE", `/api/v1/monitors/${monitor.id}`],
      ["POST", `/api/v1/monitors/${monitor.id}/check`],
      ["GET", `/api/v1/monitors/${monitor.id}/checks`],
    ] as const) {
      const { status, body: answer } = await call<ErrorBody>(other, method, path, body);
      expect(status, `${method} ${path}`).toBe(404);
      expect(answer.error.code).toBe("NOT_FOUND");
    }
    expect((await call<{ monitors: Monitor[] }>(other, "GET", "/api/v1/monitors")).body.monitors).toEqual([]);
    // Still the owner's, unpaused.
    expect((await call<Monitor>(owner, "GET", `/api/v1/monitors/${monitor.id}`)).body.status).not.toBe("paused");
  }, 60_000);

  it("bad requests are 400 naming the field, nothing made or charged: intervals, patterns a backtracking engine would choke on, private webhooks", async () => {
    const key = await account();
    const before = await balance(key);
    const url = fixture("/monitor/article?id=bad");
    for (const [body, field] of [
      [{ url, every: "1m" }, "every"],
      [{ url, every: "2d" }, "every"],
      [{ url, every: "soon" }, "every"],
      [{ url, ignoreText: ["(a)\\1"] }, "ignoreText.0"],
      [{ url, ignoreText: ["(?<=price)\\d+"] }, "ignoreText.0"],
      [{ url, ignoreText: Array.from({ length: 21 }, () => "x") }, "ignoreText"],
      [{ url, ignoreText: ["x".repeat(201)] }, "ignoreText.0"],
      [{ url, threshold: { percent: 101 } }, "threshold.percent"],
      [{ url, mode: "pixels" }, "mode"],
      [{ url, format: "jpeg" }, "format"],
      [{ url, fullPage: true, selector: "h1" }, "fullPage"],
      [{ url: "ftp://example.com/" }, "url"],
    ] as const) {
      const res = await postJson("/api/v1/monitors", body, auth(key));
      const answer = (await res.json()) as ErrorBody;
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.error.message).toContain(field);
    }
    // A page on a private address (the metadata service, another network): refused at once, no connection tried.
    for (const target of ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://[::1]:9/"]) {
      const res = await postJson("/api/v1/monitors", { url: target }, auth(key));
      expect(res.status, target).toBe(400);
      expect(((await res.json()) as ErrorBody).error.message).toContain("url");
    }
    // A webhook on a private address, or without a secret to sign with.
    const privateHook = await postJson("/api/v1/monitors", { url, webhookUrl: "http://169.254.169.254/latest" }, auth(key));
    expect(privateHook.status).toBe(400);
    const noSecret = await postJson("/api/v1/monitors", { url, webhookUrl: fixture("/hooks/in?id=x") }, auth(key));
    expect(noSecret.status).toBe(400);
    expect(((await noSecret.json()) as ErrorBody).error.message).toContain("webhook secret");
    expect((await call<{ monitors: Monitor[] }>(key, "GET", "/api/v1/monitors")).body.monitors).toEqual([]);
    expect(await balance(key)).toBe(before);
  });

  it("an ignoreText pattern that backtracking engines take exponential time over runs in linear time: the check answers", async () => {
    const key = await account();
    // (a+)+$ over a long run of a's that ends in "!": catastrophic in a backtracking engine, linear in RE2.
    const monitor = await create(key, { url: fixture(`/monitor/article?id=${pageId()}&long=1`), mode: "text", ignoreText: ["(a+)+$", "(x+x+)+y"] });
    const first = await checkDone(key, monitor.id, monitor.first_check_id);
    expect(first).toMatchObject({ outcome: "baseline", charged_micro_usd: 2_000 });
  }, 60_000);

  it("a page of 20,000 new random lines on every load: the check compares it whole within 45 s, and the API answers meanwhile", async () => {
    const key = await account();
    const monitor = await create(key, { url: fixture(`/monitor/noise?id=${pageId()}`), mode: "text" });
    const first = await checkDone(key, monitor.id, monitor.first_check_id);
    expect(first, JSON.stringify(first.error)).toMatchObject({ outcome: "baseline" });
    // The second reading shares no line with the first: past the diff's budget, compared whole.
    const { body: queued } = await call<{ check_id: string }>(key, "POST", `/api/v1/monitors/${monitor.id}/check`);
    const started = Date.now();
    let slowest = 0;
    let done: Check | undefined;
    while (!done && Date.now() - started < 45_000) {
      const asked = performance.now();
      expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
      slowest = Math.max(slowest, performance.now() - asked);
      const { body } = await call<{ checks: Check[] }>(key, "GET", `/api/v1/monitors/${monitor.id}/checks?limit=5`);
      done = body.checks.find((c) => c.id === queued.check_id && c.status === "done");
      await sleep(100);
    }
    expect(done, "the check did not end within 45 s").toBeDefined();
    expect(done).toMatchObject({ outcome: "changed", text: { added: [], removed: [], tooLarge: true }, charged_micro_usd: 2_000 });
    expect(slowest).toBeLessThan(1_000);
  }, 120_000);
});
