import type { Readable } from "node:stream";
import { config } from "../config.js";
import { type Deadline, pageLoadLimit, whenAborted } from "../deadline.js";
import { AppError } from "../errors.js";
import { log } from "../log.js";
import { invalidUrl, renderError, renderTimeout } from "../render/errors.js";
import { semaphore } from "../semaphore.js";
import { cleanText, MAX_URL_CHARS } from "../text.js";
import { guardedFetch } from "./fetch.js";
import { readLinkedData } from "./json-ld.js";
import { decoderFor, type IconLink, MetadataCollector, PRESCAN_BYTES, type RawMetadata, sniffEncoding } from "./parse.js";
import { renderedHtml } from "./rendered.js";
import { isoDate, languageTag, pixels } from "./values.js";

// POST /api/v1/metadata: the page's metadata with docs/api.md's fallbacks, every URL absolute. The page is
// fetched without a browser (guarded like a render) and parsed as it streams, stopping once the head
// has been read; only a page whose static HTML says nothing and looks script-rendered is loaded in
// the browser.

/** docs/api.md, "Metadata". */
export interface Metadata {
  title: string;
  description: string;
  ogImage: string | null;
  ogTitle: string | null;
  ogDescription: string | null;
  favicon: string;
  themeColor: string | null;
  lang: string | null;
  canonical: string | null;
  siteName: string | null;
  type: string | null;
  author: string | null;
  publishedTime: string | null;
  modifiedTime: string | null;
  twitterCard: string | null;
  twitterSite: string | null;
  ogImageWidth: number | null;
  ogImageHeight: number | null;
  ogImageAlt: string | null;
  logo: string | null;
  feeds: string[];
}

// What a page says is cut to these lengths in the answer (docs/api.md, "Metadata"), control characters out.
const MAX_TEXT_CHARS = 2_000;
const MAX_COLOUR_CHARS = 100;
const MAX_SHORT_CHARS = 100;
/** Feeds listed at most. */
const MAX_FEEDS = 10;
// The tags whose presence means the static HTML says something (else it may be a script-rendered shell).
const TELLING_TAGS = [
  "description",
  "og:title",
  "og:description",
  "og:image",
  "og:image:url",
  "og:image:secure_url",
  "twitter:title",
  "twitter:description",
  "twitter:image",
  "twitter:image:src",
];

/** At most this much (decompressed) HTML is read; the head of any real page is far smaller. */
const MAX_READ_BYTES = 2 * 1024 * 1024;
/** A web manifest larger than this is not read. */
const MAX_MANIFEST_BYTES = 256 * 1024;
// Bytes decoded and parsed at a time, checking in between whether anything more is needed.
const PARSE_SLICE_BYTES = 8 * 1024;
// Visible body text below which a page with scripts and no metadata counts as script-rendered.
const SCRIPT_RENDERED_TEXT = 200;
// The browser fallback of this free endpoint is kept short and few, so that it cannot take the
// browser from paid renders: at most this long (page load included), and at most this many at once
// per process (on Lambda one request per instance; the stack caps the function's concurrency). One
// that does not find a free slot while FALLBACK_MIN_MS of its budget is left answers with what the
// static HTML says.
const FALLBACK_BUDGET_MS = 10_000;
const FALLBACK_MIN_MS = 4_000;
const fallbackSlot = semaphore(2);

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml", ""]);

/** Reads `body` into `collector` until it is done, the bytes run out or MAX_READ_BYTES were read. */
async function collect(body: Readable, charset: string | undefined, collector: MetadataCollector): Promise<void> {
  let decoder: ReturnType<typeof decoderFor> | undefined;
  // Bytes held back until the encoding is known: it may be declared by a <meta> in the first kilobyte.
  const head: Buffer[] = [];
  let read = 0;
  const feed = (decoding: NonNullable<typeof decoder>, bytes: Buffer) => {
    // In slices, so that a large chunk is not decoded and tokenized past the point of being done.
    for (let at = 0; at < bytes.length && !collector.done; at += PARSE_SLICE_BYTES) collector.write(decoding.write(bytes.subarray(at, at + PARSE_SLICE_BYTES)));
  };
  const start = () => {
    const decoding = decoderFor(sniffEncoding(Buffer.concat(head), charset));
    for (const bytes of head) feed(decoding, bytes);
    return decoding;
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const piece = read + chunk.length > MAX_READ_BYTES ? chunk.subarray(0, MAX_READ_BYTES - read) : chunk;
      read += piece.length;
      if (decoder) {
        feed(decoder, piece);
      } else {
        head.push(piece);
        if (read >= PRESCAN_BYTES) decoder = start();
      }
      if (collector.done || read >= MAX_READ_BYTES) break;
    }
    collector.write((decoder ?? start()).end() ?? "");
    collector.end();
  } finally {
    body.destroy();
  }
}

