// Property-based request bodies against every endpoint of the running service: whatever arrives,
// the answer is never a 5xx, and every 4xx is the spec's JSON error. Nearly all of them come without
// a usable payment (garbage keys, none at all), so a valid body stops at 401/402 and nothing renders;
// a few hundred come with the render tests' key and do render, with fuzzed options.
//
// Network rule: every URL generated points at loopback (the fixture server, a closed port) or is not
// a URL at all; no generated host name ever needs DNS and no public address is ever generated.
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";

const UNPAID_RUNS = 9_800;
const PAID_RUNS = 200;

type Sent = { method: string; path: string; headers: Record<string, string>; body: string | undefined };
type Seen = { sent: Sent; status: number; contentType: string | null; text: string };

const RENDER_KEYS = [
  "url",
  "html",
  "format",
  "width",
  "height",
  "fullPage",
  "darkMode",
  "deviceScaleFactor",
  "quality",
  "imageWidth",
  "imageHeight",
  "fit",
  "pdf",
  "delay",
  "style",
  "background",
  "padding",
  "borderRadius",
  "shadow",
  "frame",
  "blockCookieBanners",
  "waitForSelector",
  "responseFormat",
] as const;

/** Values a field might be sent with: the right type in and out of range, the wrong types, and edge cases. */
const anyValue = fc.oneof(
  fc.integer({ min: -10, max: 40_000 }),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constantFrom(null, "", "png", "jpeg", "pdf", "mockup", "gradient", "#123", "#1e293b", "browser", "phone", "none", "json", "binary", "body", "#x"),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** URLs and near-URLs, loopback only: the fixture server, a closed port, refused private addresses, and garbage. */
const urlLike = () => {
  const fixture = new URL(inject("fixtureUrl"));
  return fc.oneof(
    fc.constantFrom(
      `${fixture.origin}/`,
      `${fixture.origin}/zoo/subresources`,
      `${fixture.origin}/zoo/status-000`,
      `http://127.0.0.1:${inject("closedPort")}/`,
      "http://127.0.0.1:1/",
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::1]:9/",
      "http://0x7f.1/",
      "http://a%zz@127.0.0.1:1/",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "data:text/html,hi",
      "ftp://127.0.0.1/",
      "http://",
      "https://",
      "http://\u0000/",
      "http://127.0.0.1:99999/",
    ),
    fc.string({ maxLength: 30 }).map((tail) => `${fixture.origin}/${encodeURIComponent(tail)}`),
    fc.string({ maxLength: 30 }).map((tail) => `http://127.0.0.1:1/${tail}`),
    // Not URLs at all (no scheme), so nothing is resolved.
    fc.string({ maxLength: 30 }).filter((s) => !s.includes(":")),
  );
};

/** Nine times in ten a valid value, else one of `invalid`. */
const mostly = <T>(valid: fc.Arbitrary<T>, ...invalid: unknown[]) =>
  fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });

/** A render body that is often valid: a real source and options mostly in range (selectors that are there: a missing one is a legitimate 504). */
const plausibleRender = () => {
  const fixture = inject("fixtureUrl");
  return fc.record(
    {
      url: mostly(fc.constantFrom(`${fixture}/`, `${fixture}/zoo/subresources`, `${fixture}/zoo/dialogs`, `${fixture}/zoo/control-title`), "", "nope", 7),
      html: mostly(fc.constantFrom("<h1>hi</h1>", "<body style='background:#0f0'>", "<title>\ud800</title>x"), "", null),
      format: mostly(fc.constantFrom("png", "jpeg", "webp", "avif", "pdf"), "gif"),
      // Sizes that render in well under the test stack's 5 s page-load limit on a busy 2-core
      // machine (the zoo covers the heavy ones); the invalid values are the rules' edges.
      width: mostly(fc.integer({ min: 320, max: 1280 }), 319, 3841, 1.5),
      height: mostly(fc.oneof(fc.integer({ min: 100, max: 1000 }), fc.constant(null)), 99, -1),
      fullPage: fc.boolean(),
      darkMode: fc.boolean(),
      deviceScaleFactor: mostly(fc.constantFrom(1, 1.5, 2), 0.5, 3.5),
      quality: mostly(fc.integer({ min: 1, max: 100 }), 0, 101),
      imageWidth: mostly(fc.integer({ min: 1, max: 2000 }), 0, 8193, "200"),
      delay: mostly(fc.integer({ min: 0, max: 300 }), -1, 10_001),
      style: mostly(fc.constant("mockup"), "fancy"),
      background: mostly(fc.constantFrom("gradient", "ocean", "midnight", "#1e293b"), "red"),
      frame: mostly(fc.constantFrom("browser", "phone", "tablet", "laptop", "none"), "watch"),
      waitForSelector: mostly(fc.constant("body"), "[[", ""),
      responseFormat: fc.constantFrom("binary", "json"),
    },
    { requiredKeys: ["url", "html"] },
  );
};

