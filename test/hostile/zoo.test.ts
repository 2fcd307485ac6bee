// The hostile-page zoo (dev/harness/hostile-pages.ts) through the real service: whatever a page or an
// upstream server does, the answer is a picture or our JSON error within the deadline, the process
// lives, the next render works, a failed render costs nothing, and afterwards the process is back
// near its baseline (memory, sockets, Chromium processes, contexts). The zoo gets a local stack of
// its own, so that no other test file's renders blur those measures.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { type DevProcess, fundedKey, startDev } from "../../dev/harness/dev-process.js";
import { chromiumProcesses, drift, type RenderState, renderState } from "../../dev/harness/render-state.js";
import { DEFAULT_GUARD_LIMITS } from "../../lib/render/guard/network-guard.js";
import { MAX_CAPTURE_HEIGHT } from "../../lib/render/limits.js";
import { PRICES } from "../../lib/routes.js";
import { TEST_PAGE_LOAD_MS } from "../global-setup.js";
import { decode, type ErrorBody, rgb } from "../helpers/api.js";

const zoo = (name: string) => `${inject("fixtureUrl")}/zoo/${name}`;
const zooHits = async (name: string) => (await (await fetch(`${zoo("__hits")}?name=${name}`)).json()) as number;
// The request deadline is ~28 s. A page gets TEST_PAGE_LOAD_MS, its capture a reserve of 3 s more,
// and a render that timed out waits for the stuck-browser probe (milliseconds, at most 10 s on a
// saturated machine) before it answers: well before the deadline either way.
const WITHIN_MS = TEST_PAGE_LOAD_MS + 3_000 + 10_000 + 2_000;
// API Gateway cuts every request at 30 s: an answer later than that is no answer.
const GATEWAY_MS = 30_000;

let dev: DevProcess;
let key: string;
let baseline: RenderState;
const post = (path: string, body: unknown, paid = true) =>
  fetch(`${dev.info.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(paid ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
const shoot = (url: string, extra: Record<string, unknown> = {}) =>
  post("/api/v1/screenshot", { url, width: 400, height: 300, deviceScaleFactor: 1, ...extra });
const shootHtml = (html: string, extra: Record<string, unknown> = {}) =>
  post("/api/v1/html-to-screenshot", { html, width: 400, height: 300, deviceScaleFactor: 1, ...extra });
const metadata = (url: string) => post("/api/v1/metadata", { url }, false);
const zooHtml = async (name: string) => (await fetch(zoo(name))).text();
const balance = async () =>
  ((await (await fetch(`${dev.info.baseUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_micro_usd: number })
    .balance_micro_usd;

/** The service process still answers, and a plain render right now succeeds promptly; returns how long it took. */
async function stillHealthy() {
  expect(() => process.kill(dev.child.pid!, 0), "the service process is alive").not.toThrow();
  const started = Date.now();
  const res = await shootHtml("<body style='background:#0000ff'>", { width: 320, height: 200 });
  expect(res.status).toBe(200);
  expect(rgb(await decode(res), 100, 100)).toEqual({ r: 0, g: 0, b: 255 });
  return Date.now() - started;
}

/** An answer that is our JSON error with `status` and `code`; returns its message. */
async function expectError(res: Response, status: number, code: string) {
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  return body.error.message;
}

/**
 * A paid render that ends as one of `outcomes` ("200" for a picture, else "status CODE") within the
 * deadline, charged exactly when it succeeded. Returns the response (its body unread when 200).
 */
async function expectRender(send: () => Promise<Response>, outcomes: string[], withinMs = WITHIN_MS, price: number = PRICES.screenshot) {
  const before = await balance();
  const started = Date.now();
  const res = await send();
  const elapsed = Date.now() - started;
  let outcome = "200";
  if (res.status !== 200) {
    expect(res.headers.get("content-type"), `a ${res.status} must be our JSON error`).toMatch(/^application\/json/);
    outcome = `${res.status} ${((await res.clone().json()) as ErrorBody).error.code}`;
  }
  expect(outcomes).toContain(outcome);
  expect(elapsed).toBeLessThan(withinMs);
  expect(await balance()).toBe(before - (res.status === 200 ? price : 0));
  return res;
}