/** A URL as written in the page, made absolute; null when it is not a usable http(s) or data:image URL. */
function absolute(href: string | undefined, base: string): string | null {
  if (!href) return null;
  try {
    const url = new URL(href, base);
    if (url.href.length > MAX_URL_CHARS) return null; // an og:image, favicon or manifest URL that long is left out
    if (url.protocol === "http:" || url.protocol === "https:") return url.href;
    if (url.protocol === "data:" && /^data:image\//i.test(url.href)) return url.href;
  } catch {
    // not a URL
  }
  return null;
}

/** An icon's size in px for choosing (largest wins): declared sizes, SVG as the largest, else a guess by kind. */
function iconSize(icon: IconLink): number {
  if (icon.sizes === "any" || icon.type === "image/svg+xml" || /\.svg(?:[?#]|$)/i.test(icon.href)) return 10_000;
  const declared = [...icon.sizes.matchAll(/(\d+)x(\d+)/g)].map((m) => Math.min(Number(m[1]), Number(m[2])));
  if (declared.length) return declared.reduce((most, size) => Math.max(most, size), 0);
  // Undeclared: an apple-touch-icon is 180 px by Apple's convention; a plain icon is usually 16-32.
  return icon.apple ? 180 : 32;
}

/** The best icon: the largest by iconSize, the first such in document order. */
function bestIcon(icons: readonly IconLink[], base: string): string | null {
  let best: { url: string; size: number } | null = null;
  for (const icon of icons) {
    const url = absolute(icon.href, base);
    if (!url) continue;
    const size = iconSize(icon);
    if (!best || size > best.size) best = { url, size };
  }
  return best?.url ?? null;
}

/** The web manifest's theme_color, or null (any failure: no manifest colour). */
async function manifestThemeColor(url: string, signal: AbortSignal): Promise<string | null> {
  try {
    const response = await guardedFetch(url, "application/manifest+json, application/json;q=0.9, */*;q=0.1", signal);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_MANIFEST_BYTES) return null;
        chunks.push(chunk);
      }
    } finally {
      response.body.destroy();
    }
    const manifest: unknown = JSON.parse(
      Buffer.concat(chunks)
        .toString("utf8")
        .replace(/^\uFEFF/, ""),
    );
    const color = (manifest as { theme_color?: unknown } | null)?.theme_color;
    return typeof color === "string" && color.trim() !== "" ? cleanText(color, MAX_COLOUR_CHARS) : null;
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    log.debug("manifest not used", { url, error: String(error) });
    return null;
  }
}

/** docs/api.md's fallbacks over what the document says; `pageUrl` is the final URL after redirects. */
function applyFallbacks(raw: RawMetadata, pageUrl: string): Metadata & { manifest: string | null } {
  const base = absolute(raw.baseHref, pageUrl) ?? pageUrl;
  const meta = (key: string) => raw.meta.get(key);
  const text = (value: string | null | undefined, max = MAX_TEXT_CHARS) => (value === undefined || value === null ? null : cleanText(value, max));
  // A page address: http(s) only.
  const link = (href: string | null | undefined) => {
    const url = absolute(href ?? undefined, base);
    return url?.startsWith("http") ? url : null;
  };
  const linked = readLinkedData(raw.jsonLd);
  const ogTitle = text(meta("og:title"));
  const ogDescription = text(meta("og:description"));
  const ogImage = absolute(meta("og:image:secure_url"), base) ?? absolute(meta("og:image"), base) ?? absolute(meta("og:image:url"), base);
  const twitterImage = absolute(meta("twitter:image"), base) ?? absolute(meta("twitter:image:src"), base);
  // An article:author is often a profile URL: only a name counts.
  const articleAuthor = /^https?:\/\//i.test(meta("article:author") ?? "") ? undefined : meta("article:author");
  const feeds = new Set(raw.feeds.map(link).filter((url) => url !== null));
  const icon = bestIcon(raw.icons, base);
  return {
    title: text(raw.title || ogTitle || meta("twitter:title") || raw.h1 || "") ?? "",
    description: text(meta("description") ?? meta("og:description") ?? meta("twitter:description") ?? "") ?? "",
    ogImage: ogImage ?? twitterImage,
    ogTitle,
    ogDescription,
    favicon: icon ?? new URL("/favicon.ico", pageUrl).href,
    themeColor: text(meta("theme-color") ?? (raw.themeColorWithMedia || undefined), MAX_COLOUR_CHARS),
    lang: languageTag(raw.lang) ?? languageTag(meta("og:locale")) ?? languageTag(meta("content-language")),
    canonical: link(raw.canonical) ?? link(meta("og:url")),
    siteName: text(meta("og:site_name") ?? meta("application-name") ?? linked.siteName),
    type: text(meta("og:type"), MAX_SHORT_CHARS),
    author: text(meta("author") ?? articleAuthor ?? linked.author),
    publishedTime: isoDate(meta("article:published_time")) ?? isoDate(linked.datePublished),
    modifiedTime: isoDate(meta("article:modified_time")) ?? isoDate(meta("og:updated_time")) ?? isoDate(linked.dateModified),
    twitterCard: text(meta("twitter:card"), MAX_SHORT_CHARS),
    twitterSite: text(meta("twitter:site"), MAX_SHORT_CHARS),
    // The og:image's own properties; none when the image is the Twitter card's.
    ogImageWidth: ogImage ? pixels(meta("og:image:width")) : null,
    ogImageHeight: ogImage ? pixels(meta("og:image:height")) : null,
    ogImageAlt: text(ogImage ? meta("og:image:alt") : twitterImage ? meta("twitter:image:alt") : undefined),
    logo: absolute(linked.logo ?? undefined, base) ?? icon,
    feeds: [...feeds].slice(0, MAX_FEEDS),
    manifest: absolute(raw.manifest, base),
  };
}

/** Nothing usable in the static HTML, and it looks like scripts draw the page. */
function looksScriptRendered(raw: RawMetadata): boolean {
  const saysNothing = !raw.title && !raw.h1 && !TELLING_TAGS.some((key) => raw.meta.has(key));
  return saysNothing && raw.scripts > 0 && raw.bodyText < SCRIPT_RENDERED_TEXT;
}

/** What can be known of a non-HTML resource (an image, a PDF): its name from the URL, the default favicon. */
function nonHtmlMetadata(pageUrl: string): Metadata {
  const url = new URL(pageUrl);
  const segment = url.pathname.split("/").filter(Boolean).pop();
  let title = url.hostname;
  if (segment) {
    try {
      title = decodeURIComponent(segment);
    } catch {
      title = segment;
    }
  }
  // What an empty document gives, named after the resource.
  const { manifest: _, ...nothing } = applyFallbacks(new MetadataCollector().raw, pageUrl);
  return { ...nothing, title: cleanText(title, MAX_TEXT_CHARS) };
}

/**
 * Runs `work` (fetches) with a signal that aborts after `limitMs` as RENDER_TIMEOUT, or when the
 * request's deadline fires (with its reason); any other failure is INVALID_URL when the page could
 * not be read, else RENDER_ERROR.
 */
async function withinLimit<T>(limitMs: number, deadline: Deadline, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const limit = whenAborted(Date.now() + limitMs, renderTimeout(`The page did not answer within ${Math.round(limitMs / 1000)} s.`));
  const signal = AbortSignal.any([limit.signal, deadline.signal]);
  try {
    return await work(signal);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof AppError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // A body that broke off mid-way, a decompression failure: the page could not be read.
    if (code) throw invalidUrl(`reading the page failed (${code})`, error);
    throw renderError(error);
  } finally {
    limit.clear();
  }
}

/** Fetches the page and collects what its HTML says; for anything but HTML, only its final URL. */
async function readPage(url: string, signal: AbortSignal): Promise<{ url: string; raw: RawMetadata | null }> {
  const response = await guardedFetch(url, "text/html, application/xhtml+xml;q=0.9, */*;q=0.1", signal);
  if (!HTML_TYPES.has(response.mediaType)) {
    response.body.destroy();
    return { url: response.url, raw: null };
  }
  const collector = new MetadataCollector();
  await collect(response.body, response.charset, collector);
  return { url: response.url, raw: collector.raw };
}

/** What a rendered DOM says, collected by the same rules as the fast path. */
function collectHtml(html: string): RawMetadata {
  const collector = new MetadataCollector();
  collector.write(html);
  collector.end();
  return collector.raw;
}

/** The browser fallback within its budget; null (with a warning) when no slot came free in it. */
async function renderedWithinBudget(url: string, deadline: Deadline): Promise<{ html: string; url: string } | null> {
  const at = Math.min(deadline.at, Date.now() + FALLBACK_BUDGET_MS);
  const budget = whenAborted(at, renderTimeout(`The page did not render within ${FALLBACK_BUDGET_MS / 1000} s.`));
  const signal = AbortSignal.any([deadline.signal, budget.signal]);
  try {
    let release: () => void;
    try {
      release = await fallbackSlot(AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, at - Date.now() - FALLBACK_MIN_MS))]));
    } catch (error) {
      if (deadline.signal.aborted) throw error;
      log.warn("metadata: no browser free for the fallback; answering from the static HTML", { url });
      return null;
    }
    try {
      return await renderedHtml({ kind: "url", url }, { at, signal });
    } finally {
      release();
    }
  } finally {
    budget.clear();
  }
}

