import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { CRAWL_FORMATS, crawlPageOptions, type crawlRequest } from "../api/schemas.js";
import { type KeptRequest, openRequest } from "../api/secrets.js";
import { config } from "../config.js";
import { readInBrowser } from "../content/browser.js";
import { browserControls } from "../content/controls.js";
import { parseHtml } from "../content/dom.js";
import { extractContent } from "../content/extract.js";
import { unprovenStatically } from "../content/visible.js";
import type { Deadline } from "../deadline.js";
import { AppError } from "../errors.js";
import { attempt, closeLease, heldElsewhere, type Piece, takeLease } from "../jobs/attempt.js";
import { itemDone } from "../jobs/feed.js";
import { enqueueItem, type PageMessage } from "../jobs/queue.js";
import { putObject } from "../jobs/requests.js";
import { LEASE_MARGIN_MS, WORKER_LIMIT_MS, WORKER_MARGIN_MS } from "../jobs/worker-time.js";
import { describeError, log } from "../log.js";
import { metadataOf } from "../metadata/extract.js";
import { decoderFor, PRESCAN_BYTES, sniffEncoding } from "../metadata/parse.js";
import { JOBS_PREFIX } from "../packaging.js";
import { renderTimeout } from "../render/errors.js";
import { credentialsOnlyFor, fetchHeadersFor } from "../render/guard/requests.js";
import { PRICES } from "../routes.js";
import { s3 } from "../storage/s3.js";
import { copyKeyOf, copySince, keepCopy, type PageCopy } from "./copies.js";
import { linkPages, maxFound, redirectTarget, robotsFor, scopeOf, sitemapPages } from "./discover.js";
import { crawlerAgent, crawlFetch, retryAfterSeconds } from "./fetch.js";
import { linksOf } from "./links.js";
import type { Robots } from "./robots.js";
import {
  type Crawl,
  type CrawlPage,
  count,
  countAgainstLimit,
  endPage,
  type Found,
  finishIfIdle,
  firstWithText,
  getCrawl,
  getPage,
  holdHostUntil,
  knows,
  type PageEnd,
  pageKey,
  putBack,
  recordFound,
  releaseHostSlot,
  type SkipReason,
  stopCrawl,
  takeHostSlot,
  takeHostTurn,
  unmark,
} from "./store.js";
import { normalizeUrl } from "./urls.js";

// A crawl's page, run by the jobs worker (functions/job-worker.ts) when the queue delivers its
// message (docs/crawl.md, "Crawl"): taken once at a time (lib/jobs/attempt.ts, as an item is),
// allowed by its host's robots.txt, in its host's turn (Crawl-delay, Retry-After), read over HTTP
// and in a browser only when its static HTML cannot prove what a person sees, de-duplicated
// (canonical URL, identical text), counted against the crawl's limit, kept, charged after the work
// ($0.001 static, $0.002 rendered, out of the crawl's hold; nothing when skipped or failed), and
// its links recorded before it ends, so that the crawl ends only when nothing runs or waits.

type CrawlRequest = ReturnType<typeof crawlRequest.parse>;

/** HTML bytes of a page read at most: a larger page is skipped as too large. */
const PAGE_BYTES = 5 * 1024 * 1024;
/** A page answering 429 or 503 this many times fails. */
const MAX_RETRIES = 3;
/** The longest Retry-After honoured (seconds), and the wait when a 429 or 503 names none. */
const RETRY_AFTER_CAP_SECONDS = 120;
const RETRY_AFTER_DEFAULT_SECONDS = 10;
/**
 * Pages a crawl fetches at most, whatever becomes of them (failed, duplicate and skipped pages are
 * free to the customer, not to us): three for each page it may deliver, and ten more.
 */
const maxFetched = (limit: number) => 3 * limit + 10;
/** Bytes of output a crawl keeps at most (and so its whole result's size). */
const CRAWL_MAX_BYTES = 1024 * 1024 * 1024;
/** A page's time: its fetch and its browser read; the start's sitemaps have as long again. */
const PAGE_MS = 60_000;
const SITEMAPS_MS = 40_000;
/** How long a page waits in its worker for a slot of its host before its message is put back for a second. */
const HOST_WAIT_MS = 3_000;

