// The hostile-page zoo (dev/harness/hostile-pages.ts) through the real service: whatever a page or an
// upstream server does, the answer is a picture or our JSON error within the deadline, the process
// lives, the next render works, and a failed render costs nothing.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { signUp } from "../../dev/harness/dev-process.js";
import { DEFAULT_GUARD_LIMITS } from "../../lib/render/network-guard.js";
import { TEST_PAGE_LOAD_MS } from "../global-setup.js";
import { decode, type ErrorBody, postJson, rgb } from "../helpers/api.js";

const zoo = (name: string) => `${inject("fixtureUrl")}/zoo/${name}`;
let key: string;
const auth = () => ({ authorization: `Bearer ${key}` });
const shoot = (url: string, extra: Record<string, unknown> = {}) =>
  postJson("/api/v1/screenshot", { url, width: 400, height: 300, deviceScaleFactor: 1, ...extra }, auth());
const balance = async () =>
  ((await (await fetch(`${inject("baseUrl")}/api/v1/usage`, { headers: auth() })).json()) as { balance_micro_usd: number }).balance_micro_usd;

/** The service process still answers, and a plain render right now succeeds promptly. */
async function stillHealthy() {
  expect(() => process.kill(inject("devPid"), 0), "the service process is alive").not.toThrow();
  const started = Date.now();
  const res = await postJson(
    "/api/v1/html-to-screenshot",
    { html: "<body style='background:#0000ff'>", width: 320, height: 200, deviceScaleFactor: 1 },
    auth(),
  );
  expect(res.status).toBe(200);
  expect(rgb(await decode(res), 100, 100)).toEqual({ r: 0, g: 0, b: 255 });
  return Date.now() - started;
}

/** An answer that is our JSON error with `status` and `code`. */
async function expectError(res: Response, status: number, code: string) {
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error.code }).toEqual({ status, code });
  return body.error.message;
}

beforeAll(async () => {
  // An account of this file's own, so that balances can be compared exactly.
  key = (await signUp(inject("baseUrl"), `zoo-${Date.now()}@shotline.test`)).api_key;
});

