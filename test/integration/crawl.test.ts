import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import { ORPHANS, PER_TOPIC, siteStats, TOPICS } from "../../dev/harness/crawl-site.js";
import { fundedKey } from "../../dev/harness/dev-process.js";
import { MAX_RUNNING } from "../../lib/http/crawl-start.js";
import { canaryHits, type ErrorBody, postJson } from "../helpers/api.js";
import { getItem } from "../helpers/ledger.js";

// POST /api/v1/crawl through the local stack: the jobs' workers read the crawler's loopback site
// (dev/harness/crawl-site.ts) page by page, from the frontier in DynamoDB, and the test reads what
// they delivered, what they skipped and why, what it cost, and what the site saw.

const base = inject("baseUrl");
const sites = inject("crawlSites");
let counter = 0;
const account = (dollars = 100) => fundedKey(base, inject("localDir"), `crawl-${Date.now()}-${counter++}@crawl.test`, dollars);
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const secretOf = async (key: string) => {
  const res = await fetch(`${base}/api/v1/webhook-secret`, { method: "POST", headers: auth(key) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { secret: string }).secret;
};
const seen = async (id: string) =>
  (await (await fetch(`${inject("fixtureUrl")}/hooks/seen?id=${id}`)).json()) as { headers: Record<string, string>; body: string }[];
const balance = async (key: string) =>
  ((await (await fetch(`${base}/api/v1/usage`, { headers: auth(key) })).json()) as { balance_micro_usd: number }).balance_micro_usd;

type Page = {
  url: string;
  status: string;
  reason?: string;
  depth: number;
  found_by: string;
  final_url?: string;
  http_status?: number;
  rendered?: boolean;
  title?: string;
  charged_micro_usd?: number;
  error?: string;
  download_url?: string;
};
type Crawl = {
  id: string;
  status: string;
  limit: number;
  counts: { discovered: number; delivered: number; failed: number; skipped: Record<string, number> };
  charged_micro_usd: number;
  held_micro_usd?: number;
  pages: Page[];
  next_cursor: string | null;
};

const start = async (key: string, body: Record<string, unknown>) => {
  const res = await postJson("/api/v1/crawl", body, auth(key));
  const answer = (await res.json()) as Crawl & ErrorBody;
  expect(res.status, JSON.stringify(answer)).toBe(202);
  return answer;
};
const read = async (key: string, id: string, query = "") => {
  const res = await fetch(`${base}/api/v1/crawl/${id}${query}`, { headers: auth(key) });
  return { res, body: (await res.json()) as Crawl & ErrorBody };
};
/** Every page of the crawl, following the cursor. */
const allPages = async (key: string, id: string): Promise<{ crawl: Crawl; pages: Page[] }> => {
  const pages: Page[] = [];
  let cursor: string | null = null;
  let crawl: Crawl;
  do {
    crawl = (await read(key, id, `?limit=50${cursor ? `&cursor=${cursor}` : ""}`)).body;
    pages.push(...crawl.pages);
    cursor = crawl.next_cursor;
  } while (cursor);
  return { crawl, pages };
};
/** The crawl once it has ended, read every 500 ms for at most `ms`. */
async function ended(key: string, id: string, ms = 240_000): Promise<Crawl> {
  const until = Date.now() + ms;
  for (;;) {
    const { body } = await read(key, id);
    if (body.status !== "running") return body;
    if (Date.now() > until) throw new Error(`crawl ${id} still running: ${JSON.stringify(body.counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe("POST /api/v1/crawl", () => {
  it("delivers exactly the reachable in-scope pages of a site, politely, and charges each once", async () => {
    const key = await account();
    const before = await balance(key);
    const run = `whole-${Date.now()}`;
    const created = await start(key, { url: `${sites.a}/`, limit: 1000, formats: ["markdown", "links"], headers: { "x-crawl-run": run } });
    expect(created).toMatchObject({ status: "running", limit: 1000 });
    // Its price is held while it runs: 1,000 pages at a rendered page's price.
    expect(await balance(key)).toBe(before - 1000 * 2_000);
    const crawl = await ended(key, created.id);
    const { pages } = await allPages(key, created.id);
    const delivered = pages.filter((p) => p.status === "delivered");
    const urls = new Set(delivered.map((p) => p.url));
    const articles = Array.from({ length: TOPICS * PER_TOPIC }, (_, i) => `${sites.a}/articles/${Math.floor(i / PER_TOPIC) + 1}-${(i % PER_TOPIC) + 1}`);
    for (const url of articles) expect(urls, url).toContain(url);
    for (let k = 1; k <= ORPHANS; k++) expect(urls).toContain(`${sites.a}/orphans/${k}`);
    for (let t = 1; t <= TOPICS; t++) expect(urls).toContain(`${sites.a}/topics/${t}`);
    expect([...urls].filter((url) => url.includes("/private/") || url.includes("/duplicate") || url.includes("/moved") || !url.startsWith(sites.a))).toEqual(
      [],
    );
    expect(pages.find((p) => p.url === `${sites.a}/private/secret`)).toMatchObject({ status: "skipped", reason: "robots" });
    expect(pages.find((p) => p.url === `${sites.a}/duplicate`)).toMatchObject({ status: "skipped", reason: "duplicate" });
    // A redirect to the canary (another server: out of scope) is not followed: no connection.
    expect(pages.find((p) => p.url === `${sites.a}/moved`)).toMatchObject({ status: "skipped", reason: "scope", http_status: 302 });
    expect(pages.find((p) => p.url === `${sites.b}/`)).toMatchObject({ status: "skipped", reason: "scope" });
    // 429 with Retry-After: 2 once: asked again no sooner than 2 s later, then delivered.
    expect(pages.find((p) => p.url === `${sites.a}/busy`)).toMatchObject({ status: "delivered", http_status: 200 });
    // Traps: at most 6 calendar pages and 5 session pages fetched (this crawl's page requests: its header).
    const stats = await siteStats(sites.a, run);
    const hits = (prefix: string) => stats.hits.filter((hit) => hit.path.startsWith(prefix)).length;
    expect(hits("/calendar")).toBeLessThanOrEqual(6);
    expect(hits("/session")).toBeLessThanOrEqual(5);
    expect(hits("/private/")).toBe(0);
    expect(stats.maxInFlight).toBeLessThanOrEqual(2);
    const busy = stats.hits.filter((hit) => hit.path === "/busy");
    expect(busy).toHaveLength(2);
    expect(busy[1]!.at - busy[0]!.at).toBeGreaterThanOrEqual(2_000);
    // Every request the crawler's, naming itself (its robots.txt and sitemap requests too, which carry no customer header).
    expect(stats.hits.length).toBeGreaterThan(100);
    expect((await siteStats(sites.a)).hits.every((hit) => /^Mozilla\/5\.0 \(compatible; Shotline\/1\.0[;)]/.test(hit.userAgent))).toBe(true);
    // The script-built page was rendered; the articles were not (95% at least).
    expect(pages.find((p) => p.url === `${sites.a}/app`)).toMatchObject({ status: "delivered", rendered: true });
    const renderedArticles = delivered.filter((p) => p.url.includes("/articles/") && p.rendered).length;
    expect(renderedArticles).toBeLessThanOrEqual(5);
    // Money: each delivered page once, at its price; the rest of the hold given back.
    const price = delivered.reduce((sum, p) => sum + (p.rendered ? 2_000 : 1_000), 0);
    expect(delivered.map((p) => p.charged_micro_usd)).toEqual(delivered.map((p) => (p.rendered ? 2_000 : 1_000)));
    expect(crawl.charged_micro_usd).toBe(price);
    expect(crawl.counts.delivered).toBe(delivered.length);
    expect(await balance(key)).toBe(before - price);
    expect(await getItem("HOLD", created.id)).toBeUndefined();
    // Every article's Markdown has its text.
    const one = delivered.find((p) => p.url === `${sites.a}/articles/2-3`)!;
    const output = (await (await fetch(one.download_url!)).json()) as { markdown: string; links: string[]; title: string };
    expect(output.markdown).toContain(one.title!.split(" ").slice(0, 4).join(" "));
    expect(output.links).toContain(`${sites.a}/topics/2`);
    expect(await canaryHits()).toEqual([]);
    // Its whole result: every delivered page, one JSON a line, written by a worker once it ended.
    let resultUrl: string | undefined;
    for (const until = Date.now() + 60_000; !resultUrl && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 250)))
      resultUrl = ((await read(key, created.id)).body as Crawl & { result_url?: string }).result_url;
    const lines = (await (await fetch(resultUrl!)).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { url: string; markdown: string });
    expect(lines.map((line) => line.url).sort()).toEqual(delivered.map((p) => p.url).sort());
    expect(lines.every((line) => typeof line.markdown === "string")).toBe(true);
    // The bombs in its robots.txt's sitemaps cost their limits: the service answers at once after them.
    const health = Date.now();
    expect((await fetch(`${base}/api/v1/health`)).status).toBe(200);
    expect(Date.now() - health).toBeLessThan(1_000);
  }, 300_000);

  it("is one account's share of the workers: another account's job runs at once while it crawls", async () => {
    const [crawler, other] = await Promise.all([account(), account()]);
    const created = await start(crawler, { url: `${sites.a}/`, limit: 1000, render: "never" });
    const until = Date.now() + 60_000;
    while ((await read(crawler, created.id)).body.counts.delivered < 5 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    const submitted = await postJson(
      "/api/v1/jobs",
      { endpoint: "html-to-screenshot", items: [{ html: "<h1>Mine</h1>", width: 320, deviceScaleFactor: 1 }] },
      auth(other),
    );
    const job = (await submitted.json()) as { id: string; created_at: string };
    let item: { status: string; started_at?: string } | undefined;
    while (Date.now() < until) {
      item = ((await (await fetch(`${base}/api/v1/jobs/${job.id}`, { headers: auth(other) })).json()) as { items: (typeof item)[] }).items[0];
      if (item?.status === "succeeded" || item?.status === "failed") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(item?.status).toBe("succeeded");
    // Started within seconds of its submission, while the crawl still ran.
    expect(Date.parse(item!.started_at!) - Date.parse(job.created_at)).toBeLessThan(5_000);
    expect((await read(crawler, created.id)).body.status).toBe("running");
    await fetch(`${base}/api/v1/crawl/${created.id}`, { method: "DELETE", headers: auth(crawler) });
    await ended(crawler, created.id);
  }, 120_000);

  it("limit 10 delivers and charges exactly 10; the rest of the hold goes back; its webhook says so once, signed", async () => {
    const key = await account();
    const secret = await secretOf(key);
    const before = await balance(key);
    const hook = `crawl-${Date.now()}`;
    const created = await start(key, { url: `${sites.a}/`, limit: 10, render: "never", webhookUrl: `${inject("fixtureUrl")}/hooks/in?id=${hook}` });
    const crawl = await ended(key, created.id);
    const { pages } = await allPages(key, created.id);
    const delivered = pages.filter((p) => p.status === "delivered");
    expect(delivered).toHaveLength(10);
    expect(crawl).toMatchObject({ status: "completed", charged_micro_usd: 10_000, counts: { delivered: 10 } });
    expect(delivered.every((p) => p.rendered === false && p.charged_micro_usd === 1_000)).toBe(true);
    // What was found and not fetched is listed as skipped for the limit.
    expect(pages.filter((p) => p.status === "skipped" && p.reason === "limit").length).toBeGreaterThan(0);
    expect(await balance(key)).toBe(before - 10_000);
    // crawl.completed, once its result can be downloaded: verified by the Standard Webhooks library with the account's secret.
    const until = Date.now() + 60_000;
    let received = await seen(hook);
    while (!received.length && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      received = await seen(hook);
    }
    expect(received).toHaveLength(1);
    const payload = new Webhook(secret).verify(received[0]!.body, received[0]!.headers) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({
      type: "crawl.completed",
      data: { crawl_id: created.id, status: "completed", counts: { delivered: 10, failed: 0 }, charged_micro_usd: 10_000 },
    });
    const after = (await read(key, created.id)).body as Crawl & {
      result_url?: string;
      webhook?: { url: string; deliveries: { type: string; status: string }[] };
    };
    expect(after.result_url).toBeDefined();
    expect(after.webhook).toMatchObject({ deliveries: [{ type: "crawl.completed", status: "delivered" }] });
    expect(await seen(hook)).toHaveLength(1);
  }, 120_000);

  it("maxAge: a page a crawl with maxAge delivered is delivered again from its copy, unasked, at $0.001; another account, another way of reading it or credentials ask the site", async () => {
    const key = await account();
    const mark = `copy-${Date.now()}-${counter++}`;
    const startUrl = `${sites.a}/?mark=${mark}`;
    const asked = async () => (await siteStats(sites.a)).hits.filter((hit) => hit.path === `/?mark=${mark}`).length;
    const once = { url: startUrl, depth: 0, source: "links", render: "never", limit: 1 };
    // Without maxAge, no copy is kept.
    await ended(key, (await start(key, once)).id);
    expect(await asked()).toBe(1);
    const first = await ended(key, (await start(key, { ...once, maxAge: 3600 })).id);
    expect(first.counts.delivered).toBe(1);
    expect(await asked()).toBe(2);
    // Again with maxAge, one hop deeper: the start from its copy (the site not asked), its links followed from the copy's.
    const before = await balance(key);
    const again = await ended(key, (await start(key, { ...once, depth: 1, limit: 3, maxAge: 3600 })).id);
    const { pages } = await allPages(key, again.id);
    const home = pages.find((p) => p.found_by === "start")! as Page & { copied_at?: string };
    expect(home).toMatchObject({ status: "delivered", charged_micro_usd: 1_000 });
    expect(Date.parse(home.copied_at!), JSON.stringify(home)).toBeLessThanOrEqual(Date.now());
    expect(pages.filter((p) => p.status === "delivered")).toHaveLength(3);
    expect(await asked()).toBe(2);
    expect(await balance(key)).toBe(before - again.charged_micro_usd);
    // The copy's output is the page's as first read, for this crawl's URL.
    const output = async (crawlId: string) => {
      const page = (await allPages(key, crawlId)).pages.find((p) => p.found_by === "start")!;
      return (await (await fetch(page.download_url!)).json()) as { url: string; markdown: string; copiedAt?: string };
    };
    const [was, now] = [await output(first.id), await output(again.id)];
    expect(now.markdown).toBe(was.markdown);
    expect(now.url).toBe(was.url);
    expect(now.copiedAt).toBe(home.copied_at);
    // Another account, other formats, or credentials sent: the site is asked.
    const other = await account();
    await ended(other, (await start(other, { ...once, maxAge: 3600 })).id);
    expect(await asked()).toBe(3);
    await ended(key, (await start(key, { ...once, maxAge: 3600, formats: ["text"] })).id);
    expect(await asked()).toBe(4);
    await ended(key, (await start(key, { ...once, maxAge: 3600, headers: { "x-crawl-run": mark } })).id);
    expect(await asked()).toBe(5);
    // The copy kept by that first crawl is still there for the way it read: asked no more.
    await ended(key, (await start(key, { ...once, maxAge: 3600 })).id);
    expect(await asked()).toBe(5);
    // A page a browser read ($0.002) is $0.001 from its copy: no browser, no request.
    const app = { url: `${sites.a}/app?mark=${mark}`, depth: 0, source: "links", limit: 1, maxAge: 3600 };
    const rendered = await ended(key, (await start(key, app)).id);
    expect(rendered.charged_micro_usd).toBe(2_000);
    const fromCopy = await ended(key, (await start(key, app)).id);
    expect(fromCopy.charged_micro_usd).toBe(1_000);
    const [appPage] = (await allPages(key, fromCopy.id)).pages as (Page & { copied_at?: string })[];
    expect(appPage).toMatchObject({ status: "delivered", rendered: true, charged_micro_usd: 1_000 });
    expect(appPage!.copied_at).toBeDefined();
    expect((await siteStats(sites.a)).hits.filter((hit) => hit.path === `/app?mark=${mark}`).length).toBe(2);
  }, 180_000);

  it("honours Crawl-delay: a second between the requests to a site that asks it", async () => {
    const key = await account();
    const run = `delay-${Date.now()}`;
    const created = await start(key, { url: `${sites.b}/`, limit: 10, headers: { "x-crawl-run": run } });
    const crawl = await ended(key, created.id);
    expect(crawl.counts.delivered).toBe(6);
    // Its page requests (other files crawl this site too, as other accounts, at their own pace).
    const pages = (await siteStats(sites.b, run)).hits;
    expect(pages.length).toBeGreaterThanOrEqual(6);
    for (let i = 1; i < pages.length; i++) expect(pages[i]!.at - pages[i - 1]!.at, pages[i]!.path).toBeGreaterThanOrEqual(1_000);
  }, 120_000);

  it("cancelled, stops within seconds and charges only what it delivered; another account sees nothing of it", async () => {
    const key = await account();
    const before = await balance(key);
    const created = await start(key, { url: `${sites.a}/`, limit: 1000, render: "never" });
    // Let it deliver a few pages, then cancel.
    const until = Date.now() + 60_000;
    while ((await read(key, created.id)).body.counts.delivered < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 200));
    const cancel = await fetch(`${base}/api/v1/crawl/${created.id}`, { method: "DELETE", headers: auth(key) });
    expect(cancel.status).toBe(200);
    const asked = Date.now();
    const crawl = await ended(key, created.id, 30_000);
    expect(Date.now() - asked).toBeLessThan(15_000);
    expect(crawl.status).toBe("cancelled");
    const { pages } = await allPages(key, created.id);
    const delivered = pages.filter((p) => p.status === "delivered");
    expect(delivered.length).toBeLessThan(100);
    expect(crawl.charged_micro_usd).toBe(delivered.reduce((sum, p) => sum + (p.charged_micro_usd ?? 0), 0));
    expect(await balance(key)).toBe(before - crawl.charged_micro_usd);
    expect(pages.filter((p) => p.status === "queued" || p.status === "running")).toEqual([]);
    // Another account: as if it did not exist.
    const other = await account(1);
    for (const res of [
      await fetch(`${base}/api/v1/crawl/${created.id}`, { headers: auth(other) }),
      await fetch(`${base}/api/v1/crawl/${created.id}`, { method: "DELETE", headers: auth(other) }),
    ])
      expect(res.status).toBe(404);
    expect(((await (await fetch(`${base}/api/v1/crawl`, { headers: auth(other) })).json()) as { crawls: unknown[] }).crawls).toEqual([]);
    const mine = ((await (await fetch(`${base}/api/v1/crawl`, { headers: auth(key) })).json()) as { crawls: { id: string; status: string }[] }).crawls;
    expect(mine).toEqual([expect.objectContaining({ id: created.id, status: "cancelled" })]);
  }, 120_000);

  it(`runs ${MAX_RUNNING} crawls of an account at once: one more is 429, holding nothing, until one ends`, async () => {
    const key = await account(50);
    const ids: string[] = [];
    // Site B asks a second between requests: these run for a while.
    for (let i = 0; i < MAX_RUNNING; i++)
      ids.push((await start(key, { url: `${sites.b}/`, limit: 1000, render: "never", headers: { "x-crawl-run": `many-${i}-${Date.now()}` } })).id);
    const before = await balance(key);
    const refused = await postJson("/api/v1/crawl", { url: `${sites.b}/`, limit: 1 }, auth(key));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as ErrorBody).error.message).toMatch(new RegExp(`at most ${MAX_RUNNING} crawls running`));
    expect(await balance(key)).toBe(before);
    for (const id of ids) await fetch(`${base}/api/v1/crawl/${id}`, { method: "DELETE", headers: auth(key) });
    for (const id of ids) await ended(key, id, 60_000);
    expect((await postJson("/api/v1/crawl", { url: `${sites.b}/`, limit: 1, render: "never" }, auth(key))).status).toBe(202);
  }, 180_000);

  it("refuses bad input, a private start and a balance that cannot hold the limit, holding nothing", async () => {
    const key = await account(1);
    const before = await balance(key);
    for (const [body, status, code] of [
      [{ url: "ftp://example.com/" }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, limit: 0 }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, limit: 10_001 }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, formats: ["pdf"] }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, formats: ["text", "text"] }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, userAgent: "Googlebot" }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, render: "never", js: "1" }, 400, "INVALID_PARAMS"],
      // A webhook: none without the account's secret to sign with, none with a password, none to a private address.
      [{ url: `${sites.a}/`, webhookUrl: `${inject("fixtureUrl")}/hooks/in?id=nope` }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, webhookUrl: "https://user:pw@example.com/hook" }, 400, "INVALID_PARAMS"],
      [{ url: `${sites.a}/`, webhookUrl: "http://169.254.169.254/hook" }, 400, "INVALID_PARAMS"],
      [{ url: "http://169.254.169.254/latest/" }, 400, "INVALID_PARAMS"],
      [{ url: `${inject("canaryUrl")}/` }, 400, "INVALID_PARAMS"],
      // More than 100 KB of request (it is kept in the crawl's row).
      [{ url: `${sites.a}/`, include: Array.from({ length: 50 }, (_, i) => `${sites.a}/${"x".repeat(2000)}${i}/**`) }, 400, "INVALID_PARAMS"],
      // A crawl reads from the service's own address: no proxy.
      [{ url: `${sites.a}/`, proxy: "http://127.0.0.1:9/" }, 400, "INVALID_PARAMS"],
      // About $1 (and the signup bonus) cannot hold 5,000 pages ($10).
      [{ url: `${sites.a}/`, limit: 5_000 }, 402, "INSUFFICIENT_BALANCE"],
    ] as const) {
      const res = await postJson("/api/v1/crawl", body, auth(key));
      const answer = (await res.json()) as ErrorBody;
      expect([res.status, answer.error?.code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(await balance(key)).toBe(before);
    expect(await canaryHits()).toEqual([]);
  });
});