type Made =
  | { readonly kind: "retry"; readonly after: number; readonly httpStatus: number }
  | { readonly kind: "ended"; readonly end: PageEnd }
  | {
      readonly kind: "delivered";
      readonly end: PageEnd;
      readonly found: readonly Found[];
      readonly rendered: boolean;
      /** Taken from a copy (docs/crawl.md, "maxAge"): no request, no browser. */
      readonly copied: boolean;
      readonly bytes: number;
    };

const contextOf = (crawlId: string) => `crawl ${crawlId}`;
/** A delivered page's price: a browser's read costs more; a copy is read by neither the site nor a browser. */
const priceOf = (made: { rendered: boolean; copied: boolean }) => (made.rendered && !made.copied ? PRICES.crawlRenderedPage : PRICES.crawlPage);
export const pagePiece = (crawl: Pick<Crawl, "id" | "accountId">, key: string): Piece => ({
  kind: "page",
  accountId: crawl.accountId,
  owner: crawl.id,
  id: key,
  key: pageKey(crawl.id, key),
  requestId: `${crawl.id}.${key}`,
});

const skipped = (reason: SkipReason, more: Partial<PageEnd> = {}): Made => ({ kind: "ended", end: { status: "skipped", reason, charged: 0, ...more } });
const failedWith = (error: string, more: Partial<PageEnd> = {}): Made => ({ kind: "ended", end: { status: "failed", error, charged: 0, ...more } });

/** A link as a page is de-duplicated by it: its host, path and query parameters' names. */
const withoutQueryValues = (link: string) => {
  const { host, pathname, searchParams } = new URL(link);
  return `${host}${pathname}?${[...new Set(searchParams.keys())].sort().join("&")}`;
};

/** What a page is de-duplicated by: its words (whitespace aside) and where its links lead. */
const textHash = (text: string) => createHash("sha256").update(text.replace(/\s+/g, " ").trim()).digest("base64url").slice(0, 32);

/** A page read (or its copy taken), to be delivered: what its output and its crawl need of it. */
interface Got {
  readonly httpStatus: number;
  readonly finalUrl: string;
  readonly canonical: string | null;
  readonly rendered: boolean;
  readonly title: string | undefined;
  /** Its text and links' hash, null when it has no text (no one's duplicate). */
  readonly textHash: string | null;
  readonly links: readonly string[];
  readonly nofollow: boolean;
  /** Its output's fields: the formats asked. */
  readonly fields: Record<string, unknown>;
  /** When its copy was read, when it is one. */
  readonly copiedAt?: number;
}

/**
 * Reads page `message` of `crawl` (taken as `page`) within `deadline`, in a slot of its host that
 * `leaveHost` lets go of once its requests are made, or takes `copy` of it: what became of it.
 */
