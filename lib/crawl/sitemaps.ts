import { Readable, type Transform } from "node:stream";
import zlib from "node:zlib";
import { ErrorLevel, XMLToSitemapIndexStream, XMLToSitemapItemStream } from "sitemap";
import { AppError } from "../errors.js";
import { decode } from "../metadata/fetch.js";
import { crawlRequest } from "./fetch.js";

// Sitemaps (sitemaps.org; docs/crawl.md, "Sitemaps"): a urlset or a sitemap index, plain or gzipped
// (by Content-Encoding, or a .xml.gz file), read by the `sitemap` package's parsers (sax, strict
// entities: a DTD's entities are never expanded, so a billion-laughs file costs its own bytes). The
// protocol's limits are enforced while the file is decompressed and read: 50,000 entries and 50 MB
// uncompressed a file, so a gzip bomb stops at 50 MB of output, having cost what 50 MB costs.

/** Uncompressed bytes of one sitemap read at most (the protocol's limit). */
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;
/** Entries of one sitemap read at most (the protocol's limit). */
export const SITEMAP_MAX_ENTRIES = 50_000;

export interface SitemapEntry {
  readonly loc: string;
  readonly lastmod?: string;
}

/** A sitemap as read: its kind, its entries (URLs of pages, or of sitemaps for an index), and why it stopped early, if it did. */
export interface SitemapRead {
  readonly kind: "urlset" | "index" | "unknown";
  readonly entries: SitemapEntry[];
  readonly stopped?: string;
}

/** Bytes looked at for the root element before giving up on the file. */
const SNIFF_BYTES = 64 * 1024;
const ROOT = /<(?:[\w.-]+:)?(urlset|sitemapindex)[\s>/]/;

/** `source`'s bytes, inflated when they are gzip's (a .xml.gz served without Content-Encoding). */
async function* inflated(source: Readable): AsyncGenerator<Buffer> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await chunks.next();
  if (first.done) return;
  async function* all() {
    yield first.value;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  if (first.value[0] !== 0x1f || first.value[1] !== 0x8b) return yield* all();
  const gunzip = zlib.createGunzip();
  const rest = Readable.from(all());
  rest.once("error", (error) => gunzip.destroy(error));
  try {
    yield* rest.pipe(gunzip) as AsyncIterable<Buffer>;
  } finally {
    rest.destroy();
  }
}

/** The parser of a `kind` of sitemap, each entry it reads pushed to `entries`; `failed` hears why it stopped, if it breaks. */
function parserFor(kind: "urlset" | "index", entries: SitemapEntry[], failed: (reason: string) => void): Transform {
  const options = { level: ErrorLevel.SILENT, logger: false as const };
  const parser = kind === "urlset" ? new XMLToSitemapItemStream(options) : new XMLToSitemapIndexStream(options);
  parser.on("data", (entry: { url?: string; lastmod?: string }) => {
    if (entry.url) entries.push({ loc: entry.url, ...(entry.lastmod ? { lastmod: entry.lastmod } : {}) });
  });
  // A malformed file (or one whose DTD declares entities) stops being read where it breaks: what was read before stands.
  parser.on("error", (error: Error) => failed(`it is not well-formed XML (${error.message.split("\n")[0]})`));
  return parser;
}

/** Writes `chunk` to `parser` and waits until it has taken it. */
const feed = (parser: Transform, chunk: Buffer | string) =>
  new Promise<void>((resolve) => {
    if (parser.destroyed || parser.writableEnded) return resolve();
    parser.write(chunk, () => resolve());
  });

/**
 * Reads the sitemap at `url` as the crawler (lib/crawl/fetch.ts), at most `take` entries (and never
 * more than the protocol allows). A sitemap that cannot be had (an HTTP error, a refused address) is
 * an AppError (INVALID_URL); one that breaks off or passes a limit gives what was read before, with why.
 */
export async function readSitemap(url: string, signal: AbortSignal, take = SITEMAP_MAX_ENTRIES): Promise<SitemapRead> {
  const { response } = await crawlRequest(url, { accept: "application/xml, text/xml, application/gzip;q=0.9, */*;q=0.1", signal });
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    response.destroy();
    throw new AppError("INVALID_URL", `The sitemap ${url} answered HTTP ${status}.`);
  }
  const source = decode(response);
  const entries: SitemapEntry[] = [];
  const want = Math.min(take, SITEMAP_MAX_ENTRIES);
  let parser: Transform | null = null;
  let kind: SitemapRead["kind"] = "unknown";
  let stopped: string | undefined;
  let read = 0;
  let head = "";
  try {
    for await (const chunk of inflated(source)) {
      read += chunk.length;
      if (read > SITEMAP_MAX_BYTES) {
        stopped = `larger than ${SITEMAP_MAX_BYTES / 1024 / 1024} MB uncompressed`;
        break;
      }
      if (parser) await feed(parser, chunk);
      else {
        head += chunk.toString("latin1");
        const root = ROOT.exec(head)?.[1];
        if (root) {
          kind = root === "urlset" ? "urlset" : "index";
          parser = parserFor(kind, entries, (reason) => (stopped ??= reason));
          await feed(parser, Buffer.from(head, "latin1"));
        } else if (head.length > SNIFF_BYTES) break;
      }
      if (entries.length >= want) break;
    }
    if (parser && entries.length < want && !stopped && !parser.destroyed)
      await new Promise<void>((resolve) =>
        parser!
          .once("finish", resolve)
          .once("error", () => resolve())
          .end(),
      );
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    stopped = `reading it failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  } finally {
    source.destroy();
    response.destroy();
    parser?.destroy();
  }
  if (!parser) stopped ??= "it has no urlset or sitemapindex element";
  if (entries.length >= SITEMAP_MAX_ENTRIES && want === SITEMAP_MAX_ENTRIES) stopped ??= `more than ${SITEMAP_MAX_ENTRIES} entries`;
  return { kind, entries: entries.slice(0, want), ...(stopped ? { stopped } : {}) };
}
