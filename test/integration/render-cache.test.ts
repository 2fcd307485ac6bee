// The render cache through the stack, DynamoDB Local and s3rver: hits answer the miss's bytes and
// headers without rendering (the fixture counts page loads) and cost an API key nothing; TTLs expire;
// caches are per customer and per cacheKey; concurrent misses render once; x402 pays per call.
import { readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { screenshotRequest } from "../../lib/api/schemas.js";
import { cacheHashOf } from "../../lib/http/render-cache.js";
import { validate } from "../../lib/http/validate.js";
import { postJson } from "../helpers/api.js";
import { getItem, setAttribute } from "../helpers/ledger.js";
import { decode, localPayer } from "../helpers/x402.js";

const base = inject("baseUrl");
const fixtureUrl = inject("fixtureUrl");
let counter = 0;

async function freshAccount() {
  const res = await postJson("/api/v1/signup", { email: `cache-${Date.now()}-${counter++}@cache.test` }, {});
  const { api_key: key, account_id: accountId } = (await res.json()) as { api_key: string; account_id: string };
  return {
    accountId,
    shot: (body: Record<string, unknown>) => postJson("/api/v1/screenshot", body, { authorization: `Bearer ${key}` }),
    balance: async () =>
      ((await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_micro_usd: number })
        .balance_micro_usd,
  };
}

/** A page that counts its loads, new for each test. */
function countedPage() {
  const name = crypto.randomUUID();
  return {
    url: `${fixtureUrl}/zoo/counted?name=${name}`,
    loads: async () => (await (await fetch(`${fixtureUrl}/zoo/__hits?name=counted:${name}`)).json()) as number,
  };
}

const small = { width: 320, height: 200, deviceScaleFactor: 1 };
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());
/** The headers an answer shares with its cached copy (request id, rate-limit and balance headers are the request's own). */
const sameHeaders = (res: Response) =>
  Object.fromEntries(["content-type", "content-disposition", "x-render-ms", "cache-control"].map((name) => [name, res.headers.get(name)]));