async function readPage(
  crawl: Crawl,
  request: CrawlRequest,
  message: PageMessage,
  page: CrawlPage,
  robots: Robots,
  deadline: Deadline,
  leaveHost: () => Promise<void>,
  copy: PageCopy | null,
): Promise<Made> {
  const { origin } = new URL(message.url);
  const inScope = scopeOf({ id: crawl.id, request });
  // The start reads the site's sitemaps first: their pages are queued one hop from it. Each of its
  // requests waits for its host's turn (Crawl-delay), as the page's own does after them.
  if (page.foundBy === "start" && request.source !== "links") {
    const signal = AbortSignal.any([deadline.signal, AbortSignal.timeout(SITEMAPS_MS)]);
    const { host } = new URL(message.url);
    const paced = () => hostTurn(crawl.accountId, host, robots.crawlDelay * 1000, signal);
    // At most five for each page it may deliver (and a hundred more): a site's million-URL sitemap costs what that many writes cost.
    await recordFound(crawl, await sitemapPages({ id: crawl.id, request }, robots, 5 * request.limit + 100, signal, paced));
    if (!copy) await hostTurn(crawl.accountId, host, robots.crawlDelay * 1000, deadline.signal);
  }
  // A copy whose page led where this crawl may not go now (out of its scope, or disallowed) is not
  // taken; nor is one whose output has gone (kept as long as its crawl): the page is read again.
  const copied = copy && inScope(copy.finalUrl) && robots.allows(copy.finalUrl) ? await outputOf(copy.outputKey) : null;
  if (copy && copied) {
    await leaveHost();
    if (await knownAs(crawl, message, copy.finalUrl, copy.canonical, inScope))
      return skipped("duplicate", duplicateOf(copy.httpStatus, copy.finalUrl, copy.canonical));
    return deliver(crawl, request, message, page, robots, { ...copy, fields: copied, copiedAt: copy.at });
  }
  // Its turn was not taken for a copy: it is now.
  if (copy) await hostTurn(crawl.accountId, new URL(message.url).host, robots.crawlDelay * 1000, deadline.signal);
  const options = { ...crawlPageOptions(request), userAgent: crawlerAgent() };
  // The customer's credentials (headers, cookies, httpAuth) go to the start's origin alone: not to a subdomain, nor over http:// to an https:// start's host.
  const headers = fetchHeadersFor(options, request.url);
  let fetched: Awaited<ReturnType<typeof crawlFetch>>;
  try {
    fetched = await crawlFetch(message.url, {
      accept: "text/html, application/xhtml+xml;q=0.9, */*;q=0.1",
      signal: AbortSignal.any([deadline.signal, AbortSignal.timeout(Math.min(PAGE_MS, deadline.at - Date.now()))]),
      maxBytes: PAGE_BYTES,
      headersFor: (hop) => ({ ...headers(hop), ...(request.modifiedSince ? { "if-modified-since": new Date(request.modifiedSince).toUTCString() } : {}) }),
      // Its own origin's redirects, as robots.txt allows; one to another origin is a page of its own (below).
      follows: (to) => to.origin === origin && inScope(to.href) && robots.allows(to.href),
    });
  } catch (error) {
    if (deadline.signal.aborted) throw error;
    if (!(error instanceof AppError)) throw error;
    // Refused by the network guard (a private address, a name that resolves to one): never connected.
    return /could not be loaded: refused/.test(error.message) ? skipped("guard", { error: error.message }) : failedWith(error.message);
  }
  const { status } = fetched;
  const finalUrl = fetched.url;
  if (status === 304) return skipped("unchanged", { httpStatus: status, finalUrl });
  const elsewhere =
    status >= 300 && status < 400 ? redirectTarget({ id: crawl.id, request }, { ...page, url: finalUrl }, String(fetched.headers.location ?? "")) : null;
  if (elsewhere) {
    await recordFound(crawl, [elsewhere]);
    return skipped("duplicate", { httpStatus: status, finalUrl, error: `It redirects to ${elsewhere.url}, read as a page of its own.` });
  }
  if (status >= 300 && status < 400)
    return skipped("scope", {
      httpStatus: status,
      finalUrl,
      error: `It redirects to ${String(fetched.headers.location).slice(0, 300)}, out of the crawl's scope.`,
    });
  if (status === 429 || status === 503) {
    const after = Math.min(RETRY_AFTER_CAP_SECONDS, retryAfterSeconds(fetched.headers["retry-after"]) ?? RETRY_AFTER_DEFAULT_SECONDS);
    // The host is held before this page lets go of its slot: no request slips in between.
    await holdHostUntil(crawl.accountId, new URL(message.url).host, Date.now() + after * 1000);
    return { kind: "retry", after, httpStatus: status };
  }
  if (status >= 400 || status < 200) return failedWith(`The page answered HTTP ${status}.`, { httpStatus: status, finalUrl });
  if (!/^(text\/html|application\/xhtml\+xml)?$/.test(fetched.mediaType)) return skipped("not html", { httpStatus: status, finalUrl });
  if (fetched.truncated) return skipped("too large", { httpStatus: status, finalUrl, error: `Its HTML is larger than ${PAGE_BYTES / 1024 / 1024} MB.` });
  const decoder = decoderFor(sniffEncoding(fetched.body.subarray(0, PRESCAN_BYTES), fetched.charset));
  let html = decoder.write(fetched.body) + (decoder.end() ?? "");
  let url = finalUrl;
  const { canonical } = linksOf(html, finalUrl);
  if (await knownAs(crawl, message, finalUrl, canonical, inScope)) return skipped("duplicate", duplicateOf(status, finalUrl, canonical));
  // Static when its HTML proves what a person sees (as /content's "auto"), a browser otherwise.
  const staticRead =
    request.render === "never" || (request.render === "auto" && browserControls(options).length === 0 && unprovenStatically(parseHtml(html)) === null);
  if (!staticRead) {
    // A second request to its host: after its Crawl-delay, as every request is; the customer's credentials to the start's origin alone, as the fetch's.
    await hostTurn(crawl.accountId, new URL(finalUrl).host, robots.crawlDelay * 1000, deadline.signal);
    const read = await readInBrowser({ kind: "url", url: finalUrl }, credentialsOnlyFor(options, finalUrl, request.url), false, deadline);
    html = read.html;
    url = read.url ?? finalUrl;
    // Where the browser went (a server's, a script's or a meta refresh's redirect) is judged as a static redirect is.
    const landed = normalizeUrl(url);
    if (landed && landed !== finalUrl) {
      const elsewhere = redirectTarget({ id: crawl.id, request }, { ...page, url: finalUrl }, landed);
      const went = { httpStatus: status, finalUrl, rendered: true };
      if (elsewhere) {
        await recordFound(crawl, [elsewhere]);
        return skipped("duplicate", { ...went, error: `In a browser it goes to ${elsewhere.url}, read as a page of its own.` });
      }
      if (!inScope(landed)) return skipped("scope", { ...went, error: `In a browser it goes to ${landed.slice(0, 300)}, out of the crawl's scope.` });
      if (new URL(landed).origin === origin && !robots.allows(landed))
        return skipped("robots", { ...went, error: `In a browser it goes to ${landed.slice(0, 300)}.` });
    }
  }
  // Its requests are made: the host's slot goes while the page is read (its worker waits for that at its end).
  void leaveHost();
  const readBy = staticRead ? "static" : "rendered";
  const content = extractContent(html, url, request.scope, readBy);
  const { links, nofollow } = linksOf(html, url);
  // Identical pages: the same whole text a reader sees and links to the same pages (lists whose links
  // read alike, "Article 1, Article 2...", lead to different pages), a query's values aside (a
  // session id in every link makes no page new); a page with no text is no one's duplicate.
  const whole = request.scope === "page" ? content.text : extractContent(html, url, "page", readBy).text;
  const targets = [...new Set(links.map(withoutQueryValues))].sort().join("\n");
  const metadata = metadataOf(html, url);
  const formats = new Set(request.formats);
  const fields = Object.fromEntries(
    CRAWL_FORMATS.filter((format) => formats.has(format)).map((format) => [
      format,
      format === "links" ? links : format === "metadata" ? metadata : content[format],
    ]),
  );
  return deliver(crawl, request, message, page, robots, {
    httpStatus: status,
    finalUrl: url,
    canonical,
    rendered: !staticRead,
    title: metadata.title,
    textHash: whole.trim() ? textHash(`${whole}\n${targets}`) : null,
    links,
    nofollow,
    fields,
  });
}

