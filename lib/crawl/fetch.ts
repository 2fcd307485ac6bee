import type http from "node:http";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { decode, guardedRequest } from "../metadata/fetch.js";
import { withoutCredentials } from "../redacted.js";
import { invalidUrl } from "../render/errors.js";

// The crawler's requests (docs/crawl.md): every one under the network guard (a private address is
// refused before any connection, each redirect hop checked again), with the crawler's own
// User-Agent (the product token `Shotline` that robots.txt names, and a page about it), its body
// read to a byte cap, decompressed as it is read so that a bomb costs what the cap allows. Unlike
// a page's fetch for /content, an HTTP error is an answer here: the crawler acts on 404, 429, 503.

/** The token a robots.txt group names to speak to this crawler (RFC 9309, 2.2.1). */
export const PRODUCT_TOKEN = "Shotline";

/** The crawler's User-Agent: its product token and version, and the page an operator sets that says what it is. */
export const crawlerAgent = () => `Mozilla/5.0 (compatible; ${PRODUCT_TOKEN}/1.0${config.CRAWLER_INFO_URL ? `; +${config.CRAWLER_INFO_URL}` : ""})`;

/** Redirects followed (RFC 9309 asks at least five for robots.txt). */
const MAX_REDIRECTS = 5;

/** An answer as the crawler reads it. */
export interface Fetched {
  /** The URL that answered, after redirects, without credentials. */
  readonly url: string;
  readonly status: number;
  /** Its media type, lower-case, without parameters ("" when absent). */
  readonly mediaType: string;
  readonly charset: string | undefined;
  readonly headers: http.IncomingHttpHeaders;
  /** The body, decoded, up to the cap. */
  readonly body: Buffer;
  /** The body went on past the cap (and was not read further). */
  readonly truncated: boolean;
}

export interface CrawlFetchOptions {
  readonly accept: string;
  readonly signal: AbortSignal;
  /** Bytes of decoded body read at most. */
  readonly maxBytes: number;
  /** Headers of each request (the customer's, by the hop's URL). */
  readonly headersFor?: (hop: URL) => Record<string, string>;
  /** Whether a redirect may go to this URL; when not, the answer is the redirect itself (status 3xx, no body). */
  readonly follows?: (to: URL) => boolean;
}

/** Reads `response`'s decoded body up to `maxBytes`; destroys it either way. */
async function readCapped(response: http.IncomingMessage, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let read = 0;
  let truncated = false;
  const body = decode(response);
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (read + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - read));
        read = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      read += chunk.length;
    }
  } finally {
    body.destroy();
    response.destroy();
  }
  return { body: Buffer.concat(chunks, read), truncated };
}

/**
 * GETs `url` as the crawler, following up to MAX_REDIRECTS redirects that `follows` allows, each
 * hop under the guard: the answer that is not a redirect (or the redirect not followed), its body
 * unread. A refused or unreachable address is INVALID_URL; the signal's reason when it aborts.
 */
export async function crawlRequest(url: string, options: Omit<CrawlFetchOptions, "maxBytes">): Promise<{ url: string; response: http.IncomingMessage }> {
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    const response = await guardedRequest(current, {
      method: "GET",
      signal: options.signal,
      headers: {
        "user-agent": crawlerAgent(),
        accept: options.accept,
        "accept-language": "en;q=0.9, *;q=0.5",
        "accept-encoding": "gzip, deflate, br",
        ...options.headersFor?.(current),
      },
    });
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location) {
      let next: URL | null = null;
      try {
        next = new URL(location, current);
      } catch {}
      if (next && (next.protocol === "http:" || next.protocol === "https:") && (options.follows?.(next) ?? true)) {
        response.destroy();
        if (hop >= MAX_REDIRECTS) throw invalidUrl(`it redirects more than ${MAX_REDIRECTS} times`);
        current = next;
        continue;
      }
    }
    return { url: withoutCredentials(current.href), response };
  }
}

/** GETs `url` as crawlRequest does, its decoded body read up to `maxBytes`. */
export async function crawlFetch(url: string, options: CrawlFetchOptions): Promise<Fetched> {
  const { url: at, response } = await crawlRequest(url, options);
  const status = response.statusCode ?? 0;
  const [type = "", ...parameters] = String(response.headers["content-type"] ?? "").split(";");
  const charset = parameters.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find((c) => c !== undefined);
  if (status >= 300 && status < 400) {
    response.destroy();
    return { url: at, status, mediaType: "", charset: undefined, headers: response.headers, body: Buffer.alloc(0), truncated: false };
  }
  try {
    const { body, truncated } = await readCapped(response, options.maxBytes);
    return { url: at, status, mediaType: type.trim().toLowerCase(), charset, headers: response.headers, body, truncated };
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    if (error instanceof AppError) throw error;
    throw invalidUrl(`reading ${at} failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, error);
  }
}

/** Seconds a `Retry-After` header asks to wait (seconds or an HTTP date), or null when it says nothing usable. */
export function retryAfterSeconds(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\s*\d+\s*$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
