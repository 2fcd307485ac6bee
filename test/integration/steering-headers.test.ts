// Headers an agent can steer by: the IETF RateLimit fields on every limited answer (429s included),
// what a priced request cost (0 when it failed), and an API key's balance after the request.
import { describe, expect, inject, it } from "vitest";
import { admin } from "../../dev/harness/dev-process.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { localPayer } from "../helpers/x402.js";

const base = () => inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let counter = 0;

async function freshKey() {
  const email = `steer-${Date.now()}-${counter++}@steer.test`;
  const res = await postJson("/api/v1/signup", { email }, {});
  const body = (await res.json()) as { api_key: string; balance_micro_usd: number };
  return { email, key: body.api_key, balance: body.balance_micro_usd, auth: { authorization: `Bearer ${body.api_key}` } };
}
const balanceOf = async (key: string) =>
  ((await (await fetch(`${base()}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_micro_usd: number }).balance_micro_usd;
const tiny = { html: "<p>hi</p>", width: 320, height: 100, deviceScaleFactor: 1 };

describe("headers on every answer", () => {
  it("nosniff and HSTS on JSON, an image, an error and the HTML pages; the pages refuse frames", async () => {
    const answers = [
      await fetch(`${inject("baseUrl")}/api/v1/health`),
      await postJson("/api/v1/html-to-screenshot", { html: "<p>x</p>", width: 320, height: 100, deviceScaleFactor: 1 }),
      await fetch(`${inject("baseUrl")}/api/v1/nothing-here`),
      await fetch(`${inject("baseUrl")}/dashboard`),
      await fetch(`${inject("baseUrl")}/docs`),
    ];
    expect(answers.map((res) => [res.status, res.headers.get("x-content-type-options"), res.headers.get("strict-transport-security")])).toEqual([
      [200, "nosniff", "max-age=63072000"],
      [200, "nosniff", "max-age=63072000"],
      [404, "nosniff", "max-age=63072000"],
      [200, "nosniff", "max-age=63072000"],
      [200, "nosniff", "max-age=63072000"],
    ]);
    for (const page of answers.slice(3)) {
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    }
  });
});

describe("steering headers", () => {
  it("a keyed render: what it cost, the balance after it, and the key's limit with what is left", async () => {
    const account = await freshKey();
    const res = await postJson("/api/v1/html-to-screenshot", tiny, account.auth);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-charged-micro-usd")).toBe("5000");
    expect(res.headers.get("x-balance-micro-usd")).toBe(String(account.balance - 5000));
    expect(await balanceOf(account.key)).toBe(account.balance - 5000);
    // The test stack allows 100 a second (RATE_LIMIT_PER_SECOND).
    expect(res.headers.get("ratelimit-policy")).toBe('"caller";q=100;w=1');
    expect(res.headers.get("ratelimit")).toMatch(/^"caller";r=(99|[0-9][0-9]?);t=1$/);
    const mockup = await postJson("/api/v1/html-to-screenshot", { ...tiny, style: "mockup", frame: "none" }, account.auth);
    expect(mockup.headers.get("x-charged-micro-usd")).toBe("10000");
    expect(mockup.headers.get("x-balance-micro-usd")).toBe(String(account.balance - 15_000));
  });

  it("a failed render cost 0 and leaves the balance as it was", async () => {
    const account = await freshKey();
    const res = await postJson("/api/v1/screenshot", { url: fixture("/not-found") }, account.auth);
    expect(res.status).toBe(422);
    expect(res.headers.get("x-charged-micro-usd")).toBe("0");
    expect(res.headers.get("x-balance-micro-usd")).toBe(String(account.balance));
    expect(res.headers.get("ratelimit")).toMatch(/^"caller";r=\d+;t=1$/);
  });

  it("metadata with a key reports the balance (read while the page is fetched), on success and on failure", async () => {
    const account = await freshKey();
    const ok = await postJson("/api/v1/metadata", { url: fixture("/simple") }, account.auth);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-balance-micro-usd")).toBe(String(account.balance));
    expect(ok.headers.get("x-charged-micro-usd")).toBeNull();
    const failed = await postJson("/api/v1/metadata", { url: fixture("/not-found") }, account.auth);
    expect(failed.status).toBe(422);
    expect(failed.headers.get("x-balance-micro-usd")).toBe(String(account.balance));
  });

  it("metadata's balance is at most a second old: it shows this instance's charge at once, a credit made elsewhere within the second", async () => {
    const account = await freshKey();
    const metadata = () => postJson("/api/v1/metadata", { url: fixture("/simple") }, account.auth);
    expect((await metadata()).headers.get("x-balance-micro-usd")).toBe(String(account.balance));
    const render = await postJson("/api/v1/html-to-screenshot", tiny, account.auth);
    expect(render.headers.get("x-balance-micro-usd")).toBe(String(account.balance - 5000));
    expect((await metadata()).headers.get("x-balance-micro-usd")).toBe(String(account.balance - 5000));
    // Another process writes the table (as another Lambda instance would): seen a second later at most.
    admin(inject("localDir"), "credit", account.email, "1");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await metadata()).headers.get("x-balance-micro-usd")).toBe(String(account.balance - 5000 + 1_000_000));
  });

  it("over the limit: 429 with the limit exhausted (r=0) and when it resets", async () => {
    const account = await freshKey();
    admin(inject("localDir"), "limit", account.email, "1");
    const answers = await Promise.all(Array.from({ length: 4 }, () => fetch(`${base()}/api/v1/usage`, { headers: account.auth })));
    const limited = answers.find((res) => res.status === 429)!;
    expect(limited).toBeDefined();
    expect(limited.headers.get("ratelimit-policy")).toBe('"caller";q=1;w=1');
    expect(limited.headers.get("ratelimit")).toBe(`"caller";r=0;t=${limited.headers.get("retry-after")}`);
    const ok = answers.find((res) => res.status === 200)!;
    expect(ok.headers.get("ratelimit")).toBe('"caller";r=0;t=1');
    expect(ok.headers.get("x-balance-micro-usd")).toBe(String(account.balance));
    expect(ok.headers.get("x-charged-micro-usd")).toBeNull(); // not a priced route
  });

  it("metadata over the limit: 429 without waiting for its page (the limit is counted while the work runs)", async () => {
    const account = await freshKey();
    admin(inject("localDir"), "limit", account.email, "1");
    // All three in one window; the one let through hangs on its page until the client gives up.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const giveUp = new AbortController();
    const answers: Response[] = [];
    const requests = Array.from({ length: 3 }, () =>
      fetch(`${base()}/api/v1/metadata`, {
        method: "POST",
        headers: { "content-type": "application/json", ...account.auth },
        body: JSON.stringify({ url: fixture("/hang") }),
        signal: giveUp.signal,
      }).then((res) => void answers.push(res)),
    );
    await expect.poll(() => answers.length, { timeout: 20_000 }).toBe(2);
    for (const res of answers) {
      expect(res.status).toBe(429);
      expect(((await res.json()) as ErrorBody).error.code).toBe("RATE_LIMITED");
      expect(res.headers.get("ratelimit")).toBe(`"caller";r=0;t=${res.headers.get("retry-after")}`);
    }
    expect(answers).toHaveLength(2);
    giveUp.abort();
    await Promise.allSettled(requests);
  });

  it("anonymous and x402 callers: limits per IP (and per payer), the cost, no balance; open routes carry none", async () => {
    const metadata = await postJson("/api/v1/metadata", { url: fixture("/simple") }, {});
    expect(metadata.headers.get("ratelimit-policy")).toBe('"caller";q=100;w=1');
    expect(metadata.headers.get("x-balance-micro-usd")).toBeNull();
    const health = await fetch(`${base()}/api/v1/health`);
    expect(health.headers.get("ratelimit")).toBeNull();
    const { payingFetch } = localPayer(inject("devInfo"));
    const { pay } = payingFetch();
    const paid = await pay(`${base()}/api/v1/html-to-screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(tiny),
    });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("x-charged-micro-usd")).toBe("5000");
    expect(paid.headers.get("x-balance-micro-usd")).toBeNull();
    expect(paid.headers.get("ratelimit-policy")).toBe('"caller";q=100;w=1, "payer";q=100;w=1');
    expect(paid.headers.get("ratelimit")).toMatch(/^"caller";r=\d+;t=1, "payer";r=\d+;t=1$/);
  });
});