/** Whether page `message`, led to `finalUrl` and naming `canonical`, is a page the crawl already has: redirected there, or its canonical URL. */
const knownAs = async (crawl: Crawl, message: PageMessage, finalUrl: string, canonical: string | null, inScope: (url: string) => boolean) =>
  (finalUrl !== message.url && (await knows(crawl.id, finalUrl))) ||
  (canonical !== null && canonical !== message.url && canonical !== finalUrl && inScope(canonical) && (await knows(crawl.id, canonical)));

/** What a page found a duplicate by knownAs is told. */
const duplicateOf = (httpStatus: number, finalUrl: string, canonical: string | null): Partial<PageEnd> => ({
  httpStatus,
  finalUrl,
  error: canonical && canonical !== finalUrl ? `Its canonical URL is ${canonical}.` : `It redirects to ${finalUrl}.`,
});

/** The fields of a page's output kept at `key`, or null when it is gone. */
async function outputOf(key: string): Promise<Record<string, unknown> | null> {
  try {
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }));
    const {
      url: _url,
      depth: _depth,
      foundBy: _foundBy,
      copiedAt: _copiedAt,
      ...kept
    } = JSON.parse(await Body!.transformToString("utf8")) as Record<string, unknown>;
    return kept;
  } catch (error) {
    if ((error as { name?: string }).name === "NoSuchKey") return null;
    throw error;
  }
}

/**
 * Delivers page `message` as `got`: unless it is a duplicate (its text and links another page's) or
 * past its crawl's limit, its output kept, its copy kept for its account's later crawls (a page read
 * now by a crawl with maxAge, when its way of reading takes copies), and its links recorded.
 */
