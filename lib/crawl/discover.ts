import { GetObjectCommand } from "@aws-sdk/client-s3";
import { config } from "../config.js";
import { putObject } from "../jobs/requests.js";
import { recall, remember } from "../lru.js";
import { JOBS_PREFIX } from "../packaging.js";
import { s3 } from "../storage/s3.js";
import { fetchRobots, type Robots, type RobotsFile, robotsOf } from "./robots.js";
import { readSitemap } from "./sitemaps.js";
import type { Crawl, Found, SkipReason } from "./store.js";
import { normalizeUrl, patternOf, scopeTest, trapOf } from "./urls.js";

// How a crawl finds its pages (docs/crawl.md, "Crawl"): its start's sitemaps, then each page's
// links, each URL judged before it is recorded (in scope, not a trap's shape, allowed by robots.txt,
// changed since `modifiedSince`), and a host's robots.txt fetched once per crawl (kept with it in
// the bucket, and remembered by a warm worker).

/** Sitemap files a crawl reads at most. */
const CRAWL_SITEMAP_FILES = 50;
/** Pages of one shape in a row that find nothing of another shape before the next of that shape is a trap (a calendar's next month). */
const BARREN_CHAIN = 5;
/** URLs a crawl records at most: enough for its limit many times over, and no more (a site of a million links costs this many writes). */
export const maxFound = (limit: number) => Math.min(100_000, limit * 20 + 1_000);

/** A crawl's request as discovery reads it. */
export type CrawlScope = Pick<Crawl, "id"> & {
  readonly request: {
    url: string;
    subdomains: boolean;
    include: readonly string[];
    exclude: readonly string[];
    modifiedSince?: string;
    depth: number;
    source: string;
  };
};

const robotsSeen = new Map<string, Robots>();
const robotsKey = (crawlId: string, origin: string) => `${JOBS_PREFIX}${crawlId}/robots/${encodeURIComponent(origin)}.json`;

/** The robots.txt of `origin` for crawl `crawlId`: remembered, or as the crawl kept it, or fetched now (and kept). */
export async function robotsFor(crawlId: string, origin: string, signal: AbortSignal): Promise<Robots> {
  const memo = `${crawlId} ${origin}`;
  const known = recall(robotsSeen, memo);
  if (known) return known;
  let file: RobotsFile;
  try {
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: robotsKey(crawlId, origin) }));
    file = JSON.parse(await Body!.transformToString("utf8")) as RobotsFile;
  } catch (error) {
    if ((error as { name?: string }).name !== "NoSuchKey") throw error;
    file = await fetchRobots(origin, signal);
    await putObject(robotsKey(crawlId, origin), JSON.stringify(file), "application/json");
  }
  return remember(robotsSeen, memo, robotsOf(origin, file), 64);
}

/**
 * What becomes of `href`, found at `depth` by `foundBy`: its Found, judged (out of scope, a trap's
 * shape, disallowed by `robots` when on its origin, older than modifiedSince), or null when it is
 * not an http(s) URL.
 */
function judge(
  crawl: CrawlScope,
  inScope: (url: string) => boolean,
  robots: { origin: string; rules: Robots } | null,
  href: string,
  found: Omit<Found, "url" | "pattern" | "skip">,
): Found | null {
  const url = normalizeUrl(href);
  if (url === null) return null;
  const since = crawl.request.modifiedSince;
  let skip: SkipReason | undefined;
  if (!inScope(url)) skip = "scope";
  else if (trapOf(url)) skip = "trap";
  else if (robots && new URL(url).origin === robots.origin && !robots.rules.allows(url)) skip = "robots";
  else if (since && found.lastmod && Date.parse(found.lastmod) < Date.parse(since)) skip = "unchanged";
  return { url, pattern: patternOf(url), ...found, ...(skip ? { skip } : {}) };
}

/**
 * Where a page that redirects to `href` on another origin of its scope leads: a page of its own, at
 * the redirecting page's depth and as it was found (a start's, as a link), read in its host's turn under its own origin's
 * robots.txt (none of which the redirect could wait for); null when `href` is on the page's own
 * origin, out of scope, or not a page the crawl may read (a trap's shape).
 */
