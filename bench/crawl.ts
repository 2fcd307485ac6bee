import http from "node:http";
import type { AddressInfo } from "node:net";
import { CheerioCrawler, Configuration } from "@crawlee/cheerio";
import { corpusArticles } from "../dev/harness/crawl-site.js";

// Crawls in `npm run bench`, measured in the same run:
//   crawl_vs_crawlee  pages a second of a crawl of a 501-page static site on loopback (a home page, 20
//                     sections, 24 articles each: the article bodies of bench/corpus/) with
//                     render: "never", from submitting it to its finished_at, over Crawlee's
//                     CheerioCrawler on the same site, reading each page's main text and enqueuing
//                     its links, with the same two requests in flight per host; goal >= 0.8
//   auto_pages_per_second  pages a second of a crawl of a 50-page site under render: "auto" (5 of its
//                     pages built by their scripts: a browser reads those)
// Each site answers after SITE_DELAY_MS, as a real server takes a moment. Each side runs unmeasured
// first, then twice measured (alternating), and its best run counts.

const SECTIONS = 20;
const PER_SECTION = 24;
const SITE_DELAY_MS = 20;
const HOST_IN_FLIGHT = 2;

/** A static site of `sections` x `perSection` articles (the last `scripted` of them built by a script) on loopback. */
async function site(sections: number, perSection: number, scripted = 0) {
  const articles = corpusArticles();
  const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const page = (title: string, body: string) =>
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><nav><a href="/">Home</a></nav><main>${body}</main></body></html>`;
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    let status = 200;
    let body: string;
    const article = /^\/a\/(\d+)-(\d+)$/.exec(path);
    const section = /^\/s\/(\d+)$/.exec(path);
    if (path === "/") body = page("Home", Array.from({ length: sections }, (_, i) => `<a href="/s/${i + 1}">Section ${i + 1}</a>`).join(" "));
    else if (section) {
      const s = Number(section[1]);
      body = page(`Section ${s}`, Array.from({ length: perSection }, (_, i) => `<a href="/a/${s}-${i + 1}">Article ${i + 1}</a>`).join(" "));
    } else if (article) {
      const n = (Number(article[1]) - 1) * perSection + Number(article[2]);
      const { title, paragraphs } = articles[n % articles.length]!;
      const text = `<article><h1>${escapeHtml(title)}</h1><p>Article ${n}.</p>${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}</article>`;
      body =
        n > sections * perSection - scripted
          ? page(title, `<div id="root"></div><script>document.getElementById("root").innerHTML = ${JSON.stringify(text)};</script>`)
          : page(title, text);
    } else {
      status = 404;
      body = page("Not found", "<p>Not found.</p>");
    }
    setTimeout(() => response.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(body), SITE_DELAY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, pages: 1 + sections + sections * perSection, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Pages a second of a crawl of `origin` through the service, from submitting it to its end. */
async function ours(serviceUrl: string, apiKey: string, origin: string, render: "never" | "auto"): Promise<{ pps: number; delivered: number }> {
  const headers = { "content-type": "application/json", authorization: `Bearer ${apiKey}` };
  const res = await fetch(`${serviceUrl}/api/v1/crawl`, {
    method: "POST",
    headers,
    body: JSON.stringify({ url: `${origin}/`, limit: 1000, render, source: "links" }),
  });
  const { id, created_at: createdAt } = (await res.json()) as { id: string; created_at: string };
  for (;;) {
    const crawl = (await (await fetch(`${serviceUrl}/api/v1/crawl/${id}?limit=1`, { headers })).json()) as {
      status: string;
      finished_at?: string;
      counts: { delivered: number };
    };
    if (crawl.status !== "running")
      return { pps: crawl.counts.delivered / ((Date.parse(crawl.finished_at!) - Date.parse(createdAt)) / 1000), delivered: crawl.counts.delivered };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Pages a second of Crawlee's CheerioCrawler on `origin`, two at a time, reading each page's main text. */
async function crawlee(origin: string): Promise<{ pps: number; delivered: number }> {
  let delivered = 0;
  const crawler = new CheerioCrawler(
    {
      maxConcurrency: HOST_IN_FLIGHT,
      maxRequestsPerCrawl: 1000,
      async requestHandler({ $, enqueueLinks }) {
        if ($("main").text().length >= 0) delivered++;
        await enqueueLinks({ strategy: "same-origin" });
      },
    },
    new Configuration({ persistStorage: false, logLevel: 0 as never }),
  );
  const started = performance.now();
  await crawler.run([`${origin}/`]);
  return { pps: delivered / ((performance.now() - started) / 1000), delivered };
}

/** The bench's two sites, started before the local stack (which must be let through to them: `hosts`). */
export async function crawlBenchSites() {
  const big = await site(SECTIONS, PER_SECTION);
  const small = await site(7, 6, 5);
  return { big, small, hosts: [big.origin, small.origin].map((origin) => new URL(origin).host) };
}

export async function benchCrawl(options: { serviceUrl: string; apiKey: string; sites: Awaited<ReturnType<typeof crawlBenchSites>> }) {
  const { big, small } = options.sites;
  try {
    // Unmeasured first: Crawlee once, ours twice (Node's JIT, and that of DynamoDB Local's JVM, which
    // takes some thousands of calls to reach its pace; AWS's DynamoDB has no such start). Then
    // Crawlee, ours, and both again: the machine's noise falls on both.
    await crawlee(big.origin);
    for (let warm = 0; warm < 2; warm++) await ours(options.serviceUrl, options.apiKey, big.origin, "never");
    const peer = [await crawlee(big.origin)];
    const mine = [await ours(options.serviceUrl, options.apiKey, big.origin, "never")];
    peer.push(await crawlee(big.origin));
    mine.push(await ours(options.serviceUrl, options.apiKey, big.origin, "never"));
    for (const run of [...peer, ...mine]) if (run.delivered !== big.pages) throw new Error(`a crawl delivered ${run.delivered} of ${big.pages} pages`);
    const best = (runs: { pps: number }[]) => Math.max(...runs.map((run) => run.pps));
    const auto = await ours(options.serviceUrl, options.apiKey, small.origin, "auto");
    return {
      ratios: { crawl_vs_crawlee: Number((best(mine) / best(peer)).toFixed(2)) },
      results: {
        ours_pages_per_second: Number(best(mine).toFixed(1)),
        crawlee_pages_per_second: Number(best(peer).toFixed(1)),
        pages: big.pages,
        auto_pages_per_second: Number(auto.pps.toFixed(1)),
        auto_pages: auto.delivered,
      },
    };
  } finally {
    await big.close();
    await small.close();
  }
}