async function deliver(crawl: Crawl, request: CrawlRequest, message: PageMessage, page: CrawlPage, robots: Robots, got: Got): Promise<Made> {
  const { httpStatus, finalUrl } = got;
  const same = got.textHash ? await firstWithText(crawl.id, got.textHash, message.url) : null;
  if (same !== null) return skipped("duplicate", { httpStatus, finalUrl, rendered: got.rendered, error: `Its text and links are ${same}'s.` });
  if (!(await countAgainstLimit({ id: crawl.id, request }, message.key))) return skipped("limit", { httpStatus, finalUrl });
  const { fields, copiedAt, ...read } = got;
  const copied = copiedAt ? { copiedAt: new Date(copiedAt).toISOString() } : {};
  const answer = {
    url: message.url,
    finalUrl,
    httpStatus,
    depth: message.depth,
    foundBy: page.foundBy,
    rendered: got.rendered,
    title: got.title,
    ...copied,
    ...fields,
  };
  const outputKey = `${JOBS_PREFIX}${crawl.id}/pages/${message.key}.json`;
  const output = JSON.stringify(answer);
  // A crawl that takes copies keeps them of what it reads.
  const copyKey = copiedAt || !request.maxAge ? null : copyKeyOf(crawl.accountId, message.url, readWay(request));
  const follows = request.source !== "sitemaps" && message.depth < request.depth && !got.nofollow && crawl.discovered < maxFound(request.limit);
  // Its output first (a copy names only an output that is there), then its copy and its links at once.
  await putObject(outputKey, output, "application/json");
  const [, found] = await Promise.all([
    copyKey && keepCopy(copyKey, { ...read, at: Date.now(), outputKey }),
    follows ? recordLinks(crawl, request, robots, page, got.links) : [],
  ]);
  return {
    kind: "delivered",
    rendered: got.rendered,
    copied: copiedAt !== undefined,
    bytes: Buffer.byteLength(output),
    found,
    end: {
      status: "delivered",
      httpStatus,
      finalUrl,
      rendered: got.rendered,
      title: got.title,
      outputKey,
      ...copied,
    },
  };
}

/** How `request` reads its pages, as its copies are keyed. */
const readWay = (request: CrawlRequest) => ({ formats: request.formats, scope: request.scope, render: request.render, options: crawlPageOptions(request) });

/** Waits for `host`'s next turn for `accountId`'s pages (its Crawl-delay after the last request), and takes it. */
async function hostTurn(accountId: string, host: string, delayMs: number, signal: AbortSignal): Promise<void> {
  if (delayMs <= 0) return;
  for (let turn = await takeHostTurn(accountId, host, delayMs); turn; turn = await takeHostTurn(accountId, host, delayMs))
    await sleep(Math.max(10, turn.at - Date.now()), undefined, { signal });
}

/** Records the links of `page`: those of other shapes first, then its own shape's, a trap's chain judged by whether the first brought anything new. */
async function recordLinks(crawl: Crawl, request: CrawlRequest, robots: Robots, page: CrawlPage, links: readonly string[]): Promise<Found[]> {
  const { others, same } = linkPages({ id: crawl.id, request }, { origin: new URL(page.url).origin, rules: robots }, page, links);
  const added = await recordFound(crawl, others);
  return [...added, ...(await recordFound(crawl, same(added.some((f) => !f.skip))))];
}

/** Puts page `message` back on the queue after `seconds`, holding its slots, and lets its lease go. */
async function later(crawl: Crawl, piece: Piece, message: PageMessage, seconds: number, retries = message.retries ?? 0): Promise<void> {
  await enqueueItem({ ...message, retries }, seconds);
  await putBack(crawl.id, message.key);
  await closeLease(piece);
}

/** Pages of `crawl` found and not yet ended, by its counts (a delivered page is counted before it ends: never too many). */
const unended = (crawl: Crawl) => crawl.discovered - crawl.delivered - crawl.failed - Object.values(crawl.skipped).reduce((sum, n) => sum + (n ?? 0), 0);

/**
 * The end of page `message`: recorded once, counted (`fetched`: it was fetched, of `bytes` kept), its
 * lease and slots let go (a failure's slot held on as long as it ran, as a job item's: lib/jobs/feed.ts),
 * and its crawl stopped at its limit or ended when nothing is left.
 */