/** Bytes of a page read whole for its content (lib/content): more is cut off, as a reader would stop. */
const MAX_PAGE_BYTES = 5 * 1024 * 1024;

/**
 * The page at `url` read whole (at most MAX_PAGE_BYTES, decoded by its declared or sniffed
 * encoding) within the page-load limit, as the metadata fetch reads it (the same guard, redirects
 * and user agent, unless `headersFor` says otherwise): its final URL, and its HTML, or null for a
 * resource that is not HTML.
 */
export async function readWholePage(
  url: string,
  deadline: Deadline,
  headersFor?: (hop: URL) => Record<string, string>,
): Promise<{ url: string; html: string | null }> {
  return withinLimit(Math.min(pageLoadLimit(deadline, config.PAGE_LOAD_TIMEOUT_MS), deadline.at - Date.now()), deadline, async (signal) => {
    const response = await guardedFetch(url, "text/html, application/xhtml+xml;q=0.9, */*;q=0.1", signal, headersFor);
    if (!HTML_TYPES.has(response.mediaType)) {
      response.body.destroy();
      return { url: response.url, html: null };
    }
    const chunks: Buffer[] = [];
    let read = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        const piece = read + chunk.length > MAX_PAGE_BYTES ? chunk.subarray(0, MAX_PAGE_BYTES - read) : chunk;
        chunks.push(piece);
        read += piece.length;
        if (read >= MAX_PAGE_BYTES) break;
      }
    } finally {
      response.body.destroy();
    }
    const bytes = Buffer.concat(chunks);
    const decoder = decoderFor(sniffEncoding(bytes.subarray(0, PRESCAN_BYTES), response.charset));
    return { url: response.url, html: decoder.write(bytes) + (decoder.end() ?? "") };
  });
}

