import type { Deadline } from "../deadline.js";
import { AppError } from "../errors.js";
import { decoderFor, PRESCAN_BYTES, sniffEncoding } from "../metadata/parse.js";
import { crawlFetch } from "./fetch.js";
import { linksOf } from "./links.js";
import { fetchRobots, type Robots, robotsOf } from "./robots.js";
import { readSitemap } from "./sitemaps.js";
import { normalizeUrl, type Scope, scopeTest, trapOf } from "./urls.js";

// POST /api/v1/map (docs/crawl.md, "Map"): a site's URLs in seconds, without reading its pages'
// content: its sitemaps (those robots.txt names and /sitemap.xml, indexes followed), then the links
// of its start page and of a few pages it links to, each URL normalised, in scope, allowed by
// robots.txt and not a trap's shape. Every request goes as the crawler's does (lib/crawl/fetch.ts).

/** Sitemap files a map reads at most (indexes and the files they list). */
const MAP_SITEMAP_FILES = 20;
/** Pages whose links a map reads: the start page and up to this many more it links to. */
const MAP_PAGES = 5;
/** HTML bytes of a page read for its links. */
const PAGE_BYTES = 2 * 1024 * 1024;
/** Time kept at the end of a map to answer with what it found. */
const ANSWER_RESERVE_MS = 1_500;
/** robots.txt has this long at most. */
const ROBOTS_MS = 8_000;

export interface MapRequest extends Omit<Scope, "start"> {
  readonly url: string;
  readonly limit: number;
}

interface MappedUrl {
  readonly url: string;
  /** Where it was found. */
  readonly source: "start" | "sitemap" | "link";
  /** A sitemap's <lastmod>, as written. */
  readonly lastmod?: string;
}

export interface MapAnswer {
  readonly url: string;
  readonly urls: MappedUrl[];
  /** URLs found but left out, by why. */
  readonly skipped: { robots: number; scope: number; trap: number };
  /** The sitemaps read, with how many entries each gave and why one stopped early. */
  readonly sitemaps: { url: string; entries: number; stopped?: string }[];
  /** What robots.txt asked: seconds between requests, and whether it was found. */
  readonly robots: { readonly found: boolean; readonly crawlDelay: number };
  /** Set when time ran out before everything was read. */
  readonly incomplete?: true;
}