async function ender(
  crawl: Crawl,
  piece: Piece,
  message: PageMessage,
  end: PageEnd,
  work: { fetched?: boolean; bytes?: number; heldOnMs?: number } = {},
): Promise<"done"> {
  const ended = await endPage(crawl.id, message.key, end);
  const [counted] = await Promise.all([
    ended &&
      count(crawl.id, {
        ...(end.status === "failed" ? { failed: 1 } : {}),
        ...(end.status === "skipped" && end.reason ? { skipped: { [end.reason]: 1 } } : {}),
        ...(end.charged ? { charged: end.charged } : {}),
        ...(work.fetched ? { fetched: 1 } : {}),
        ...(work.bytes ? { bytes: work.bytes } : {}),
      }),
    unmark(crawl.id, message.key),
    closeLease(piece),
  ]);
  const finish = async () => {
    const now = counted || (await getCrawl(crawl.id));
    if (now?.status !== "running") return;
    if (!now.stoppedAt && now.delivered >= Number(now.request.limit)) await stopCrawl(now, "limit");
    // A page it found has not ended (by its counts, each page's added before this read): that page's end looks.
    else if (!now.stoppedAt && unended(now) > 0) return;
    await finishIfIdle(crawl.id);
  };
  // Its slot goes (and the account's next page is sent) while the crawl is seen to whether it is done.
  await Promise.all([itemDone(message, crawl.accountId, work.heldOnMs), finish()]);
  return "done";
}

/**
 * Runs page `message` if it is to run: "done" when the message is spent, "busy" when a live worker
 * holds the page (the message comes back later). Failures of our own are thrown: the queue delivers
 * the message again, and at its last delivery the page fails, free (lib/jobs/attempt.ts).
 */
export async function runPage(message: PageMessage, receiveCount: number, now = Date.now(), workerLimitMs = WORKER_LIMIT_MS): Promise<"done" | "busy"> {
  const piece = pagePiece({ id: message.crawlId, accountId: message.accountId }, message.key);
  const endBy = now + workerLimitMs - WORKER_MARGIN_MS;
  // The crawl read while its page is taken (a page row exists only under its crawl).
  const [crawl, taken] = await Promise.all([getCrawl(message.crawlId), takeLease<CrawlPage>(piece, endBy + LEASE_MARGIN_MS, receiveCount, message.slot, now)]);
  if (!crawl || crawl.accountId !== message.accountId) {
    if (taken) await Promise.all([putBack(message.crawlId, message.key), closeLease(piece)]);
    await itemDone(message, message.accountId);
    return "done";
  }
  if (!taken) {
    // Held by a live worker: it runs (this message comes back). Else it has ended (its marker goes, if
    // its worker stopped before removing it), or waits for a message of its own: this one is spent.
    const page = await getPage(crawl.id, message.key);
    if (page?.status === "running" && (page.leaseUntil ?? 0) >= now) return heldElsewhere(piece, receiveCount);
    if (page && page.status !== "queued" && page.status !== "running") await unmark(crawl.id, message.key);
    await itemDone(message, crawl.accountId);
    return "done";
  }
  const end = (made: PageEnd, work?: Parameters<typeof ender>[4]) => ender(crawl, piece, message, made, work);
  if (crawl.stoppedAt || crawl.status !== "running") return end({ status: "skipped", reason: crawl.stopped ?? "cancelled", charged: 0 });
  // Its bounds in work: pages fetched whatever became of them, and bytes kept.
  if ((crawl.fetched ?? 0) >= maxFetched(Number(crawl.request.limit)) || (crawl.bytes ?? 0) >= CRAWL_MAX_BYTES) {
    await stopCrawl(crawl, "limit");
    return end({ status: "skipped", reason: "limit", charged: 0 });
  }
  const request = await openRequest(crawl.request as KeptRequest<CrawlRequest>, crawl.secretKey, contextOf(crawl.id));
  const { origin, host } = new URL(message.url);
  const start = taken.foundBy === "start" && request.source !== "links";
  const at = Math.min(endBy, now + PAGE_MS + (start ? SITEMAPS_MS : 0));
  // A slot of its host (robots.txt is a request there too), then its turn after the last request's Crawl-delay; else it comes back then.
  const holder = randomUUID();
  const slot = await enterHost(crawl.accountId, host, holder, at + LEASE_MARGIN_MS);
  if ("until" in slot) {
    await later(crawl, piece, message, Math.max(1, (slot.until - Date.now()) / 1000));
    return "done";
  }
  // Let go of once (a failure to is logged: the slot's lease ends it).
  let left: Promise<void> | null = null;
  const leaveHost = () =>
    (left ??= releaseHostSlot(crawl.accountId, host, slot.index, holder).catch((error: unknown) =>
      log.warn("a crawl's host slot could not be let go; its lease ends it", { crawlId: crawl.id, host, error: describeError(error) }),
    ));
  try {
    const robots = await robotsFor(crawl.id, origin, AbortSignal.timeout(15_000));
    if (robots.closed) return await end({ status: "skipped", reason: "robots", charged: 0, error: `The site's ${robots.closed}.` });
    if (!robots.allows(message.url)) return await end({ status: "skipped", reason: "robots", charged: 0 });
    // A copy read within maxAge (docs/crawl.md) asks the site nothing.
    const copyKey = request.maxAge ? copyKeyOf(crawl.accountId, message.url, readWay(request)) : null;
    const kept = copyKey ? await copySince(copyKey, Date.now() - request.maxAge! * 1000) : null;
    // Not one this crawl kept (its page delivered again after its worker stopped: it is read again, at its price).
    const copy = kept && !kept.outputKey.startsWith(`${JOBS_PREFIX}${crawl.id}/`) ? kept : null;
    const turn = robots.crawlDelay > 0 && !copy ? await takeHostTurn(crawl.accountId, host, robots.crawlDelay * 1000, now) : null;
    if (turn) {
      await leaveHost();
      await later(crawl, piece, message, Math.max(1, (turn.at - Date.now()) / 1000));
      return "done";
    }
    await runAttempt(crawl, request, message, piece, taken, robots, receiveCount, now, at, leaveHost, copy);
  } finally {
    await leaveHost();
  }
  return "done";
}

