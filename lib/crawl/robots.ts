import robotsParserModule from "robots-parser";
import { AppError } from "../errors.js";
import { crawlFetch, PRODUCT_TOKEN } from "./fetch.js";

// robots.txt as RFC 9309 says a crawler reads it (docs/crawl.md, "Polite"): fetched once per host
// of a crawl, the group for the product token `Shotline` obeyed (or `*`'s), its first 500 KiB
// parsed (robots-parser), its Crawl-delay honoured up to MAX_CRAWL_DELAY_SECONDS, its Sitemap lines
// read. When it cannot be had: a 4xx answer means no rules (everything allowed); a 5xx, 429,
// unreachable or refused address means the whole host is disallowed (RFC 9309, 2.3.1.3-4).

// A CommonJS module whose function is module.exports; its types call it the default export.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** Bytes of a robots.txt parsed (RFC 9309, 2.5: at least 500 KiB). */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/** The longest Crawl-delay honoured, in seconds: a longer one is taken as this. */
export const MAX_CRAWL_DELAY_SECONDS = 10;

/** A host's robots.txt as fetched: its text, or what stood for it (kept with the crawl as is). */
export type RobotsFile =
  | { readonly state: "rules"; readonly text: string }
  | { readonly state: "none"; readonly status: number }
  | { readonly state: "unreachable"; readonly reason: string };

/** Fetches `origin`'s robots.txt under the guard, within `signal`. */
export async function fetchRobots(origin: string, signal: AbortSignal): Promise<RobotsFile> {
  let fetched: Awaited<ReturnType<typeof crawlFetch>>;
  try {
    fetched = await crawlFetch(`${origin}/robots.txt`, { accept: "text/plain, */*;q=0.1", signal, maxBytes: ROBOTS_MAX_BYTES });
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof AppError && /redirects more than/.test(error.message)) return { state: "none", status: 310 };
    return { state: "unreachable", reason: error instanceof AppError ? error.message : "the request failed" };
  }
  const { status } = fetched;
  if (status >= 200 && status < 300) return { state: "rules", text: fetched.body.toString("utf8") };
  // 429 is a server asking for less, as Google reads it: taken as a 5xx, not as "no rules".
  if (status >= 500 || status === 429) return { state: "unreachable", reason: `robots.txt answered HTTP ${status}` };
  return { state: "none", status };
}

/** What a host's robots.txt says to this crawler. */
export interface Robots {
  /** Whether `url` (on the host) may be fetched. */
  allows(url: string): boolean;
  /** Seconds between requests it asks for (capped), or 0. */
  readonly crawlDelay: number;
  /** Its Sitemap lines. */
  readonly sitemaps: readonly string[];
  /** Why the whole host is disallowed, when it is. */
  readonly closed: string | null;
}

/**
 * Characters of robots.txt rules with a wildcard judged at most. A rule with `*` costs its length
 * times the URL's to match (robots-parser, as Google's matcher): past this, a check of a long URL
 * would take seconds of CPU, so the host is read as closed rather than its rules ignored.
 */
export const WILDCARD_RULE_CHARS = 8_000;
const RULE = /^\s*(?:allow|disallow)\s*:\s*([^#\s]*)/i;

/** The rules of `file`, fetched from `origin`. */
export function robotsOf(origin: string, file: RobotsFile): Robots {
  if (file.state === "unreachable") return { allows: () => false, crawlDelay: 0, sitemaps: [], closed: `its robots.txt could not be read (${file.reason})` };
  if (file.state === "none") return { allows: () => true, crawlDelay: 0, sitemaps: [], closed: null };
  let wildcards = 0;
  for (const line of file.text.split(/\r\n|\r|\n/)) {
    const pattern = RULE.exec(line)?.[1] ?? "";
    if (pattern.includes("*")) wildcards += pattern.length;
  }
  if (wildcards > WILDCARD_RULE_CHARS)
    return {
      allows: () => false,
      crawlDelay: 0,
      sitemaps: [],
      closed: `its robots.txt has more than ${WILDCARD_RULE_CHARS} characters of wildcard rules, too many to judge`,
    };
  const robots = robotsParser(`${origin}/robots.txt`, file.text);
  const delay = Number(robots.getCrawlDelay(PRODUCT_TOKEN) ?? 0);
  return {
    // Undefined for a URL of another origin: not this file's to allow.
    allows: (url) => robots.isAllowed(url, PRODUCT_TOKEN) !== false,
    crawlDelay: Number.isFinite(delay) && delay > 0 ? Math.min(delay, MAX_CRAWL_DELAY_SECONDS) : 0,
    sitemaps: robots.getSitemaps(),
    closed: null,
  };
}
