import { describe, expect, inject, it } from "vitest";
import { ORPHANS, PER_TOPIC, siteStats, TOPICS } from "../../dev/harness/crawl-site.js";
import { fundedKey } from "../../dev/harness/dev-process.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { freshPayerKey, localPayer } from "../helpers/x402.js";

// POST /api/v1/map through the local stack, on the crawler's loopback sites (dev/harness/crawl-site.ts):
// the orphans its gzipped sitemap lists, nothing robots.txt disallows, nothing of another origin,
// the bombs read at a bounded cost, $0.001 by key or by x402.

const base = inject("baseUrl");
const sites = inject("crawlSites");
let counter = 0;
const account = () => fundedKey(base, inject("localDir"), `map-${Date.now()}-${counter++}@map.test`, 1);
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const balance = async (key: string) =>
  ((await (await fetch(`${base}/api/v1/usage`, { headers: auth(key) })).json()) as { balance_micro_usd: number }).balance_micro_usd;

type MapAnswer = {
  url: string;
  urls: { url: string; source: string; lastmod?: string }[];
  skipped: Record<string, number>;
  sitemaps: { url: string; entries: number; stopped?: string }[];
  robots: { found: boolean; crawlDelay: number };
  incomplete?: true;
};

describe("POST /api/v1/map", () => {
  it("lists a site's URLs from its sitemaps (the orphans too) and its first pages, none robots.txt disallows, for $0.001", async () => {
    const key = await account();
    const before = await balance(key);
    const res = await postJson("/api/v1/map", { url: `${sites.a}/` }, auth(key));
    const body = (await res.json()) as MapAnswer;
    expect(res.status, JSON.stringify(body)).toBe(200);
    const urls = body.urls.map((u) => u.url);
    for (let k = 1; k <= ORPHANS; k++) expect(body.urls).toContainEqual({ url: `${sites.a}/orphans/${k}`, source: "sitemap", lastmod: "2026-11-01" });
    // The first topic's articles are in a sitemap; the topics are the home page's links, and their articles those pages' links.
    for (let n = 1; n <= PER_TOPIC; n++) expect(urls).toContain(`${sites.a}/articles/1-${n}`);
    for (let t = 1; t <= TOPICS; t++) expect(urls).toContain(`${sites.a}/topics/${t}`);
    expect(body.urls[0]).toEqual({ url: `${sites.a}/`, source: "start" });
    expect(urls.filter((url) => url.includes("/private/"))).toEqual([]);
    expect(urls.filter((url) => !url.startsWith(`${sites.a}/`))).toEqual([]);
    // Normalised: no fragment, no tracking parameter, no session id.
    expect(urls.filter((url) => /#|utm_|sid=/.test(url))).toEqual([]);
    expect(new Set(urls).size).toBe(urls.length);
    expect(body.skipped.robots).toBeGreaterThanOrEqual(1);
    expect(body.skipped.scope).toBeGreaterThanOrEqual(1);
    expect(body.robots).toEqual({ found: true, crawlDelay: 0 });
    // The bombs cost their limits: read, stopped, and listed with why.
    expect(body.sitemaps).toContainEqual({ url: `${sites.a}/sitemaps/bomb.xml.gz`, entries: 0, stopped: "larger than 50 MB uncompressed" });
    expect(body.sitemaps.find((s) => s.url.endsWith("/laughs.xml"))?.stopped).toMatch(/not well-formed XML/);
    expect(body.sitemaps.find((s) => s.url.endsWith("/orphans.xml.gz"))).toEqual({ url: `${sites.a}/sitemaps/orphans.xml.gz`, entries: ORPHANS });
    expect(body.incomplete).toBeUndefined();
    expect(await balance(key)).toBe(before - 1_000);
    // Every request was the crawler's, and none went to /private/.
    const stats = await siteStats(sites.a);
    expect(stats.hits.filter((hit) => hit.path.startsWith("/private/"))).toEqual([]);
    expect(new Set(stats.hits.map((hit) => hit.userAgent.replace(/; \+.*\)$/, ")")))).toEqual(new Set(["Mozilla/5.0 (compatible; Shotline/1.0)"]));
    // The service answers at once after the bombs.
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
  });

  it("keeps to limit, include and exclude", async () => {
    const key = await account();
    const res = await postJson(
      "/api/v1/map",
      { url: `${sites.a}/`, limit: 7, include: [`${sites.a}/articles/**`, `${sites.a}/orphans/*`], exclude: [`${sites.a}/orphans/2`] },
      auth(key),
    );
    const body = (await res.json()) as MapAnswer;
    expect(res.status).toBe(200);
    expect(body.urls.length).toBe(7);
    for (const { url } of body.urls) expect(url).toMatch(new RegExp(`^${sites.a}/(articles/\\d+-\\d+|orphans/[13-5])$`));
  });

  it("reads robots.txt's Crawl-delay and waits it between pages", async () => {
    const key = await account();
    const asked = Date.now();
    const res = await postJson("/api/v1/map", { url: `${sites.b}/` }, auth(key));
    const body = (await res.json()) as MapAnswer;
    const answered = Date.now();
    expect(res.status).toBe(200);
    expect(body.robots).toEqual({ found: true, crawlDelay: 1 });
    expect(body.urls.map((u) => u.url)).toEqual([`${sites.b}/`, ...[1, 2, 3, 4, 5].map((n) => `${sites.b}/b/${n}`)]);
    // Its requests: while it ran, with no crawl's run header (the other files' crawls of this site send theirs).
    const pages = (await siteStats(sites.b, "")).hits.filter(
      (hit) => hit.at >= asked && hit.at <= answered && (hit.path === "/" || hit.path.startsWith("/b/")),
    );
    expect(pages.length).toBe(6);
    for (let i = 1; i < pages.length; i++) expect(pages[i]!.at - pages[i - 1]!.at).toBeGreaterThanOrEqual(1_000);
  });

  it("refuses what it cannot read without a charge: bad input, a private address", async () => {
    const key = await account();
    const before = await balance(key);
    for (const [body, status, code] of [
      [{ url: "ftp://example.com/" }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, limit: 0 }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, include: "**" }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, extra: 1 }, 400, "INVALID_PARAMS"],
      [{ url: `${inject("canaryUrl")}/` }, 422, "INVALID_URL"],
      [{ url: "http://169.254.169.254/latest/" }, 422, "INVALID_URL"],
    ] as const) {
      const res = await postJson("/api/v1/map", body, auth(key));
      const answer = (await res.json()) as ErrorBody;
      expect([res.status, answer.error?.code], JSON.stringify(answer)).toEqual([status, code]);
    }
    expect(await balance(key)).toBe(before);
  });

  it("is paid by x402 without a key: $0.001 in USDC", async () => {
    const info = inject("devInfo");
    const { payer, balanceOf, payingFetch } = localPayer(info, await freshPayerKey(info));
    const quote = await postJson("/api/v1/map", { url: `${sites.b}/` }, {});
    expect(quote.status).toBe(402);
    const before = await balanceOf(payer.address);
    const { pay } = payingFetch();
    const res = await pay(`${base}/api/v1/map`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: `${sites.b}/`, limit: 1 }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as MapAnswer).urls).toEqual([{ url: `${sites.b}/`, source: "start" }]);
    expect(before - (await balanceOf(payer.address))).toBe(1_000n);
  });
});