/** A paged PDF of a small document, often valid (pages past the document are a legitimate 422). */
const plausiblePdf = () =>
  fc.record({
    html: fc.constantFrom("<h1>hi</h1>", "<p style='break-after:page'>1</p><p>2</p>"),
    format: mostly(fc.constant("pdf"), "png"),
    pdf: mostly(
      fc.record(
        {
          paper: fc.constantFrom("A4", "Letter", "A5"),
          landscape: fc.boolean(),
          margin: fc.constantFrom("0", "10mm", "1in", { top: "1cm" }),
          scale: fc.constantFrom(0.5, 1, 2),
          pageRanges: fc.constantFrom("1", "1-3", "2, 4"),
          printBackground: fc.boolean(),
        },
        { requiredKeys: ["paper"] },
      ),
      { paper: "A9" },
      { margin: "1km" },
      { scale: 1 },
    ),
    responseFormat: fc.constantFrom("binary", "json"),
  });

const renderBody = () =>
  fc.oneof(
    plausibleRender().map(({ html: _, ...body }) => body),
    plausibleRender().map(({ url: _, ...body }) => body),
    plausiblePdf(),
    fc.dictionary(fc.constantFrom(...RENDER_KEYS), fc.oneof(anyValue, urlLike(), fc.constantFrom("<h1>hi</h1>", "<body style='background:#0f0'>", "\ud800")), {
      maxKeys: 8,
    }),
  );

/** A request: an endpoint, a body (JSON of a fuzzed object, or not JSON at all) and headers. */
const request = (authorization: fc.Arbitrary<string | undefined>): fc.Arbitrary<Sent> => {
  const json = fc.oneof(
    { weight: 5, arbitrary: renderBody() },
    { weight: 1, arbitrary: fc.record({ email: fc.oneof(fc.emailAddress(), anyValue) }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.record({ auto_topup_enabled: anyValue }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.record({ cents: anyValue, amount: anyValue }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
  const body = fc.oneof(
    { weight: 8, arbitrary: json.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, "", "{", "null", "[]", '{"url":', "\u0000", '{"__proto__":{"x":1}}', '{"url":"\\ud800"}') },
  );
  const endpoint = fc.constantFrom(
    { method: "POST", path: "/api/v1/screenshot" },
    { method: "POST", path: "/api/v1/html-to-screenshot" },
    { method: "POST", path: "/api/v1/animate" },
    { method: "POST", path: "/api/v1/metadata" },
    { method: "POST", path: "/api/v1/signup" },
    { method: "PATCH", path: "/api/v1/account" },
    { method: "POST", path: "/api/v1/topup" },
    { method: "GET", path: "/api/v1/usage" },
    { method: "GET", path: "/api/v1/health" },
    { method: "GET", path: "/dashboard" },
    { method: "DELETE", path: "/api/v1/screenshot" },
    { method: "POST", path: "/api/v1/nope" },
  );
  const contentType = fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "", "application/x-www-form-urlencoded");
  const payment = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 60 }), fc.base64String({ maxLength: 200 }));
  return fc.record({ endpoint, body, authorization, contentType, payment }).map(({ endpoint: { method, path }, body, authorization, contentType, payment }) => {
    const headers: Record<string, string> = {};
    if (contentType) headers["content-type"] = contentType;
    if (authorization !== undefined) headers.authorization = authorization;
    if (payment !== undefined) headers["x-payment"] = payment;
    return { method, path, headers, body: method === "GET" ? undefined : body };
  });
};

/** Header values fetch can send (it refuses control characters and non-Latin-1). */
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e]/g, "x");

