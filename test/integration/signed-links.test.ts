// Signed links through the stack and DynamoDB Local: signing keys (create once with the secret,
// list without, revoke), GET /api/v1/screenshot authorised by the signature of its query, charged to
// the key's account like a POST; tampered, unknown, expired and revoked links refused without a
// charge; cached with cacheTtl; and a real page in Chromium showing one through <img src>.
import { createHmac } from "node:crypto";
import puppeteer from "puppeteer-core";
import sharp from "sharp";
import { describe, expect, inject, it } from "vitest";
import { quietChromium } from "../../dev/harness/browser.js";
import { type ErrorBody, postJson } from "../helpers/api.js";

const base = inject("baseUrl");
const fixtureUrl = inject("fixtureUrl");
let counter = 0;

async function freshAccount() {
  const res = await postJson("/api/v1/signup", { email: `signed-${Date.now()}-${counter++}@signed.test` }, {});
  const { api_key: key } = (await res.json()) as { api_key: string };
  const auth = { authorization: `Bearer ${key}` };
  return {
    auth,
    createKey: (body?: unknown) =>
      fetch(`${base}/api/v1/signing-keys`, {
        method: "POST",
        headers: body === undefined ? auth : { ...auth, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    listKeys: async () => ((await (await fetch(`${base}/api/v1/signing-keys`, { headers: auth })).json()) as { signingKeys: { keyId: string }[] }).signingKeys,
    revoke: (keyId: string) => fetch(`${base}/api/v1/signing-keys/${encodeURIComponent(keyId)}`, { method: "DELETE", headers: auth }),
    balance: async () => ((await (await fetch(`${base}/api/v1/usage`, { headers: auth })).json()) as { balance_micro_usd: number }).balance_micro_usd,
  };
}

/** RFC 3986 percent-encoding (everything but A-Z a-z 0-9 - . _ ~), written here from docs/api.md, not taken from the service. */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** A signed link for `fields`, as a customer would build it from the documented rule. */
function signedLink(keyId: string, secret: string, fields: Record<string, unknown>, expires = Math.floor(Date.now() / 1000) + 600): string {
  const params: [string, string][] = [
    ...Object.entries(fields).map(([name, value]): [string, string] => [name, typeof value === "string" ? value : JSON.stringify(value)]),
    ["keyId", keyId],
    ["expires", String(expires)],
  ];
  const canonical = [...params]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .join("&");
  const signature = createHmac("sha256", secret).update(canonical).digest("hex");
  return `${base}/api/v1/screenshot?${canonical}&signature=${signature}`;
}

async function accountWithKey(body?: unknown) {
  const account = await freshAccount();
  const created = await account.createKey(body);
  expect(created.status).toBe(201);
  const { keyId, secret } = (await created.json()) as { keyId: string; secret: string };
  return { ...account, keyId, secret };
}

const small = { width: 320, height: 200, deviceScaleFactor: 1 };

describe("signing keys", () => {
  it("at most 20 an account, however many are asked for at once; a revoked one makes room", async () => {
    const account = await freshAccount();
    const created = await Promise.all(Array.from({ length: 26 }, () => account.createKey()));
    const statuses = created.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 409)).toHaveLength(6);
    const keys = await account.listKeys();
    expect(keys).toHaveLength(20);
    expect((await account.createKey()).status).toBe(409);
    expect((await account.revoke(keys[0]!.keyId)).status).toBe(200);
    expect((await account.createKey()).status).toBe(201);
    expect(await account.listKeys()).toHaveLength(20);
  }, 60_000);

  it("are created with their secret once, listed without it, and revoked; another account cannot touch them", async () => {
    const account = await freshAccount();
    const res = await account.createKey();
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const created = (await res.json()) as { keyId: string; secret: string; createdAt: string };
    expect(created.keyId).toMatch(/^sk_/);
    expect(created.secret.length).toBeGreaterThanOrEqual(40);
    const listed = await (await fetch(`${base}/api/v1/signing-keys`, { headers: account.auth })).text();
    expect(listed).toContain(created.keyId);
    expect(listed).not.toContain(created.secret);
    const other = await freshAccount();
    expect((await other.revoke(created.keyId)).status).toBe(404);
    expect((await account.revoke(created.keyId)).status).toBe(200);
    expect((await account.revoke(created.keyId)).status).toBe(404);
    expect(await account.listKeys()).toEqual([]);
    expect((await fetch(`${base}/api/v1/signing-keys`, { method: "POST" })).status).toBe(401);
  });

  it("an account holds at most 20: the 21st is 409 TOO_MANY_SIGNING_KEYS", async () => {
    const account = await freshAccount();
    for (let i = 0; i < 20; i++) expect((await account.createKey()).status).toBe(201);
    const over = await account.createKey();
    expect(over.status).toBe(409);
    expect(((await over.json()) as ErrorBody).error.code).toBe("TOO_MANY_SIGNING_KEYS");
  });
});

describe("a signing key's daily limit", () => {
  it("is optional, in cents, listed with the key; anything but a whole number of cents from 1 to 1,000,000 is 400", async () => {
    const account = await freshAccount();
    const none = (await (await account.createKey()).json()) as { dailyLimitCents: unknown };
    expect(none.dailyLimitCents).toBeNull();
    const limited = await account.createKey({ dailyLimitCents: 250 });
    expect(limited.status).toBe(201);
    const { keyId, dailyLimitCents } = (await limited.json()) as { keyId: string; dailyLimitCents: number };
    expect(dailyLimitCents).toBe(250);
    expect((await account.listKeys()).find((k) => k.keyId === keyId)).toMatchObject({ dailyLimitCents: 250 });
    for (const bad of [
      { dailyLimitCents: 0 },
      { dailyLimitCents: -5 },
      { dailyLimitCents: 1.5 },
      { dailyLimitCents: "100" },
      { dailyLimitCents: 1_000_001 },
      { daily: 5 },
    ]) {
      const res = await account.createKey(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(((await res.json()) as ErrorBody).error.code).toBe("INVALID_PARAMS");
    }
    expect(await account.listKeys()).toHaveLength(2);
  });

  it("caps what its links are charged a UTC day: past it 429 DAILY_LIMIT_REACHED until midnight, nothing charged; refunds do not count", async () => {
    // 1 cent: two $0.005 screenshots, or one $0.01 mockup.
    const { keyId, secret, balance, auth } = await accountWithKey({ dailyLimitCents: 1 });
    const before = await balance();
    // A render that fails is refunded, and gives its share of the day back.
    expect((await fetch(signedLink(keyId, secret, { url: `${fixtureUrl}/not-found`, ...small }))).status).toBe(422);
    for (const width of [320, 330]) expect((await fetch(signedLink(keyId, secret, { url: `${fixtureUrl}/simple`, ...small, width }))).status).toBe(200);
    const over = await fetch(signedLink(keyId, secret, { url: `${fixtureUrl}/simple`, ...small, width: 340 }));
    expect(over.status).toBe(429);
    const body = (await over.json()) as ErrorBody;
    expect(body.error.code).toBe("DAILY_LIMIT_REACHED");
    expect(body.error.message).toMatch(/daily limit of \$0\.01/);
    const retryAfter = Number(over.headers.get("retry-after"));
    const midnight = Math.ceil((Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`) + 86_400_000 - Date.now()) / 1000);
    expect(Math.abs(retryAfter - midnight)).toBeLessThanOrEqual(5);
    expect(over.headers.get("cache-control")).toMatch(/no-store/);
    expect(await balance()).toBe(before - 2 * 5000);
    // The account's API key is not limited by it.
    const post = await postJson("/api/v1/screenshot", { url: `${fixtureUrl}/simple`, ...small }, auth);
    expect(post.status).toBe(200);
  });
});

describe("GET /api/v1/screenshot with a signed link", () => {
  it("renders and charges the key's account like a POST; fields of every type travel in the query", async () => {
    const { keyId, secret, balance } = await accountWithKey();
    const before = await balance();
    const link = signedLink(keyId, secret, { url: `${fixtureUrl}/simple`, ...small, fullPage: false, hideSelectors: ["#nothing"], format: "png" });
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const { width, height } = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    expect([width, height]).toEqual([320, 200]);
    expect(await balance()).toBe(before - 5000);
  });

  it("refuses tampered, unknown, unsigned, expired and revoked links with 403, and charges nothing", async () => {
    const account = await accountWithKey();
    const before = await account.balance();
    const link = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, ...small });
    const code = async (url: string) => {
      const res = await fetch(url);
      return [res.status, ((await res.json()) as ErrorBody).error.code];
    };
    expect(await code(link.replace("width=320", "width=640"))).toEqual([403, "INVALID_SIGNATURE"]);
    expect(await code(`${link}&fullPage=true`)).toEqual([403, "INVALID_SIGNATURE"]);
    expect(await code(link.replace(/signature=[0-9a-f]+/, `signature=${"0".repeat(64)}`))).toEqual([403, "INVALID_SIGNATURE"]);
    expect(await code(link.replace(/&signature=[0-9a-f]+/, ""))).toEqual([403, "INVALID_SIGNATURE"]);
    // A GET with an API key and no signature is told how to use the key.
    const keyed = await fetch(`${base}/api/v1/screenshot?url=${encodeURIComponent(`${fixtureUrl}/simple`)}`, {
      headers: { authorization: `Bearer ${inject("apiKey")}` },
    });
    expect(keyed.status).toBe(403);
    expect(((await keyed.json()) as ErrorBody).error.message).toMatch(/POST the fields as JSON/);
    expect(await code(signedLink("sk_unknown", account.secret, { url: `${fixtureUrl}/simple` }))).toEqual([403, "INVALID_SIGNATURE"]);
    // One signature, one URL: the same query spelt otherwise is refused (each would be a new CDN entry).
    const [query, signature] = link.split("?")[1]!.split("&signature=") as [string, string];
    const respelt = [
      `${query.split("&").reverse().join("&")}&signature=${signature}`,
      `${query.replace(/(^|&)url=/, "$1%75rl=")}&signature=${signature}`,
      `${query.replace(/(^|&)width=320/, "$1wid%74h=%33%32%30")}&signature=${signature}`,
      `signature=${signature}&${query}`,
    ];
    for (const spelling of respelt) expect(await code(`${base}/api/v1/screenshot?${spelling}`), spelling).toEqual([403, "INVALID_SIGNATURE"]);
    // A link that lives past a year is refused, however well signed.
    const eternal = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple` }, 999_999_999_999);
    expect(await code(eternal)).toEqual([403, "INVALID_SIGNATURE"]);
    // However long: refused before any lookup (DynamoDB would refuse a key over 1 KB with a 500).
    expect(await code(signedLink(`sk_${"x".repeat(5000)}`, account.secret, { url: `${fixtureUrl}/simple` }))).toEqual([403, "INVALID_SIGNATURE"]);
    expect(await code(signedLink(account.keyId, "not the secret", { url: `${fixtureUrl}/simple` }))).toEqual([403, "INVALID_SIGNATURE"]);
    const expired = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple` }, Math.floor(Date.now() / 1000) - 1);
    expect(await code(expired)).toEqual([403, "LINK_EXPIRED"]);
    // An expired link altered to a later expiry no longer matches its signature.
    expect(await code(expired.replace(/expires=\d+/, `expires=${Math.floor(Date.now() / 1000) + 600}`))).toEqual([403, "INVALID_SIGNATURE"]);
    expect((await account.revoke(account.keyId)).status).toBe(200);
    expect(await code(link)).toEqual([403, "INVALID_SIGNATURE"]);
    expect(await account.balance()).toBe(before);
  });

  it("a signed link with an invalid field is 400 naming it, not charged", async () => {
    const account = await accountWithKey();
    const res = await fetch(signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, width: 5 }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/width: must be an integer from 320 to 3840/);
    expect((await fetch(`${base}/api/v1/screenshot?url=a&url=b&keyId=x&expires=1&signature=${"0".repeat(64)}`)).status).toBe(400);
  });

  it("with cacheTtl: cached (X-Cache, free hits) and marked for a CDN to keep as long; without it, not cacheable", async () => {
    const account = await accountWithKey();
    const before = await account.balance();
    const link = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, ...small, cacheTtl: 3600 });
    const miss = await fetch(link);
    expect(miss.headers.get("x-cache")).toBe("MISS");
    expect(miss.headers.get("cache-control")).toBe("public, max-age=3600, immutable");
    const hit = await fetch(link);
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect(await account.balance()).toBe(before - 5000);
    const uncached = await fetch(signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, ...small }));
    expect(uncached.headers.get("cache-control")).toBe("private, no-store");
  });

  it("a large output's answer holds a presigned link: kept by a CDN no longer than the link lives", async () => {
    const account = await accountWithKey();
    const link = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/noise`, width: 1600, height: 1200, cacheTtl: 2_592_000 });
    const res = await fetch(link, { redirect: "manual" });
    expect(res.status).toBe(303);
    // DOWNLOAD_LINK_SECONDS (3600) less 5 minutes: the cached redirect always leads somewhere.
    expect(res.headers.get("cache-control")).toBe("public, max-age=3300");
    expect((await fetch(res.headers.get("location")!)).status).toBe(200);
    // The JSON answer's downloadUrl likewise.
    const json = await fetch(
      signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/noise`, width: 1600, height: 1200, cacheTtl: 2_592_000, responseFormat: "json" }),
    );
    expect(json.status).toBe(200);
    expect(json.headers.get("cache-control")).toBe("public, max-age=3300");
    expect(((await json.json()) as { downloadUrl?: string }).downloadUrl).toBeDefined();
  });

  it("ignores an Idempotency-Key on a signed link: a stranger cannot claim the owner's key names", async () => {
    const account = await accountWithKey();
    const name = `claimed-${Date.now()}`;
    const link = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, ...small });
    const stranger = await fetch(link, { headers: { "idempotency-key": name } });
    expect(stranger.status).toBe(200);
    // The owner's own request with that key, another body: runs, rather than 409 IDEMPOTENCY_CONFLICT.
    const own = await postJson("/api/v1/screenshot", { url: `${fixtureUrl}/simple`, ...small, width: 400 }, { ...account.auth, "idempotency-key": name });
    expect(own.status).toBe(200);
    // And a second use of the link with the same header is a new render, not a replay.
    const again = await fetch(link, { headers: { "idempotency-key": name } });
    expect(again.headers.get("idempotent-replayed")).toBeNull();
  });

  it("tells whoever holds a link nothing of its owner: no balance, charge or limits, on a render or an error, and errors are never stored", async () => {
    const account = await accountWithKey();
    const steering = /^(x-balance-micro-usd|x-charged-micro-usd|ratelimit.*)$/;
    const leaked = (res: Response) => [...(res.headers as unknown as Map<string, string>).keys()].filter((name) => steering.test(name));
    const cached = await fetch(signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, ...small, cacheTtl: 3600 }));
    expect(cached.status).toBe(200);
    expect(leaked(cached)).toEqual([]);
    const failed = await fetch(signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/not-found`, ...small, cacheTtl: 3600 }));
    expect(failed.status).toBe(422);
    expect(leaked(failed)).toEqual([]);
    expect(failed.headers.get("cache-control")).toBe("no-store");
    // The owner's own keyed requests still say it all.
    const keyed = await postJson("/api/v1/screenshot", { url: `${fixtureUrl}/simple`, ...small }, account.auth);
    expect(leaked(keyed)).toEqual(expect.arrayContaining(["x-balance-micro-usd", "x-charged-micro-usd"]));
  });

  it("a real page shows it through <img src>: the image appears, the account is charged once for the render", async () => {
    const account = await accountWithKey();
    const before = await account.balance();
    const link = signedLink(account.keyId, account.secret, { url: `${fixtureUrl}/simple`, ...small, cacheTtl: 600 });
    const browser = await puppeteer.launch({ ...(await quietChromium()), pipe: true });
    try {
      const page = await browser.newPage();
      // A page of another origin (the fixture server) embedding the link, as a customer's site would.
      await page.goto(`${fixtureUrl}/simple`);
      const size = await page.evaluate(async (src) => {
        const img = document.createElement("img");
        img.src = src;
        document.body.append(img);
        await img.decode();
        const again = document.createElement("img");
        again.src = src;
        document.body.append(again);
        await again.decode();
        return [img.naturalWidth, img.naturalHeight, again.naturalWidth];
      }, link);
      expect(size).toEqual([320, 200, 320]);
    } finally {
      await browser.close();
    }
    expect(await account.balance()).toBe(before - 5000);
  });
});