export function redirectTarget(crawl: CrawlScope, page: Pick<Found, "url" | "depth" | "foundBy" | "barren">, href: string): Found | null {
  const target = normalizeUrl(href, page.url);
  if (target === null || new URL(target).origin === new URL(page.url).origin) return null;
  // The start's sitemaps were read before it was fetched: its target is not read as a start again.
  const foundBy = page.foundBy === "start" ? "link" : page.foundBy;
  const found = judge(crawl, scopeOf(crawl), null, target, { depth: page.depth, foundBy, barren: page.barren });
  return found && !found.skip ? found : null;
}

/** The scope test of a crawl's request. */
export const scopeOf = (crawl: CrawlScope) =>
  scopeTest({ start: crawl.request.url, subdomains: crawl.request.subdomains, include: crawl.request.include, exclude: crawl.request.exclude });

/**
 * The pages a crawl's start finds in its sitemaps (robots.txt's on its site, then /sitemap.xml;
 * indexes followed), one hop from the start, at most `room`, within `signal`, each request after
 * `paced` (its host's turn).
 */
export async function sitemapPages(crawl: CrawlScope, robots: Robots, room: number, signal: AbortSignal, paced: () => Promise<void>): Promise<Found[]> {
  const { origin } = new URL(crawl.request.url);
  const inScope = scopeOf(crawl);
  const site = scopeTest({ start: crawl.request.url, subdomains: crawl.request.subdomains, include: [], exclude: [] });
  const listed = new Set(robots.sitemaps.map((url) => normalizeUrl(url)).filter((url): url is string => url !== null && site(url)));
  const queue = [...new Set([...listed, `${origin}/sitemap.xml`])];
  const queued = new Set(queue);
  const read = new Set<string>();
  const found = new Map<string, Found>();
  while (queue.length && read.size < CRAWL_SITEMAP_FILES && found.size < room && !signal.aborted) {
    const next = queue.shift()!;
    read.add(next);
    if (!listed.has(next) && !robots.allows(next)) continue;
    try {
      await paced();
      const sitemap = await readSitemap(next, signal, room - found.size);
      for (const entry of sitemap.entries) {
        if (sitemap.kind === "index") {
          const child = normalizeUrl(entry.loc);
          if (child && site(child) && !queued.has(child)) {
            queued.add(child);
            queue.push(child);
          }
          continue;
        }
        const page = judge(crawl, inScope, { origin, rules: robots }, entry.loc, {
          depth: 1,
          foundBy: "sitemap",
          barren: 0,
          ...(entry.lastmod ? { lastmod: entry.lastmod } : {}),
        });
        if (page && !found.has(page.url)) found.set(page.url, page);
      }
    } catch (error) {
      if (signal.aborted) break;
      // A sitemap that cannot be read is left out (the usual /sitemap.xml 404 among them).
      void error;
    }
  }
  return [...found.values()];
}

/**
 * The links of a page at `depth` (shape `pattern`, `barren` pages of its shape in a row before it)
 * as what it found, in two groups: links of other shapes first, then those of its own shape, whose
 * chain grows when the first group brought nothing new (`othersNew`: decided by the caller once
 * the first group is recorded) and is a trap past BARREN_CHAIN.
 */
export function linkPages(
  crawl: CrawlScope,
  robots: { origin: string; rules: Robots },
  page: { readonly depth: number; readonly pattern: string; readonly barren: number },
  links: readonly string[],
): { others: Found[]; same: (othersNew: boolean) => Found[] } {
  const inScope = scopeOf(crawl);
  const depth = page.depth + 1;
  const judged = links.map((link) => judge(crawl, inScope, robots, link, { depth, foundBy: "link", barren: 0 })).filter((f): f is Found => f !== null);
  return {
    others: judged.filter((f) => f.pattern !== page.pattern),
    same: (othersNew) =>
      judged
        .filter((f) => f.pattern === page.pattern)
        .map((f) => {
          const barren = othersNew ? 0 : page.barren + 1;
          return { ...f, barren, ...(f.skip ? {} : barren > BARREN_CHAIN ? { skip: "trap" as const } : {}) };
        }),
  };
}
