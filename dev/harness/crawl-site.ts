import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";

// Two sites on loopback for the crawler's tests and benchmark (docs/crawl.md). Site A: 100 articles
// in a tree of 10 topics, their text the article bodies of Zyte's article extraction benchmark (real
// prose, bench/corpus/), with 5 orphans listed only in its sitemaps (an index, one gzipped), a
// disallowed /private/, a calendar that links to next month for ever, session-id links, a
// canonical duplicate, a page its script builds, a page that answers 429 with Retry-After 2 once,
// a redirect to the canary, a link to another origin (site B), and sitemaps that are a gzip bomb
// and a billion-laughs file. Site B: robots.txt asks Crawl-delay: 1. Each site records every
// request (path, time, User-Agent, the x-crawl-run header a test's crawl sends) and the most it had
// in flight at once for each run: GET /__stats?run=.

const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../bench/corpus/article-extraction-benchmark/ground-truth.json");

/** An article of the corpus: its title (its first words) and its paragraphs. */
interface Article {
  readonly title: string;
  readonly paragraphs: readonly string[];
}

/** The corpus's articles with at least 3 paragraphs of text, in the order of their ids. */
export function corpusArticles(): Article[] {
  const truth = JSON.parse(readFileSync(CORPUS, "utf8")) as Record<string, { articleBody: string }>;
  return Object.keys(truth)
    .sort()
    .map((id) =>
      truth[id]!.articleBody.split(/\n+/)
        .map((p) => p.trim())
        .filter((p) => p.length > 40),
    )
    .filter((paragraphs) => paragraphs.length >= 3)
    .map((paragraphs) => ({ title: paragraphs[0]!.split(/\s+/).slice(0, 8).join(" "), paragraphs }));
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const page = (title: string, body: string, head = "") =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>${head}</head><body><nav><a href="/">Home</a></nav>${body}<footer><p>A test site of Shotline's crawler.</p></footer></body></html>`;

const articleBody = (article: Article, links = "") =>
  `<main><article><h1>${escapeHtml(article.title)}</h1>${article.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}</article>${links}</main>`;

const urlset = (locs: readonly string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((loc) => `<url><loc>${loc}</loc><lastmod>2026-11-01</lastmod></url>`).join("")}</urlset>`;

/** A sitemap that inflates to 8 GB of spaces from 8 MB of gzip members. */
const gzipBomb = () => {
  const megabyte = zlib.gzipSync(Buffer.alloc(1024 * 1024, 0x20), { level: 9 });
  return Buffer.concat([
    zlib.gzipSync(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`),
    ...Array.from({ length: 8 * 1024 }, () => megabyte),
    zlib.gzipSync("</urlset>"),
  ]);
};