describe("upstream answers that are not HTTP", () => {
  const broken = ["status-000", "status-099", "status-101", "status-999", "header-control", "double-length", "broken-chunks"];

  it.each(broken)("%s as the document: 422 INVALID_URL, free, and the service lives on", async (name) => {
    const before = await balance();
    const message = await expectError(await shoot(zoo(name)), 422, "INVALID_URL");
    expect(message).toMatch(/^The page could not be loaded: /);
    expect(await balance()).toBe(before);
    await stillHealthy();
  });

  it("a reason phrase with a control character is replaced, not thrown: the page renders and its metadata reads", async () => {
    const res = await shoot(zoo("reason-control"));
    expect(res.status).toBe(200);
    expect((await postJson("/api/v1/metadata", { url: zoo("reason-control") }, {})).status).toBe(200);
    await stillHealthy();
  });

  it("as images in a page (URL and HTML mode): the page renders, the broken images are left out", async () => {
    const page = await shoot(zoo("subresources"));
    expect(page.status).toBe(200);
    expect(rgb(await decode(page), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
    const images = broken.map((name) => `<img src="${zoo(name)}" width="10" height="10">`).join("");
    const html = await postJson(
      "/api/v1/html-to-screenshot",
      { html: `<body style="background:#00ff00">${images}`, width: 400, height: 300, deviceScaleFactor: 1 },
      auth(),
    );
    expect(html.status).toBe(200);
    await stillHealthy();
  });

  it.each(broken)("%s to the free metadata endpoint: 422 INVALID_URL, never a 500", async (name) => {
    const res = await postJson("/api/v1/metadata", { url: zoo(name) }, {});
    await expectError(res, 422, "INVALID_URL");
  });
});

describe("page behaviours", () => {
  it("dismisses alert, confirm, prompt and beforeunload at once instead of timing out", async () => {
    const started = Date.now();
    const res = await shoot(zoo("dialogs"));
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(TEST_PAGE_LOAD_MS);
    expect(rgb(await decode(res), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
  });

  it("renders a page that calls print()", async () => {
    const res = await shoot(zoo("print"));
    expect(res.status).toBe(200);
  });

  it("closes a storm of 50 popups and renders the page", async () => {
    const res = await shoot(zoo("popups"));
    expect(res.status).toBe(200);
    expect(rgb(await decode(res), 200, 200)).toEqual({ r: 0, g: 255, b: 0 });
    await stillHealthy();
  });

  it("ends a render whose scripts never yield after load with RENDER_TIMEOUT, free; four of them leave no slot taken", async () => {
    const before = await balance();
    const started = Date.now();
    // As many as the process renders at once (RENDER_CONCURRENCY 4): all its slots.
    const answers = await Promise.all([1, 2, 3, 4].map((i) => shoot(`${zoo("loop-after-load")}?${i}`)));
    for (const res of answers) expect(await expectError(res, 504, "RENDER_TIMEOUT")).toMatch(/stopped responding|did not finish/);
    // Page-load limit + the capture reserve, not the request's whole 28 s.
    expect(Date.now() - started).toBeLessThan(TEST_PAGE_LOAD_MS + 8_000);
    expect(await balance()).toBe(before);
    // The slots were freed at once: a normal render starts without waiting for the looping pages.
    expect(await stillHealthy()).toBeLessThan(5_000);
  });

  it("fails a page that exhausts its memory as that render only (RENDER_ERROR or RENDER_TIMEOUT), free", async () => {
    const before = await balance();
    const res = await shoot(zoo("memory-bomb"));
    expect([500, 504]).toContain(res.status);
    expect(["RENDER_ERROR", "RENDER_TIMEOUT"]).toContain(((await res.json()) as ErrorBody).error.code);
    expect(await balance()).toBe(before);
    await stillHealthy();
  });

  it("ignores a page flooding the cookie-banner binding with 10,000 init messages (each would cost 257 KB)", async () => {
    const started = Date.now();
    const res = await shoot(zoo("consent-flood"), { blockCookieBanners: true, responseFormat: "json" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe("sent 10000");
    // Answering every init ran into the request's deadline (~28 s); ignored, the 10,000 calls cost ~6 s.
    expect(Date.now() - started).toBeLessThan(TEST_PAGE_LOAD_MS + 10_000);
    await stillHealthy();
  });

  it("caps a fetch flood at the guard's request limit: the victim never sees as many", async () => {
    const res = await shoot(zoo("fetch-flood"));
    // A picture, the guard's refusal, or (on a busy machine, the page's thread flooded) a timeout: all our answers.
    expect([200, 422, 504]).toContain(res.status);
    if (res.status === 422) expect(((await res.json()) as ErrorBody).error.message).toMatch(`made more than ${DEFAULT_GUARD_LIMITS.requests} requests`);
    if (res.status === 504) expect(((await res.json()) as ErrorBody).error.code).toBe("RENDER_TIMEOUT");
    // Give requests in flight the time to land, then count.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const hits = (await (await fetch(`${zoo("__hits")}?name=victim`)).json()) as number;
    expect(hits).toBeLessThan(DEFAULT_GUARD_LIMITS.requests);
    await stillHealthy();
  });
});

describe("answers stay bounded", () => {
  it("cuts a page's title to 1,000 characters and strips its control characters in the JSON envelope", async () => {
    const res = await shoot(zoo("control-title"), { responseFormat: "json" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { title: string };
    expect(body.title.length).toBeLessThanOrEqual(1_001);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence.
    expect(body.title).not.toMatch(/[\u0000-\u001f]/);
    expect(body.title.startsWith("bell bell")).toBe(true);
  });

  it("names only a handful of the unknown keys of a huge body", async () => {
    const body: Record<string, number> = { url: 1 };
    for (let i = 0; i < 50_000; i++) body[`k${i}`] = i;
    const res = await postJson("/api/v1/screenshot", body, auth());
    const message = await expectError(res, 400, "INVALID_PARAMS");
    expect(message.length).toBeLessThan(400);
  });

  it("reads metadata of a URL whose user-info holds an invalid escape, instead of failing with 500", async () => {
    const url = new URL(zoo("subresources"));
    const res = await postJson("/api/v1/metadata", { url: `http://a%zz@${url.host}${url.pathname}` }, {});
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe("zoo");
  });
});

describe("Chromium's environment", () => {
  it("holds no AWS credentials or other secrets of the function", () => {
    const table = execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
    const descendants = new Set([inject("devPid")]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, ppid] of table) if (descendants.has(ppid) && !descendants.has(pid)) grew = descendants.add(pid) !== undefined;
    }
    const chromium = [...descendants].filter((pid) => {
      try {
        return /chromium|chrome/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
      } catch {
        return false;
      }
    });
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