describe("render cache with an API key", () => {
  it("a miss renders and is charged; the same request again is a hit: same bytes and headers, X-Cache HIT with Age, free, not rendered", async () => {
    const account = await freshAccount();
    const page = countedPage();
    const before = await account.balance();
    const miss = await account.shot({ url: page.url, ...small, cacheTtl: 60 });
    expect(miss.status).toBe(200);
    expect(miss.headers.get("x-cache")).toBe("MISS");
    expect(miss.headers.get("x-charged-micro-usd")).toBe("5000");
    const missBytes = await bytesOf(miss);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const hit = await account.shot({ url: page.url, ...small, cacheTtl: 60 });
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect(Number(hit.headers.get("age"))).toBeGreaterThanOrEqual(1);
    expect(hit.headers.get("x-charged-micro-usd")).toBe("0");
    expect(sameHeaders(hit)).toEqual(sameHeaders(miss));
    expect((await bytesOf(hit)).equals(missBytes)).toBe(true);
    // The answer's form is not part of the key: the JSON envelope of the same output is a hit too.
    const json = await account.shot({ url: page.url, ...small, cacheTtl: 60, responseFormat: "json" });
    expect(json.headers.get("x-cache")).toBe("HIT");
    expect(Buffer.from(((await json.json()) as { image: string }).image, "base64").equals(missBytes)).toBe(true);
    expect(await page.loads()).toBe(1);
    expect(await account.balance()).toBe(before - 5000);
  });

  it("an entry expires after its cacheTtl: the next request renders and is charged again", async () => {
    const account = await freshAccount();
    const page = countedPage();
    const before = await account.balance();
    expect((await account.shot({ url: page.url, ...small, cacheTtl: 1 })).headers.get("x-cache")).toBe("MISS");
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect((await account.shot({ url: page.url, ...small, cacheTtl: 1 })).headers.get("x-cache")).toBe("MISS");
    expect(await page.loads()).toBe(2);
    expect(await account.balance()).toBe(before - 10_000);
  });

  it("is per customer: two accounts rendering the same URL each render and pay once; cacheKey separates variants", async () => {
    const [one, two] = [await freshAccount(), await freshAccount()];
    const page = countedPage();
    const body = { url: page.url, ...small, cacheTtl: 60 };
    expect((await one.shot(body)).headers.get("x-cache")).toBe("MISS");
    expect((await two.shot(body)).headers.get("x-cache")).toBe("MISS");
    expect((await one.shot(body)).headers.get("x-cache")).toBe("HIT");
    expect(await page.loads()).toBe(2);
    expect((await one.shot({ ...body, cacheKey: "variant-a" })).headers.get("x-cache")).toBe("MISS");
    expect((await one.shot({ ...body, cacheKey: "variant-b" })).headers.get("x-cache")).toBe("MISS");
    expect((await one.shot({ ...body, cacheKey: "variant-a" })).headers.get("x-cache")).toBe("HIT");
    // Another field that changes the output is another entry too.
    expect((await one.shot({ ...body, darkMode: true })).headers.get("x-cache")).toBe("MISS");
    expect(await page.loads()).toBe(5);
  });

  it("concurrent misses render once: the first renders, the others wait for its output and are hits", async () => {
    const account = await freshAccount();
    const page = countedPage();
    const before = await account.balance();
    const body = { url: page.url, ...small, delay: 800, cacheTtl: 60 };
    const answers = await Promise.all([0, 1, 2].map(() => account.shot(body)));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
    expect(answers.map((res) => res.headers.get("x-cache")).sort()).toEqual(["HIT", "HIT", "MISS"]);
    const bytes = await Promise.all(answers.map(bytesOf));
    expect(bytes[1]!.equals(bytes[0]!) && bytes[2]!.equals(bytes[0]!)).toBe(true);
    expect(await page.loads()).toBe(1);
    expect(await account.balance()).toBe(before - 5000);
  });

  it("a render that fails stores nothing and frees the lease: the retry renders again, nothing is charged", async () => {
    const account = await freshAccount();
    const before = await account.balance();
    const body = { url: `${fixtureUrl}/not-found`, ...small, cacheTtl: 60 };
    expect((await account.shot(body)).status).toBe(422);
    const retry = await account.shot(body);
    expect(retry.status).toBe(422);
    expect(retry.headers.get("x-cache")).toBeNull();
    expect(await account.balance()).toBe(before);
  });

  it("a cached output that cannot be read any more (S3 failing) is rendered again, not an error, and the hit stays free", async () => {
    const account = await freshAccount();
    const page = countedPage();
    const before = await account.balance();
    const body = { url: page.url, ...small, cacheTtl: 60 };
    expect((await account.shot(body)).headers.get("x-cache")).toBe("MISS");
    // Point the entry at an object S3 does not have (this instance keeps no copy of it under that key).
    const hash = cacheHashOf("screenshot", account.accountId, validate(screenshotRequest, body) as Record<string, unknown>);
    await setAttribute(`CACHE#${hash}`, "CACHE", "objectKey", "cache/d1/gone");
    const again = await account.shot(body);
    expect(again.status).toBe(200);
    expect((await bytesOf(again)).subarray(1, 4).toString()).toBe("PNG");
    expect(await page.loads()).toBe(2);
    expect(await account.balance()).toBe(before - 5000);
  });

  it("an instance answers repeated hits from its own copy of an output it stored (objects never change), without S3", async () => {
    const account = await freshAccount();
    const page = countedPage();
    const started = Date.now() - 1000;
    const body = { url: page.url, ...small, cacheTtl: 60 };
    const miss = await account.shot(body);
    const missBytes = await bytesOf(miss);
    // s3rver keeps objects as files: remove the one this miss stored (only this file uses the cache).
    const stored = (readdirSync(inject("localDir"), { recursive: true }) as string[])
      .map((file) => path.join(inject("localDir"), file))
      .filter((file) => file.includes(`${path.sep}cache${path.sep}d1${path.sep}`) && statSync(file).isFile() && statSync(file).mtimeMs >= started);
    expect(stored.length).toBeGreaterThan(0);
    for (const file of stored) rmSync(file);
    const hit = await account.shot(body);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect((await bytesOf(hit)).equals(missBytes)).toBe(true);
    expect(await page.loads()).toBe(1);
  });

  it("without cacheTtl nothing is cached and no X-Cache is sent", async () => {
    const account = await freshAccount();
    const page = countedPage();
    for (let i = 0; i < 2; i++) expect((await account.shot({ url: page.url, ...small })).headers.get("x-cache")).toBeNull();
    expect(await page.loads()).toBe(2);
  });
});

describe("render cache with x402", () => {
  it("is the payer's own, and a hit is still paid (the price is quoted before the payer is known): one render, two payments", async () => {
    const { payingFetch, payer } = localPayer(inject("devInfo"));
    const { pay } = payingFetch();
    const page = countedPage();
    const send = () =>
      pay(`${base}/api/v1/screenshot`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: page.url, ...small, cacheTtl: 60 }),
      });
    const miss = await send();
    expect(miss.headers.get("x-cache")).toBe("MISS");
    const hit = await send();
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect(await page.loads()).toBe(1);
    // Two settlements of the full price, each recorded once (other files pay from the same payer at
    // the same time, so its balance is not this test's to read).
    const settled = [miss, hit].map((res) => decode(res.headers.get("payment-response")).transaction as string);
    expect(new Set(settled).size).toBe(2);
    for (const transaction of settled) expect(await getItem(`SETTLE#${transaction}`, "SETTLE")).toMatchObject({ payer: payer.address, amount: 5_000 });
    // An account asking for the same page does not get the payer's entry.
    const account = await freshAccount();
    expect((await account.shot({ url: page.url, ...small, cacheTtl: 60 })).headers.get("x-cache")).toBe("MISS");
  });
});