/**
 * Waits a while for a slot of `host` for `holder` (until `leaseUntil` at most), backing off: its
 * index; else when to come back (a Retry-After's end, or in a second).
 */
async function enterHost(accountId: string, host: string, holder: string, leaseUntil: number): Promise<{ index: number } | { until: number }> {
  const giveUpAt = Date.now() + HOST_WAIT_MS;
  for (let wait = 10; ; wait = Math.min(2 * wait, 200)) {
    const slot = await takeHostSlot(accountId, host, holder, leaseUntil);
    if ("index" in slot) return slot;
    if (slot.until !== null) return { until: slot.until };
    if (Date.now() + wait > giveUpAt) return { until: Date.now() + 1000 };
    await sleep(wait);
  }
}

/** Attempts page `message`, taken (`taken`) and in its host's slot (let go by `leaveHost`), by `at`: charged after the work. */
async function runAttempt(
  crawl: Crawl,
  request: CrawlRequest,
  message: PageMessage,
  piece: Piece,
  taken: CrawlPage,
  robots: Robots,
  receiveCount: number,
  now: number,
  at: number,
  leaveHost: () => Promise<void>,
  copy: PageCopy | null,
): Promise<void> {
  const end = (made: PageEnd, work?: Parameters<typeof ender>[4]) => ender(crawl, piece, message, made, work);
  await attempt<Made>(
    {
      piece,
      lease: taken,
      receiveCount,
      price: (made) => (made.kind === "delivered" ? { amount: priceOf(made), endpoint: "crawl", hold: crawl.id } : null),
      budget: { at, timeout: renderTimeout(`The page did not load within the crawl's ${PAGE_MS / 1000} s for a page.`) },
      work: (deadline) => readPage(crawl, request, message, taken, robots, deadline, leaveHost, copy).finally(leaveHost),
      succeeded: async (made, charge) => {
        if (made.kind === "retry") {
          const retries = (message.retries ?? 0) + 1;
          if (retries >= MAX_RETRIES) {
            await end(
              { status: "failed", charged: 0, httpStatus: made.httpStatus, error: `The page answered HTTP ${made.httpStatus} ${retries} times.` },
              { fetched: true },
            );
            return;
          }
          await later(crawl, piece, message, made.after, retries);
          return;
        }
        // What the ledger charged it: a page read again after its worker died is charged once, at its first price.
        const charged = made.kind === "delivered" ? (charge?.amount ?? priceOf(made)) : 0;
        await end({ ...made.end, charged }, { fetched: true, bytes: made.kind === "delivered" ? made.bytes : 0 });
      },
      failed: async (error, how) => {
        await end({ status: "failed", charged: 0, error: error.message }, { fetched: true, heldOnMs: how.ours ? 0 : how.ranMs });
      },
    },
    now,
  );
}
