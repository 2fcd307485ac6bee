// What the page did (docs/api.md, "What the page did"): `capture` through the whole local stack,
// against the fixture /logs/page (dev/harness/log-pages.ts), which logs to its console, throws from
// a script, loads a script that is missing, an image from a private address, an image the request
// blocks and one that is still loading at the capture, and keeps its own record of every request
// it was sent. The HAR is validated against the HAR 1.2 schema (har-schema), held against that
// record, and opened in a HAR viewer (PerfCascade, dev/harness/har-viewer.ts).
import { createRequire } from "node:module";
import { isIPv4, isIPv6 } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Ajv } from "ajv";
import { describe, expect, inject, it } from "vitest";
import { fundedKey } from "../../dev/harness/dev-process.js";
import { harViewerPage } from "../../dev/harness/har-viewer.js";
import { type ErrorBody, postJson } from "../helpers/api.js";

const require = createRequire(import.meta.url);
const harSchemas = require("har-schema") as Record<string, { $id: string }>;

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat("ipv4", { validate: (value: string) => isIPv4(value) });
ajv.addFormat("ipv6", { validate: (value: string) => isIPv6(value) });
ajv.addFormat("date-time", { validate: (value: string) => !Number.isNaN(Date.parse(value)) });
ajv.addMetaSchema(require("ajv/dist/refs/json-schema-draft-06.json"));
for (const schema of Object.values(harSchemas)) ajv.addSchema(schema);
const validHar = ajv.getSchema("har.json#")!;

const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let runs = 0;
const runId = () => `run-${Date.now()}-${runs++}`;

// The secrets the request sends, and the cookie the page sets itself: none may appear in a log.
const SECRETS = ["SECRETCOOKIE123", "SECRETHEADER456", "SECRETPASS789", Buffer.from("ann:SECRETPASS789").toString("base64"), "SERVERCOOKIE789"];
const controls = {
  cookies: [{ name: "session", value: "SECRETCOOKIE123" }],
  headers: { "X-Api-Token": "SECRETHEADER456" },
  httpAuth: { username: "ann", password: "SECRETPASS789" },
  blockRequests: ["*/logs/blocked.png*"],
};
const ALL = { har: true, console: true, network: true };
/** A small capture at 1x: what it shows does not matter here. */
const SMALL = { width: 400, height: 300, deviceScaleFactor: 1 };

type Seen = { path: string; cookie: string; authorization: string; token: string }[];
type Console = { messages: { source: string; type: string; text: string; url?: string; line?: number; column?: number }[]; dropped: number };
type Network = { failures: { url: string; type: string; reason: string; status?: number; detail: string }[]; dropped: number };
type Har = {
  log: {
    entries: {
      request: { url: string; headers: { name: string; value: string }[] };
      response: { status: number; content: { text?: string } };
      comment?: string;
    }[];
  };
};

const text = async (url: string) => {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return res.text();
};