async function send(sent: Sent): Promise<Seen> {
  const headers = Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name, headerSafe(value)]));
  const res = await fetch(`${inject("baseUrl")}${sent.path}`, { method: sent.method, headers, body: sent.body, redirect: "manual" });
  return { sent, status: res.status, contentType: res.headers.get("content-type"), text: await res.text() };
}

/**
 * What must hold of every answer: no 5xx but a render's time running out (504 RENDER_TIMEOUT: a
 * heavy combination, such as a full-page AVIF mockup at 2x, may not fit the request's time on a slow
 * machine), and every error is our JSON error (or, for a 402 asking for payment, x402 v1's shape with our code).
 */
function problems(seen: Seen): string | null {
  const timedOut = seen.status === 504 && /"code":"RENDER_TIMEOUT"/.test(seen.text);
  if (seen.status >= 500 && !timedOut) return `answered ${seen.status}: ${seen.text.slice(0, 300)}`;
  if (seen.status < 400) return null;
  if (!seen.contentType?.startsWith("application/json")) return `a ${seen.status} as ${seen.contentType}`;
  try {
    const body = JSON.parse(seen.text) as { x402Version?: unknown; code?: unknown; error?: { code?: unknown; message?: unknown } | string };
    const ours = typeof body.error === "object" && typeof body.error?.code === "string" && typeof body.error.message === "string";
    const x402 = seen.status === 402 && body.x402Version === 1 && typeof body.error === "string" && body.code === "PAYMENT_REQUIRED";
    if (!ours && !x402) return `a ${seen.status} without error.code/message: ${seen.text.slice(0, 200)}`;
  } catch {
    return `a ${seen.status} that is not JSON: ${seen.text.slice(0, 200)}`;
  }
  return null;
}

/** Sends `runs` generated requests, `concurrency` at a time; returns the statuses seen and the first problems. */
async function fuzz(arbitrary: fc.Arbitrary<Sent>, runs: number, concurrency: number) {
  const samples = fc.sample(arbitrary, { numRuns: runs, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) });
  const statuses = new Map<number, number>();
  const found: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < samples.length) {
        const sent = samples[next++]!;
        const seen = await send(sent);
        statuses.set(seen.status, (statuses.get(seen.status) ?? 0) + 1);
        const problem = problems(seen);
        if (problem && found.length < 5) found.push(`${problem}\n  for ${JSON.stringify(sent).slice(0, 400)}`);
      }
    }),
  );
  return { statuses: Object.fromEntries(statuses), found, count: samples.length };
}

describe("fuzzed requests", () => {
  it(`${UNPAID_RUNS} requests without a usable key or payment: no 5xx, every 4xx our JSON error`, async () => {
    const authorization = fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom("Bearer shl_live_nope", "Bearer ", "Basic Zm9vOmJhcg==") },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    );
    const { statuses, found, count } = await fuzz(request(authorization), UNPAID_RUNS, 8);
    console.log(`fuzz (unpaid): ${count} requests, statuses ${JSON.stringify(statuses)}`);
    expect(found).toEqual([]);
    expect(count).toBe(UNPAID_RUNS);
    // The generators reach past validation: valid bodies are turned away for want of payment.
    expect(statuses[402] ?? 0).toBeGreaterThan(0);
    expect(statuses[400] ?? 0).toBeGreaterThan(UNPAID_RUNS / 10);
  }, 600_000);

  it(`${PAID_RUNS} render requests with a funded key: no 5xx, every 4xx our JSON error`, async () => {
    const renders = fc
      .record({ path: fc.constantFrom("/api/v1/screenshot", "/api/v1/html-to-screenshot"), body: plausibleRender() })
      .map(({ path, body }): Sent => {
        // A screenshot takes a url, an HTML render html: mostly the right one.
        const { url, html, ...options } = body;
        const source = path === "/api/v1/screenshot" ? { url } : { html };
        return {
          method: "POST",
          path,
          headers: { "content-type": "application/json", authorization: `Bearer ${inject("apiKey")}` },
          body: JSON.stringify({ ...source, ...options }),
        };
      });
    const { statuses, found, count } = await fuzz(renders, PAID_RUNS, 2);
    console.log(`fuzz (paid renders): ${count} requests, statuses ${JSON.stringify(statuses)}`);
    expect(found).toEqual([]);
    expect(statuses[200] ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