/** The metadata endpoint's fields of HTML already read (or rendered) from `url`, without its further fetches (a manifest's theme colour). */
export function metadataOf(html: string, url: string): Metadata {
  const { manifest: _manifest, ...result } = applyFallbacks(collectHtml(html), url);
  return result;
}

/**
 * The metadata of the page at `url` before `deadline` (epoch ms): its fetches within the page-load
 * limit; the browser fallback, when needed, with a page-load clock of its own that starts at its slot.
 */
export async function extractMetadata(url: string, deadline: Deadline): Promise<Metadata> {
  const limit = () => Math.min(config.PAGE_LOAD_TIMEOUT_MS, deadline.at - Date.now());
  const page = await withinLimit(limit(), deadline, (signal) => readPage(url, signal));
  if (!page.raw) return nonHtmlMetadata(page.url);
  let raw = page.raw;
  let pageUrl = page.url;
  if (looksScriptRendered(raw)) {
    const rendered = await renderedWithinBudget(pageUrl, deadline);
    if (rendered) {
      raw = collectHtml(rendered.html);
      pageUrl = rendered.url;
    }
  }
  const { manifest, ...result } = applyFallbacks(raw, pageUrl);
  if (result.themeColor === null && manifest) result.themeColor = await withinLimit(limit(), deadline, (signal) => manifestThemeColor(manifest, signal));
  return result;
}