/** The free metadata endpoint answers `url` with one of `statuses`, in our JSON, within the deadline. */
async function expectMetadata(url: string, statuses: number[]) {
  const started = Date.now();
  const res = await metadata(url);
  expect(statuses).toContain(res.status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(Date.now() - started).toBeLessThan(WITHIN_MS);
  return res.json() as Promise<{ title?: string; error?: { code: string; message: string } }>;
}

beforeAll(async () => {
  dev = await startDev({
    ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host,
    PAGE_LOAD_TIMEOUT_MS: String(TEST_PAGE_LOAD_MS),
    // So that /__dev/render-stats measures the heap after a full collection.
    NODE_OPTIONS: "--expose-gc",
  });
  key = await fundedKey(dev.info.baseUrl, dev.localDir, "zoo@shotline.test", 100);
  // Warm: both browsers launched, a render done, the spare context prepared.
  await stillHealthy();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  baseline = await renderState(dev.info.baseUrl, dev.child.pid!);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
});

// After every case: the process lives, a normal render succeeds, and what it holds comes back near
// the baseline (renderer processes take a moment to exit after their context closes).
afterEach(async () => {
  expect(await stillHealthy(), "a normal render right after, in ms").toBeLessThan(5_000);
  let now = await renderState(dev.info.baseUrl, dev.child.pid!);
  for (const until = Date.now() + 15_000; drift(baseline, now).length > 0 && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    now = await renderState(dev.info.baseUrl, dev.child.pid!);
  }
  expect(drift(baseline, now), `baseline ${JSON.stringify(baseline)}`).toEqual([]);
}, 60_000);

describe("upstream answers that are not HTTP", () => {
  const broken = ["status-000", "status-099", "status-101", "status-999", "header-control", "double-length", "broken-chunks", "huge-header", "many-headers"];

  it.each(broken)("%s as the document: 422 INVALID_URL, free", async (name) => {
    const res = await expectRender(() => shoot(zoo(name)), ["422 INVALID_URL"]);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/^The page could not be loaded: .*(invalid|not valid HTTP)/);
  });

  it.each(broken)("%s to the free metadata endpoint: 422 INVALID_URL, never a 500", async (name) => {
    expect((await expectMetadata(zoo(name), [422])).error?.code).toBe("INVALID_URL");
  });

  it("a reason phrase with a control character is replaced, not thrown: the page renders and its metadata reads", async () => {
    await expectRender(() => shoot(zoo("reason-control")), ["200"]);
    await expectMetadata(zoo("reason-control"), [200]);
  });

  it("as images in a page (URL and HTML mode): the page renders, the broken images are left out", async () => {
    const page = await expectRender(() => shoot(zoo("subresources")), ["200"]);
    expect(rgb(await decode(page), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
    const images = broken.map((name) => `<img src="${zoo(name)}" width="10" height="10">`).join("");
    await expectRender(() => shootHtml(`<body style="background:#00ff00">${images}`), ["200"]);
  });

  it("a server that resets the connection: 422, and metadata 422", async () => {
    await expectRender(() => shoot(zoo("reset")), ["422 INVALID_URL"]);
    await expectMetadata(zoo("reset"), [422]);
  });
});

describe("upstream servers that stall or flood", () => {
  it.each(["slowloris", "hang"])("%s: RENDER_TIMEOUT at the page-load limit, free; metadata within its deadline", async (name) => {
    await expectRender(() => shoot(zoo(name)), ["504 RENDER_TIMEOUT"]);
    await expectMetadata(zoo(name), [504]);
  });

  it("slow-body: a document that never ends but painted what came is captured as it stood at the page-load limit (incomplete, charged)", async () => {
    const res = await expectRender(() => shoot(zoo("slow-body")), ["200"]);
    expect(res.headers.get("x-capture-incomplete")).toBe("load-timeout");
    expect(res.headers.get("x-charged-micro-usd")).toBe("5000");
    expect(rgb(await decode(res), 10, 10)).toEqual({ r: 0, g: 255, b: 0 });
    // What it said so far may be enough for metadata.
    await expectMetadata(zoo("slow-body"), [200, 504]);
  });

  it("a 1 GB body: the guard's byte limit (or the page-load limit) ends the render; the server never sends it all", async () => {
    const before = await zooHits("gigabyte-bytes");
    // Waiting for its load event: a page that painted is otherwise captured where it stands at the
    // limit (200, X-Capture-Incomplete) when the machine is too busy to read 256 MB by then.
    const res = await expectRender(() => shoot(zoo("gigabyte"), { waitUntil: "load" }), ["422 INVALID_URL", "504 RENDER_TIMEOUT"]);
    if (res.status === 422) expect(((await res.json()) as ErrorBody).error.message).toMatch(/downloaded more than 256 MB/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // What the server wrote (bounded by socket buffers past what the guard read): far from 1 GB.
    expect((await zooHits("gigabyte-bytes")) - before).toBeLessThan(DEFAULT_GUARD_LIMITS.bytes + 64 * 1024 * 1024);
    const metadataBefore = await zooHits("gigabyte-bytes");
    await expectMetadata(zoo("gigabyte"), [200]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Metadata reads at most 2 MB of a document, then hangs up.
    expect((await zooHits("gigabyte-bytes")) - metadataBefore).toBeLessThan(32 * 1024 * 1024);
  });

  it("a gzip bomb (1 GB of spaces in 1 MB): an answer within the deadline; metadata inflates only 2 MB of it", async () => {
    await expectRender(() => shoot(zoo("gzip-bomb")), ["200", "422 INVALID_URL", "500 RENDER_ERROR", "504 RENDER_TIMEOUT"]);
    const started = Date.now();
    await expectMetadata(zoo("gzip-bomb"), [200]);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("an endless HTTP redirect: 422 'redirects too many times', free; metadata stops after 10 hops", async () => {
    const res = await expectRender(() => shoot(zoo("redirect-loop")), ["422 INVALID_URL"]);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/redirects too many times/);
    expect((await expectMetadata(zoo("redirect-loop"), [422])).error?.message).toMatch(/redirects more than 10 times/);
  });

  it.each(["js-redirect-loop", "meta-refresh-loop"])("an endless %s: an answer within the deadline, and through metadata's browser fallback", async (name) => {
    await expectRender(() => shoot(zoo(name)), ["200", "422 INVALID_URL", "504 RENDER_TIMEOUT"]);
    await expectMetadata(`${zoo(name)}?shell`, [200, 422, 504]);
  });

  it("redirect loops three at a time, each render racing its page's next document: never a 500, charged only for what was answered", async () => {
    // A failure while the page committed another document is the loop's, whatever the browser's words
    // for it (lib/render/page-load.ts): once a clean-clone run answered 500 here, on a busy machine.
    const before = await balance();
    const answers = await Promise.all(
      ["js-redirect-loop", "meta-refresh-loop", "js-redirect-loop"].map((name, i) =>
        shoot(`${zoo(name)}?race=${i}`).then(async (res) => ({ res, body: await res.text() })),
      ),
    );
    for (const { res, body } of answers) expect([200, 422, 504], body.slice(0, 200)).toContain(res.status);
    expect(await balance()).toBe(before - answers.filter(({ res }) => res.status === 200).length * PRICES.screenshot);
  });
});

describe("page behaviours", () => {
  it("dismisses alert, confirm, prompt and beforeunload at once (URL and HTML mode)", async () => {
    for (const send of [() => shoot(zoo("dialogs")), async () => shootHtml(await zooHtml("dialogs"))]) {
      const started = Date.now();
      const res = await expectRender(send, ["200"]);
      expect(Date.now() - started).toBeLessThan(TEST_PAGE_LOAD_MS);
      expect(rgb(await decode(res), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
    }
    await expectMetadata(`${zoo("dialogs")}?shell`, [200]);
  });

  it("renders a page that calls print()", async () => {
    await expectRender(() => shoot(zoo("print")), ["200"]);
  });

  it("opens none of a storm of 50 popups and renders the page (URL and HTML mode, metadata fallback)", async () => {
    for (const send of [() => shoot(zoo("popups")), async () => shootHtml(await zooHtml("popups"))]) {
      expect(rgb(await decode(await expectRender(send, ["200"])), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
    }
    await expectMetadata(`${zoo("popups")}?shell`, [200]);
  });

  it("an endless loop before load: RENDER_TIMEOUT at the page-load limit, free (URL and HTML mode, metadata fallback)", async () => {
    await expectRender(() => shoot(zoo("loop-before-load")), ["504 RENDER_TIMEOUT"]);
    await expectRender(async () => shootHtml(await zooHtml("loop-before-load")), ["504 RENDER_TIMEOUT"]);
    await expectMetadata(`${zoo("loop-before-load")}?shell`, [504]);
  });

  it("an endless loop after load: RENDER_TIMEOUT, free; four of them at once leave no slot taken", async () => {
    const before = await balance();
    const started = Date.now();
    // As many as the process renders at once (RENDER_CONCURRENCY 4): all its slots.
    const answers = await Promise.all([1, 2, 3, 4].map((i) => shoot(`${zoo("loop-after-load")}?${i}`)));
    for (const res of answers) expect(await expectError(res, 504, "RENDER_TIMEOUT")).toMatch(/stopped responding|did not finish/);
    expect(Date.now() - started).toBeLessThan(WITHIN_MS);
    expect(await balance()).toBe(before);
    // The slots were freed at once: a normal render starts without waiting for the looping pages.
    expect(await stillHealthy()).toBeLessThan(5_000);
    await expectRender(async () => shootHtml(await zooHtml("loop-after-load")), ["504 RENDER_TIMEOUT"]);
    await expectMetadata(`${zoo("loop-after-load")}?shell`, [504]);
  });

  it("a page that exhausts its memory fails that render only, as RENDER_ERROR, free (URL and HTML mode)", async () => {
    await expectRender(() => shoot(zoo("memory-bomb")), ["500 RENDER_ERROR"]);
    await expectRender(async () => shootHtml(await zooHtml("memory-bomb")), ["500 RENDER_ERROR"]);
  });

  it("a 100,000 px tall page as a full page: cut at the capture height cap", async () => {
    for (const send of [() => shoot(zoo("tall-page"), { fullPage: true }), async () => shootHtml(await zooHtml("tall-page"), { fullPage: true })]) {
      const image = await decode(await expectRender(send, ["200"]));
      expect({ width: image.width, height: image.height }).toEqual({ width: 400, height: MAX_CAPTURE_HEIGHT });
    }
  });

  it("a heavy WebGL shader that wedges the whole browser: RENDER_TIMEOUT within the deadline, the browser is replaced, the next render is prompt", async () => {
    // The page-load limit, the capture's reserve, then up to 10 s for the probe that finds the browser stuck.
    await expectRender(() => shoot(zoo("webgl")), ["200", "504 RENDER_TIMEOUT"], GATEWAY_MS);
    expect(dev.output()).toContain('"browser killed"');
    expect(await stillHealthy()).toBeLessThan(5_000);
  });

  it("a history.pushState storm: the page renders (URL and HTML mode)", async () => {
    // The storm keeps the page's thread busy: the answer may take up to the capture's bound.
    await expectRender(() => shoot(zoo("pushstate-storm")), ["200", "504 RENDER_TIMEOUT"], GATEWAY_MS);
    await expectRender(async () => shootHtml(await zooHtml("pushstate-storm")), ["200", "504 RENDER_TIMEOUT"], GATEWAY_MS);
  });

  it("a service worker registered by one render answers nothing of the next render of its origin", async () => {
    const res = await expectRender(() => shoot(zoo("service-worker"), { responseFormat: "json", waitForSelector: "#ready" }), ["200"]);
    expect(((await res.json()) as { title: string }).title).toBe("worker ready");
    const next = await expectRender(() => shoot(zoo("subresources")), ["200"]);
    expect(rgb(await decode(next), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
  });

  it("downloads are denied: a document that is a file is 422, a page that clicks a download renders, and no file is written", async () => {
    const res = await expectRender(() => shoot(zoo("download")), ["422 INVALID_URL"]);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/download/);
    await expectRender(() => shoot(zoo("download-link")), ["200"]);
    await expectMetadata(zoo("download"), [200]);
    // Wherever Chromium would save it: the profile, the temp dir, HOME, the working directory.
    const found = execFileSync("find", [tmpdir(), homedir(), process.cwd(), "-maxdepth", "4", "-name", "zoo-download*"], { encoding: "utf8" });
    expect(found.trim()).toBe("");
  });

  it("WebRTC aimed at a loopback UDP listener sends it nothing", async () => {
    const before = await zooHits("udp");
    await expectRender(() => shoot(zoo("webrtc")), ["200"]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await zooHits("udp")).toBe(before);
  });

  it("ignores a page flooding the cookie-banner binding with 10,000 init messages (each would cost 257 KB)", async () => {
    const res = await expectRender(() => shoot(zoo("consent-flood"), { blockCookieBanners: true, responseFormat: "json" }), ["200"]);
    expect(((await res.json()) as { title: string }).title).toBe("sent 10000");
  });

  it("caps a fetch flood at the guard's request limit: the victim never sees as many", async () => {
    const res = await expectRender(() => shoot(zoo("fetch-flood")), ["200", "422 INVALID_URL", "504 RENDER_TIMEOUT"]);
    if (res.status === 422) expect(((await res.json()) as ErrorBody).error.message).toMatch(`made more than ${DEFAULT_GUARD_LIMITS.requests} requests`);
    // Give requests in flight the time to land, then count.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await zooHits("victim")).toBeLessThan(DEFAULT_GUARD_LIMITS.requests);
  });
});

describe("animations of hostile pages", () => {
  // An animation has the frames' work on top of a render's: answered within the gateway's 30 s.
  const animate = (name: string, query: string, extra: Record<string, unknown>, outcome = "200") =>
    expectRender(
      () => post("/api/v1/animate", { url: `${inject("fixtureUrl")}/animate/${name}${query}`, width: 640, height: 360, duration: 2, fps: 10, ...extra }),
      [outcome],
      GATEWAY_MS,
      PRICES.animate,
    );

  it("an endless feed, a page that resizes itself every frame, and a 50,000 px page (as GIF: its palette reads the whole capture): answered, scrolled no further than a full page's cap", async () => {
    for (const [name, query] of [
      ["endless", ""],
      ["resizing", ""],
      ["stripes", "?h=50000"],
    ] as const) {
      const res = await animate(name, query, { format: "gif", responseFormat: "json" });
      const body = (await res.json()) as { frames: number; scrolledTo: number };
      expect(body.frames, name).toBe(20);
      expect(body.scrolledTo, name).toBeLessThanOrEqual(MAX_CAPTURE_HEIGHT - 360);
    }
  });

  it("a page that blocks its main thread once loaded: RENDER_TIMEOUT within the deadline, free", async () => {
    const res = await animate("busy", "", {}, "504 RENDER_TIMEOUT");
    await res.text();
  });
});

describe("text that is not well-formed", () => {
  it("lone surrogates in HTML: rendered, and the JSON envelope stays valid JSON", async () => {
    const res = await expectRender(
      () => shootHtml("<title>a\ud800b\udc00c</title><body style='background:#00ff00'>\ud83d", { responseFormat: "json" }),
      ["200"],
    );
    const body = (await res.json()) as { title: string };
    expect(body.title).toMatch(/^a.b.c$/);
  });

  it("a lone surrogate in the URL: rendered (as U+FFFD, percent-encoded), and metadata reads it", async () => {
    await expectRender(() => shoot(`${zoo("subresources")}?q=\ud800`), ["200"]);
    expect((await expectMetadata(`${zoo("subresources")}?q=\ud800`, [200])).title).toBe("zoo");
  });

  it("bytes that are not UTF-8 in a UTF-8 page: title decoded with replacement characters", async () => {
    const res = await expectRender(() => shoot(zoo("bad-utf8"), { responseFormat: "json" }), ["200"]);
    expect(((await res.json()) as { title: string }).title).toMatch(/^a\ufffd+b$/);
    expect((await expectMetadata(zoo("bad-utf8"), [200])).title).toMatch(/^a\ufffd+b$/);
  });
});

describe("answers stay bounded", () => {
  it("cuts a page's title to 1,000 characters and strips its control characters in the JSON envelope", async () => {
    const res = await expectRender(() => shoot(zoo("control-title"), { responseFormat: "json" }), ["200"]);
    const body = (await res.json()) as { title: string };
    expect(body.title.length).toBeLessThanOrEqual(1_001);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence.
    expect(body.title).not.toMatch(/[\u0000-\u001f]/);
    expect(body.title.startsWith("bell bell")).toBe(true);
  });

  it("names only a handful of the unknown keys of a huge body", async () => {
    const body: Record<string, number> = { url: 1 };
    for (let i = 0; i < 50_000; i++) body[`k${i}`] = i;
    const message = await expectError(await post("/api/v1/screenshot", body), 400, "INVALID_PARAMS");
    expect(message.length).toBeLessThan(400);
  });

  it("reads metadata of a URL whose user-info holds an invalid escape, instead of failing with 500", async () => {
    const url = new URL(zoo("subresources"));
    expect((await expectMetadata(`http://a%zz@${url.host}${url.pathname}`, [200])).title).toBe("zoo");
  });
});

describe("Chromium's environment", () => {
  it("holds no AWS credentials or other secrets of the function", () => {
    const chromium = chromiumProcesses(dev.child.pid!);
    expect(chromium.length).toBeGreaterThan(0);
    // The service sets the local stack's AWS credentials and X402_* in its environment before it
    // launches Chromium (dev/dev.ts); the browsers must have none of them.
    for (const pid of chromium) {
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      expect(
        environ.filter((entry) => /^(AWS_|X402_)/.test(entry)),
        `chromium ${pid}`,
      ).toEqual([]);
    }
  });
});