describe("capture: what the page did", () => {
  it("a screenshot links a HAR, the console and the failed requests; nothing the customer sent as a secret is in them; free", async () => {
    const id = runId();
    const res = await postJson("/api/v1/screenshot", {
      url: fixture(`/logs/page?id=${id}`),
      ...SMALL,
      capture: { ...ALL, harBodies: true },
      ...controls,
    });
    expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("x-charged-micro-usd")).toBe("5000");
    const [harText = "", consoleText = "", networkText = ""] = await Promise.all(
      ["x-har-url", "x-console-url", "x-network-url"].map((h) => text(res.headers.get(h) ?? "")),
    );
    const seen = (await (await fetch(fixture(`/logs/seen?id=${id}`))).json()) as Seen;

    // The page was sent the secrets (so their absence below is redaction, not a request that lacked them).
    const document = seen.find((r) => r.path === "/logs/page")!;
    expect(document.cookie).toContain("SECRETCOOKIE123");
    expect(document.token).toBe("SECRETHEADER456");
    expect(document.authorization).toBe(`Basic ${Buffer.from("ann:SECRETPASS789").toString("base64")}`);
    for (const log of [harText, consoleText, networkText]) for (const secret of SECRETS) expect(log).not.toContain(secret);

    // Console: each message in order, the uncaught error where it was thrown, the browser's own 404.
    const { messages } = JSON.parse(consoleText) as Console;
    const inline = messages.filter((m) => m.source === "console" && m.url?.includes("/logs/page"));
    expect(inline.map((m) => [m.type, m.text])).toEqual([
      ["log", "hello 42 Object"],
      ["warning", "careful"],
      ["error", "bad thing"],
      ["log", expect.stringMatching(/^cookie: .*session=\[redacted\]/)],
    ]);
    expect(inline[0]).toMatchObject({ line: 2 });
    expect(messages).toContainEqual(expect.objectContaining({ source: "console", type: "info", text: "app.js loaded", line: 5 }));
    const thrown = messages.find((m) => m.source === "exception")!;
    expect(thrown).toMatchObject({ type: "error", text: "Error: boom from app.js", line: 3 });
    expect(thrown.url).toContain("/logs/app.js");
    expect(messages).toContainEqual(expect.objectContaining({ source: "browser", type: "error", text: expect.stringContaining("404") }));
    expect(messages.findIndex((m) => m.text === "bad thing")).toBeLessThan(messages.indexOf(thrown));

    // Network: the 404, the guard's refusal, the blocked image, the image still loading.
    const { failures } = JSON.parse(networkText) as Network;
    const failure = (part: string) => failures.find((f) => f.url.includes(part));
    expect(failure("/logs/missing.js")).toMatchObject({ reason: "http", status: 404, type: "script" });
    expect(failure("10.0.0.1")).toMatchObject({ reason: "guard", type: "image", detail: expect.stringContaining("refused 10.0.0.1:80") });
    expect(failure("/logs/blocked.png")).toMatchObject({ reason: "blocked", detail: "blocked by blockRequests" });
    expect(failure("/logs/slow.png")).toMatchObject({ reason: "pending" });
    expect(failure("/logs/app.js")).toBeUndefined();
    // Once each: a script that answered 404 is also aborted by the browser, and listed once.
    expect(failures.filter((f) => f.url.includes("/logs/missing.js"))).toHaveLength(1);
    expect(seen.map((r) => r.path)).not.toContain("/logs/blocked.png");

    // HAR 1.2, holding every request the fixture server answered (the image still loading had no answer yet).
    const har = JSON.parse(harText) as Har;
    expect(validHar(har), JSON.stringify(validHar.errors)).toBe(true);
    const fixturePaths = har.log.entries
      .map((e) => new URL(e.request.url))
      .filter((u) => u.origin === inject("fixtureUrl"))
      .map((u) => u.pathname);
    for (const path of seen.map((r) => r.path).filter((p) => p !== "/logs/slow.png")) expect(fixturePaths).toContain(path);
    for (const path of fixturePaths) expect([...seen.map((r) => r.path), "/logs/blocked.png"]).toContain(path);
    const pageEntry = har.log.entries.find((e) => e.request.url.includes("/logs/page"))!;
    expect(pageEntry.request.headers.find((h) => h.name.toLowerCase() === "x-api-token")?.value).toBe("[redacted]");
    expect(har.log.entries.find((e) => e.request.url.includes("/logs/missing.js"))!.response.status).toBe(404);
    // Never sent: the blocked image (the browser got a stand-in pixel) and the one the guard refused.
    for (const [url, why] of [
      ["/logs/blocked.png", /^blocked: blocked by blockRequests/],
      ["10.0.0.1", /^guard: refused 10\.0\.0\.1/],
    ] as const) {
      const entry = har.log.entries.find((e) => e.request.url.includes(url))!;
      expect(entry.response.status, url).toBe(0);
      expect(entry.comment, url).toMatch(why);
    }
    // harBodies: the script's text is in its entry.
    expect(har.log.entries.find((e) => e.request.url.includes("/logs/app.js"))!.response.content.text).toContain("boom from app.js");
    // A HAR viewer draws a row for every entry.
    const viewed = await postJson("/api/v1/html-to-screenshot", { html: harViewerPage(har), ...SMALL, responseFormat: "json" });
    expect(viewed.status, await viewed.clone().text()).toBe(200);
    expect(((await viewed.json()) as { title: string }).title).toBe(String(har.log.entries.length));
  });

  it("a secret shorter than 4 characters is redacted where it stands whole, and the page's own text keeps the same letters", async () => {
    // "js" is also in /logs/app.js, "42" in the page's "hello 42 Object": those stay, the secrets go.
    const id = runId();
    const res = await postJson("/api/v1/screenshot", {
      url: fixture(`/logs/page?id=${id}`),
      ...SMALL,
      capture: ALL,
      cookies: [{ name: "session", value: "js" }],
      headers: { "X-Api-Token": "42" },
      httpAuth: { username: "al", password: "pw" },
    });
    expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
    const [harText = "", consoleText = ""] = await Promise.all(["x-har-url", "x-console-url"].map((h) => text(res.headers.get(h) ?? "")));
    const seen = (await (await fetch(fixture(`/logs/seen?id=${id}`))).json()) as Seen;
    const document = seen.find((r) => r.path === "/logs/page")!;
    expect(document.cookie).toContain("session=js");
    expect(document.token).toBe("42");

    const { messages } = JSON.parse(consoleText) as Console;
    const cookieLine = messages.find((m) => m.text.startsWith("cookie: "))!;
    expect(cookieLine.text).toMatch(/session=\[redacted\]/);
    expect(cookieLine.text).not.toMatch(/session=js\b/);
    expect(messages.map((m) => m.text)).toContain("hello 42 Object");

    const har = JSON.parse(harText) as Har;
    const pageEntry = har.log.entries.find((e) => e.request.url.includes("/logs/page"))! as Har["log"]["entries"][number] & {
      request: { cookies: { name: string; value: string }[] };
    };
    const header = (name: string) => pageEntry.request.headers.find((h) => h.name.toLowerCase() === name)?.value;
    expect([header("x-api-token"), header("cookie"), header("authorization")]).toEqual(["[redacted]", "[redacted]", "[redacted]"]);
    for (const cookie of pageEntry.request.cookies) expect(cookie.value).toBe("[redacted]");
    expect(harText).not.toMatch(/session=js\b/);
    expect(har.log.entries.some((e) => e.request.url.includes("/logs/app.js"))).toBe(true);
  });

  it("the JSON envelope carries each log's link and counts; without capture there are none", async () => {
    const res = await postJson("/api/v1/screenshot", {
      url: fixture(`/logs/page?id=${runId()}`),
      ...SMALL,
      capture: { console: true, network: true },
      responseFormat: "json",
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, { url: string; expiresAt: string; messages?: number; errors?: number; failures?: number }>;
    expect(body.har).toBeUndefined();
    expect(res.headers.get("x-har-url")).toBeNull();
    expect(body.console).toMatchObject({ url: expect.stringMatching(/^http/), messages: expect.any(Number), errors: expect.any(Number) });
    expect(body.console!.errors).toBeGreaterThanOrEqual(2);
    expect(body.network!.failures).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(await text(body.network?.url ?? "")).failures.length).toBe(body.network!.failures);

    const plain = await postJson("/api/v1/screenshot", { url: fixture(`/logs/page?id=${runId()}`), width: 400, height: 300, responseFormat: "json" });
    const plainBody = (await plain.json()) as Record<string, unknown>;
    expect(plainBody.console).toBeUndefined();
    expect(plain.headers.get("x-console-url")).toBeNull();
  });

  it("html-to-screenshot and animate record too: a document's console and refusals, an animation's failed requests", async () => {
    const html = await postJson("/api/v1/html-to-screenshot", {
      html: "<h1>Doc</h1><script>console.error('from the document')</script><img src='http://10.0.0.1/x.png'>",
      ...SMALL,
      capture: { console: true, network: true },
    });
    expect(html.status).toBe(200);
    const messages = (JSON.parse(await text(html.headers.get("x-console-url") ?? "")) as Console).messages;
    expect(messages).toContainEqual(expect.objectContaining({ source: "console", type: "error", text: "from the document" }));
    const refused = (JSON.parse(await text(html.headers.get("x-network-url") ?? "")) as Network).failures;
    expect(refused).toContainEqual(expect.objectContaining({ url: "http://10.0.0.1/x.png", reason: "guard" }));

    const animation = await postJson("/api/v1/animate", {
      url: fixture(`/logs/page?id=${runId()}`),
      format: "gif",
      width: 320,
      height: 200,
      duration: 1,
      fps: 2,
      capture: { network: true },
      responseFormat: "json",
    });
    expect(animation.status, await animation.clone().text()).toBe(200);
    const body = (await animation.json()) as { frames: number; network: { url: string; failures: number } };
    expect(body.frames).toBe(2);
    expect(animation.headers.get("x-network-url")).toBe(body.network.url);
    const failures = (JSON.parse(await text(body.network.url)) as Network).failures;
    expect(failures).toContainEqual(expect.objectContaining({ reason: "http", status: 404, url: expect.stringContaining("/logs/missing.js") }));
  });

  it("a page that floods its console: 1,000 messages kept, each at most 2,000 characters, the rest counted", async () => {
    const res = await postJson("/api/v1/html-to-screenshot", {
      html: "<script>console.log('x'.repeat(100000)); for (let i = 0; i < 5000; i++) console.log('line ' + i);</script><p>flood</p>",
      ...SMALL,
      capture: { console: true },
      responseFormat: "json",
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { console: { url: string; messages: number } };
    const log = JSON.parse(await text(body.console.url)) as Console;
    expect(log.messages).toHaveLength(1_000);
    expect(body.console.messages).toBe(1_000);
    expect(log.dropped).toBe(4_001);
    expect(log.messages[0]!.text).toHaveLength(2_001);
    expect(log.messages[1]!.text).toBe("line 0");
  });

  it("content reads the page in the browser with capture, and says so; render never refuses it", async () => {
    const res = await postJson("/api/v1/content", { url: fixture(`/logs/page?id=${runId()}`), format: "text", scope: "page", capture: { console: true } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rendered: boolean; text: string; console: { url: string; messages: number } };
    expect(body.rendered).toBe(true);
    expect(body.text).toContain("What the page did");
    expect(res.headers.get("x-console-url")).toBe(body.console.url);
    expect((JSON.parse(await text(body.console.url)) as Console).messages.some((m) => m.text === "bad thing")).toBe(true);

    const never = await postJson("/api/v1/content", { url: fixture("/logs/page"), render: "never", capture: { console: true } });
    expect(never.status).toBe(400);
    expect(((await never.json()) as ErrorBody).error.message).toMatch(/capture.*acts only in a browser/);
  });

  it("a job's item keeps its logs with the job: their counts in its result, linked when the job is read", async () => {
    const key = await fundedKey(inject("baseUrl"), inject("localDir"), `logs-${Date.now()}@logs.test`, 1);
    const id = runId();
    const auth = { authorization: `Bearer ${key}` };
    const created = await postJson(
      "/api/v1/jobs",
      {
        endpoint: "screenshot",
        items: [{ url: fixture(`/logs/page?id=${id}`), ...SMALL, capture: { console: true, network: true } }],
      },
      auth,
    );
    expect(created.status, await created.clone().text()).toBe(202);
    const { id: jobId } = (await created.json()) as { id: string };
    type Job = { status: string; items: { status: string; result?: Record<string, { url?: string; messages?: number; failures?: number }> }[] };
    let job: Job | undefined;
    for (const end = Date.now() + 60_000; Date.now() < end; await sleep(250)) {
      job = (await (await fetch(`${inject("baseUrl")}/api/v1/jobs/${jobId}`, { headers: auth })).json()) as Job;
      if (job.status === "completed") break;
    }
    const result = job!.items[0]!.result!;
    expect(job!.items[0]!.status).toBe("succeeded");
    expect(result.console).toMatchObject({ url: expect.stringMatching(/^http/), messages: expect.any(Number) });
    expect(result.har).toBeUndefined();
    const network = JSON.parse(await text(result.network!.url!)) as Network;
    expect(network.failures.length).toBe(result.network!.failures);
    expect(network.failures.some((f) => f.reason === "guard")).toBe(true);
  });

  it("refuses what cannot hold: harBodies without har, capture with the render cache; free", async () => {
    for (const [fields, message] of [
      [{ capture: { harBodies: true } }, /capture\.harBodies.*needs har/],
      [{ capture: { console: true }, cacheTtl: 60 }, /cacheTtl.*cannot be combined with capture/],
      [{ capture: { video: true } }, /capture/],
    ] as const) {
      const res = await postJson("/api/v1/screenshot", { url: fixture("/logs/page"), ...fields });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(((await res.json()) as ErrorBody).error.message).toMatch(message);
      expect(res.headers.get("x-charged-micro-usd")).toBeNull();
    }
  });
});