const LAUGHS = `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`).join("")}]><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/&lol9;</loc></url></urlset>`;

/** A request a site saw. */
interface Hit {
  readonly path: string;
  readonly at: number;
  readonly userAgent: string;
  /** The x-crawl-run header it carried ("" when none). */
  readonly run: string;
}

export interface CrawlSites {
  /** Site A's origin, e.g. http://127.0.0.1:41000 */
  readonly a: string;
  /** Site B's origin (Crawl-delay: 1). */
  readonly b: string;
  close(): Promise<void>;
}

/** What GET /__stats answers. */
export interface SiteStats {
  readonly hits: Hit[];
  readonly maxInFlight: number;
}

/** Topics of site A, and articles in each. */
export const TOPICS = 10;
export const PER_TOPIC = 10;
export const ORPHANS = 5;

/** Starts both sites on 127.0.0.1; `canaryUrl` is where /moved redirects (a private address the guard refuses). */
export async function startCrawlSites(canaryUrl: string, delayMs = 20): Promise<CrawlSites> {
  const articles = corpusArticles();
  const article = (topic: number, n: number) => articles[((topic - 1) * PER_TOPIC + (n - 1)) % articles.length]!;
  const orphan = (k: number) => articles[(TOPICS * PER_TOPIC + k - 1) % articles.length]!;
  const bomb = gzipBomb();

  const serve = (origin: () => string, route: (pathname: string, url: URL, run: string) => [number, Record<string, string>, string | Buffer]) => {
    const hits: Hit[] = [];
    const inFlight = new Map<string, number>();
    const most = new Map<string, number>();
    const server = http.createServer((request, response) => {
      const url = new URL(request.url ?? "/", origin());
      if (url.pathname === "/__stats") {
        const run = url.searchParams.get("run");
        const stats: SiteStats = { hits: run === null ? hits : hits.filter((hit) => hit.run === run), maxInFlight: most.get(run ?? "") ?? 0 };
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
        return;
      }
      // A test names its crawl with a header its page requests carry (page controls): its own counts, however many crawl at once.
      const run = String(request.headers["x-crawl-run"] ?? "");
      hits.push({ path: `${url.pathname}${url.search}`, at: Date.now(), userAgent: String(request.headers["user-agent"] ?? ""), run });
      inFlight.set(run, (inFlight.get(run) ?? 0) + 1);
      most.set(run, Math.max(most.get(run) ?? 0, inFlight.get(run)!));
      // Each answer takes a moment, so that requests in flight at once are seen.
      setTimeout(() => {
        const [status, headers, body] = route(url.pathname, url, run);
        response.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers }).end(body);
        inFlight.set(run, inFlight.get(run)! - 1);
      }, delayMs);
    });
    return server;
  };

  let aOrigin = "";
  let bOrigin = "";
  const busyServed = new Set<string>();
  const html = (body: string): [number, Record<string, string>, string] => [200, {}, body];
  const a = serve(
    () => aOrigin,
    (pathname, url, run) => {
      if (pathname === "/robots.txt")
        return [
          200,
          { "content-type": "text/plain" },
          `User-agent: *\nDisallow: /private/\n\nSitemap: ${aOrigin}/sitemaps/index.xml\nSitemap: ${aOrigin}/sitemaps/bomb.xml.gz\nSitemap: ${aOrigin}/sitemaps/laughs.xml\n`,
        ];
      if (pathname === "/sitemaps/index.xml")
        return [
          200,
          { "content-type": "application/xml" },
          `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${aOrigin}/sitemaps/articles.xml</loc></sitemap><sitemap><loc>${aOrigin}/sitemaps/orphans.xml.gz</loc></sitemap></sitemapindex>`,
        ];
      if (pathname === "/sitemaps/articles.xml")
        return [200, { "content-type": "application/xml" }, urlset(Array.from({ length: PER_TOPIC }, (_, i) => `${aOrigin}/articles/1-${i + 1}`))];
      if (pathname === "/sitemaps/orphans.xml.gz")
        return [200, { "content-type": "application/gzip" }, zlib.gzipSync(urlset(Array.from({ length: ORPHANS }, (_, i) => `${aOrigin}/orphans/${i + 1}`)))];
      if (pathname === "/sitemaps/bomb.xml.gz") return [200, { "content-type": "application/gzip" }, bomb];
      if (pathname === "/sitemaps/laughs.xml") return [200, { "content-type": "application/xml" }, LAUGHS];
      if (pathname === "/")
        return html(
          page(
            "Site A",
            `<main><h1>Site A</h1><ul>${Array.from({ length: TOPICS }, (_, i) => `<li><a href="/topics/${i + 1}">Topic ${i + 1}</a></li>`).join("")}</ul>
            <p><a href="/calendar?month=2026-11">Events</a> <a href="/session">Members</a> <a href="/private/secret">Staff</a>
            <a href="/duplicate">Reprint</a> <a href="/app">App</a> <a href="/busy">Busy</a> <a href="/moved">Moved</a>
            <a href="${bOrigin}/">Site B</a> <a href="/articles/1-1#comments">Comments</a> <a href="mailto:editor@example.com">Mail</a></p></main>`,
          ),
        );
      let match = /^\/topics\/(\d+)$/.exec(pathname);
      if (match) {
        const topic = Number(match[1]);
        const links = Array.from(
          { length: PER_TOPIC },
          (_, i) => `<li><a href="/articles/${topic}-${i + 1}">${escapeHtml(article(topic, i + 1).title)}</a></li>`,
        );
        return html(page(`Topic ${topic}`, `<main><h1>Topic ${topic}</h1><ul>${links.join("")}</ul><a href="/?utm_source=topic">Back</a></main>`));
      }
      match = /^\/articles\/(\d+)-(\d+)$/.exec(pathname);
      if (match && Number(match[1]) <= TOPICS && Number(match[2]) <= PER_TOPIC) {
        const [topic, n] = [Number(match[1]), Number(match[2])];
        const next = n < PER_TOPIC ? `<a href="/articles/${topic}-${n + 1}">Next</a>` : "";
        return html(page(article(topic, n).title, articleBody(article(topic, n), `<p><a href="/topics/${topic}">Topic ${topic}</a> ${next}</p>`)));
      }
      match = /^\/orphans\/(\d+)$/.exec(pathname);
      if (match && Number(match[1]) <= ORPHANS) return html(page(orphan(Number(match[1])).title, articleBody(orphan(Number(match[1])))));
      if (pathname === "/calendar") {
        const [year, month] = (url.searchParams.get("month") ?? "2026-11").split("-").map(Number) as [number, number];
        const next = month === 12 ? `${year + 1}-01` : `${year}-${String(month + 1).padStart(2, "0")}`;
        return html(
          page(`Events ${year}-${month}`, `<main><h1>Events in ${year}-${month}</h1><p>No events.</p><a href="/calendar?month=${next}">Next month</a></main>`),
        );
      }
      if (pathname === "/session" || pathname === "/session/page") {
        const visit = Math.random().toString(36).slice(2);
        return html(
          page(
            "Members",
            `<main><h1>Members</h1><p>Sign in to see the members' pages.</p><a href="/session/page?sid=${visit}">Members' page</a> <a href="/session/page?visit=${visit}">Your visit</a></main>`,
          ),
        );
      }
      if (pathname === "/duplicate")
        return html(page(article(1, 1).title, articleBody(article(1, 1)), `<link rel="canonical" href="${aOrigin}/articles/1-1">`));
      if (pathname === "/app")
        return html(
          page(
            "App",
            `<div id="root"></div><script>document.getElementById("root").innerHTML = "<main><article><h1>Built by its script</h1><p>${escapeHtml(article(2, 1).paragraphs.join(" "))}</p></article></main>";</script>`,
          ),
        );
      if (pathname === "/busy") {
        if (!busyServed.has(run)) {
          busyServed.add(run);
          return [429, { "retry-after": "2" }, "Too many requests"];
        }
        return html(page(article(3, 1).title, articleBody(article(3, 1))));
      }
      if (pathname === "/moved") return [302, { location: `${canaryUrl}/stolen` }, ""];
      if (pathname.startsWith("/private/")) return html(page("Staff only", "<main><p>Secret staff notes.</p></main>"));
      return [404, {}, page("Not found", "<main><p>Not found.</p></main>")];
    },
  );
  const b = serve(
    () => bOrigin,
    (pathname) => {
      if (pathname === "/robots.txt") return [200, { "content-type": "text/plain" }, "User-agent: *\nCrawl-delay: 1\n"];
      if (pathname === "/")
        return html(page("Site B", `<main><h1>Site B</h1>${Array.from({ length: 5 }, (_, i) => `<a href="/b/${i + 1}">Page ${i + 1}</a>`).join(" ")}</main>`));
      const match = /^\/b\/(\d)$/.exec(pathname);
      if (match && Number(match[1]) <= 5) return html(page(`B ${match[1]}`, articleBody(articles[50 + Number(match[1])]!)));
      return [404, {}, "Not found"];
    },
  );
  const listen = (server: http.Server) =>
    new Promise<string>((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  aOrigin = await listen(a);
  bOrigin = await listen(b);
  return {
    a: aOrigin,
    b: bOrigin,
    close: async () => {
      for (const server of [a, b]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

/** A site's stats (GET /__stats): every request, or those of the crawl that sent `run` as its x-crawl-run header. */
export const siteStats = async (origin: string, run?: string): Promise<SiteStats> =>
  (await (await fetch(`${origin}/__stats${run === undefined ? "" : `?run=${encodeURIComponent(run)}`}`)).json()) as SiteStats;