/** The URLs of the site at `request.url`, as found by `deadline`. */
export async function mapSite(request: MapRequest, deadline: Deadline): Promise<MapAnswer> {
  const start = normalizeUrl(request.url);
  if (start === null) throw new AppError("INVALID_PARAMS", "url must be an http:// or https:// URL.");
  const { origin } = new URL(start);
  const until = deadline.at - ANSWER_RESERVE_MS;
  const signalUntil = (at: number) => AbortSignal.any([deadline.signal, AbortSignal.timeout(Math.max(0, at - Date.now()))]);
  const file = await fetchRobots(origin, signalUntil(Math.min(until, Date.now() + ROBOTS_MS)));
  const robots = robotsOf(origin, file);
  if (robots.closed) throw new AppError("INVALID_URL", `The site cannot be mapped: ${robots.closed}, so the crawler reads nothing from it (RFC 9309).`);
  const found = new Map<string, MappedUrl>();
  const skipped = { robots: 0, scope: 0, trap: 0 };
  const inScope = scopeTest({ start, subdomains: request.subdomains, include: request.include, exclude: request.exclude });
  const full = () => found.size >= request.limit;
  let incomplete = false;
  const add = (href: string, source: MappedUrl["source"], lastmod?: string) => {
    const url = normalizeUrl(href);
    if (url === null || found.has(url) || full()) return;
    if (!inScope(url)) skipped.scope++;
    else if (trapOf(url)) skipped.trap++;
    else if (!allows(robots, origin, url)) skipped.robots++;
    else found.set(url, { url, source, ...(lastmod ? { lastmod } : {}) });
  };
  add(start, "start");

  // Sitemaps: those robots.txt names on this site, then /sitemap.xml; indexes read breadth first.
  const site = scopeTest({ start, subdomains: request.subdomains, include: [], exclude: [] });
  const listed = new Set(robots.sitemaps.map((url) => normalizeUrl(url)).filter((url): url is string => url !== null && site(url)));
  const queue = [...new Set([...listed, `${origin}/sitemap.xml`])];
  const queued = new Set(queue);
  const sitemaps: MapAnswer["sitemaps"] = [];
  for (let next = queue.shift(); next !== undefined && sitemaps.length < MAP_SITEMAP_FILES && !full(); next = queue.shift()) {
    if (Date.now() >= until) {
      incomplete = true;
      break;
    }
    if (!listed.has(next) && !allows(robots, origin, next)) continue;
    try {
      const read = await readSitemap(next, signalUntil(until), request.limit - found.size);
      sitemaps.push({ url: next, entries: read.entries.length, ...(read.stopped ? { stopped: read.stopped } : {}) });
      for (const entry of read.entries) {
        if (read.kind === "index") {
          const child = normalizeUrl(entry.loc);
          if (child && site(child) && !queued.has(child)) {
            queued.add(child);
            queue.push(child);
          }
        } else add(entry.loc, "sitemap", entry.lastmod);
      }
    } catch (error) {
      if (deadline.signal.aborted) throw error;
      if (Date.now() >= until) incomplete = true;
      // A sitemap that is not there (the usual /sitemap.xml 404) is not one: it is left out.
      else if (listed.has(next)) sitemaps.push({ url: next, entries: 0, stopped: error instanceof AppError ? error.message : "it could not be read" });
    }
  }

  // The links of the start page, then of the first pages it links to, one at a time with robots.txt's delay between them.
  const pages = [start];
  for (let index = 0; index < pages.length && index <= MAP_PAGES && !full(); index++) {
    if (Date.now() >= until) {
      incomplete = true;
      break;
    }
    if (index > 0 && robots.crawlDelay) {
      if (Date.now() + robots.crawlDelay * 1000 >= until) break;
      await new Promise((resolve) => setTimeout(resolve, robots.crawlDelay * 1000));
    }
    if (!allows(robots, origin, pages[index]!)) continue;
    try {
      const page = await crawlFetch(pages[index]!, {
        accept: "text/html, application/xhtml+xml;q=0.9, */*;q=0.1",
        signal: signalUntil(until),
        maxBytes: PAGE_BYTES,
        follows: (to) => inScope(to.href),
      });
      if (page.status < 200 || page.status >= 300 || !/html|^$/.test(page.mediaType)) {
        // A start page that answers an error, with nothing found in sitemaps either: an error, not an empty map.
        if (index === 0 && found.size <= 1)
          throw new AppError("INVALID_URL", `The site cannot be mapped: its start page answered HTTP ${page.status} and it has no sitemap.`);
        continue;
      }
      const decoder = decoderFor(sniffEncoding(page.body.subarray(0, PRESCAN_BYTES), page.charset));
      const { links, nofollow } = linksOf(decoder.write(page.body) + (decoder.end() ?? ""), page.url);
      if (nofollow) continue;
      for (const link of links) {
        const before = found.size;
        add(link, "link");
        if (found.size > before && pages.length <= MAP_PAGES) pages.push(link);
      }
    } catch (error) {
      if (deadline.signal.aborted) throw error;
      // A start page that cannot be read, with nothing found in sitemaps either: an error, not an empty map.
      if (index === 0 && found.size <= 1) throw error;
      if (Date.now() >= until) incomplete = true;
    }
  }
  return {
    url: start,
    urls: [...found.values()],
    skipped,
    sitemaps,
    robots: { found: file.state === "rules", crawlDelay: robots.crawlDelay },
    ...(incomplete ? { incomplete: true as const } : {}),
  };
}

/** Whether robots.txt allows `url`: the start's host's rules; another host's (a subdomain) are not read by a map, which lists it. */
const allows = (robots: Robots, origin: string, url: string) => new URL(url).origin !== origin || robots.allows(url);
