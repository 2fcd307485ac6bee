import { createHash } from "node:crypto";
import { loadCorpus } from "../../bench/content-quality.js";

// Real pages nobody here wrote (Zyte's article extraction benchmark, bench/corpus/), served on
// loopback as a visitor sees them when their third parties are unreachable: every absolute address
// of another host points at a closed loopback port (refused at once, as a blocked tracker or a name
// that does not resolve is), but for about one host in eight, chosen by its name, whose requests go
// to a fixture that accepts and never answers (as a dead ad server or a slow CDN does). Nothing
// leaves the machine, and no name is looked up.

/** A loopback port nothing listens on (the discard port). */
const CLOSED = "http://127.0.0.1:9";

let pages: Map<string, string> | undefined;
let articles: Map<string, string> | undefined;

/** Whether `host`'s requests hang (by a hash of its name: the same hosts every run). */
const hangs = (host: string) => createHash("sha256").update(host.toLowerCase()).digest()[0]! % 8 === 0;

/** Every absolute URL's scheme and host (or a protocol-relative one's). */
const ABSOLUTE = /\b(?:https?:)?\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?/gi;

/** The ids of the corpus's pages. */
export function realPageIds(): string[] {
  const corpus = pages ? [] : loadCorpus();
  pages ??= new Map(corpus.map((page) => [page.id, page.html]));
  articles ??= new Map(corpus.map((page) => [page.id, page.body]));
  return [...pages.keys()];
}

/** The page's article text, as the benchmark's ground truth gives it. */
export function realArticle(id: string): string {
  realPageIds();
  return articles!.get(id) ?? "";
}

/**
 * The page `id` of the corpus as served from `origin` (http://127.0.0.1:port; its third parties
 * unreachable; with `hanging` false, every one refused at once), or null.
 */
export function realPage(id: string, origin: string, hanging = true): string | null {
  realPageIds();
  const html = pages!.get(id);
  if (html === undefined) return null;
  // The hanging hosts are reached as localhost: a browser's connections to one host are few (6),
  // and those that hang must not hold the ones that load pages from 127.0.0.1.
  const hangAt = origin.replace("//127.0.0.1:", "//localhost:");
  return html.replace(ABSOLUTE, (_, host: string) => (hanging && hangs(host) ? `${hangAt}/zoo/hang?host=${host}&path=` : CLOSED));
}

/**
 * Whether the page `id` paints but never reaches its `load` event: it loads a script from a host
 * that never answers without blocking its parser (`async` or `defer`), and nothing from such a host
 * holds its first paint (a stylesheet, or a script that blocks the parser, would leave the page blank
 * for a visitor too).
 */
export function paintsButNeverLoads(id: string): boolean {
  realPageIds();
  const tags = [...pages!.get(id)!.matchAll(/<(?:script|link)\b[^>]*>/gi)].map(([tag]) => tag);
  const hanging = tags.filter((tag) => {
    const host = /\s(?:src|href)=["']?(?:https?:)?\/\/([a-z0-9.-]+)/i.exec(tag)?.[1];
    return host !== undefined && hangs(host);
  });
  const blocks = (tag: string) => (/^<link/i.test(tag) ? /rel=["']?stylesheet/i.test(tag) : !/\s(async|defer)\b/i.test(tag));
  return hanging.some((tag) => /^<script/i.test(tag) && !blocks(tag)) && !hanging.some(blocks);
}
