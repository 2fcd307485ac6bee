import type { HTTPRequest, Page } from "puppeteer-core";
import { describeError, log } from "../../log.js";
import { localeOf } from "../geo.js";
import type { CaptureOptions, RenderSource } from "../options.js";
import type { FilterList } from "../packaging/filter-build.js";
import { blockedByLists, loadFilterLists } from "./filter-lists.js";

// Request controls (docs/api.md, "Page controls"): cookies for the target, extra headers and basic
// auth on the target's own origin only (credentials never go to a third party), and requests not
// made at all (URL patterns, resource types, the ad and tracker lists). Whatever is let through
// still goes through the render's network guard.

/**
 * Whether `url` matches a blockRequests `pattern` (whole URL, case-insensitive; `*` matches any run
 * of characters, everything else itself). Linear in the lengths, whatever the pattern: a regular
 * expression of many `.*` backtracks without end on a long URL the page chose, blocking the process.
 */
export function matchesPattern(pattern: string, url: string): boolean {
  const p = pattern.toLowerCase();
  const u = url.toLowerCase();
  let i = 0;
  let j = 0;
  // Where the last `*` was, and where in the URL its match would next be extended.
  let star = -1;
  let resume = 0;
  while (j < u.length) {
    if (i < p.length && p[i] !== "*" && p[i] === u[j]) {
      i++;
      j++;
    } else if (i < p.length && p[i] === "*") {
      star = i++;
      resume = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++resume;
    } else {
      return false;
    }
  }
  while (p[i] === "*") i++;
  return i === p.length;
}

/** Told of each request the controls did not let out: its URL, resource type, and which control. */
export type OnBlocked = (url: string, type: string, why: string) => void;

/** Sets the request controls on a page before it loads; intercepts requests only when a control needs it. */
export async function applyRequestControls(page: Page, options: CaptureOptions, source: RenderSource, onBlocked?: OnBlocked): Promise<void> {
  // The schema refuses these with HTML (lib/api/schemas.ts): only a URL has an origin of its own.
  if (source.kind !== "url") return intercept(page, options, null, {}, onBlocked);
  const target = new URL(source.url);
  if (options.cookies.length) {
    await page.setCookie(...options.cookies.map(({ domain, path, ...cookie }) => ({ ...cookie, domain: domain ?? target.hostname, path: path ?? "/" })));
  }
  return intercept(page, options, target.origin, credentialHeaders(options), onBlocked);
}

/** The extra headers and basic auth a request sends to its target's origin. */
function credentialHeaders(options: CaptureOptions): Record<string, string> {
  const extra: Record<string, string> = { ...options.headers };
  if (options.httpAuth) extra.authorization = `Basic ${Buffer.from(`${options.httpAuth.username}:${options.httpAuth.password}`).toString("base64")}`;
  return extra;
}

/**
 * `options` for a page at `target` of a crawl whose credentials (extra headers, basic auth, cookies)
 * belong to `owner`'s origin: as they are there, without them anywhere else (a browser sends them to
 * the origin of the page it opens).
 */
export function credentialsOnlyFor(options: CaptureOptions, target: string, owner: string): CaptureOptions {
  if (new URL(target).origin === new URL(owner).origin) return options;
  const { httpAuth: _auth, ...rest } = options;
  return { ...rest, headers: {}, cookies: [] };
}

/**
 * The same controls for a fetch without a browser (lib/content's static path), as the headers of
 * each request of a redirect chain: the user agent and locale on every hop, the extra headers, basic
 * auth and cookies only on the target's origin (a cookie also by its path and `secure`).
 */
export function fetchHeadersFor(options: CaptureOptions, target: string): (hop: URL) => Record<string, string> {
  const { origin } = new URL(target);
  const locale = localeOf(options);
  const everywhere: Record<string, string> = {
    ...(options.userAgent ? { "user-agent": options.userAgent } : {}),
    ...(locale ? { "accept-language": locale } : {}),
  };
  const credentials = credentialHeaders(options);
  return (hop) => {
    if (hop.origin !== origin) return everywhere;
    const cookies = options.cookies.filter((c) => (!c.secure || hop.protocol === "https:") && hop.pathname.startsWith(c.path ?? "/"));
    return { ...everywhere, ...credentials, ...(cookies.length ? { cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; ") } : {}) };
  };
}

/** A transparent 1x1 GIF. */
const EMPTY_GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/**
 * Answers a blocked request without the network: an image gets a transparent pixel and a frame an
 * empty page, so the capture shows an empty slot where the page would otherwise draw a broken-image
 * icon or the browser's "blocked" error page; anything else fails, as a blocked request does.
 */
function standIn(request: HTTPRequest): Promise<void> {
  const type = request.resourceType();
  if (type === "image") return request.respond({ status: 200, contentType: "image/gif", body: EMPTY_GIF });
  if (type === "document") return request.respond({ status: 200, contentType: "text/html", body: "" });
  return request.abort("blockedbyclient");
}

/** Intercepts the page's requests when a control needs it: blocked ones aborted, `extra` headers added on `origin`. */
async function intercept(page: Page, options: CaptureOptions, origin: string | null, extra: Record<string, string>, onBlocked?: OnBlocked): Promise<void> {
  const patterns = options.blockRequests;
  const types = new Set<string>(options.blockResources);
  const lists: FilterList[] = [...(options.blockAds ? ["ads" as const] : []), ...(options.blockTrackers ? ["trackers" as const] : [])];
  const adds = Object.keys(extra).length > 0;
  if (!adds && !patterns.length && !types.size && !lists.length) return;
  await loadFilterLists(lists);
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    if (request.isInterceptResolutionHandled()) return;
    const url = request.url();
    const settle = (work: Promise<void>) => work.catch((error: unknown) => log.debug("request control", { url, error: describeError(error) }));
    // The page itself is never blocked: only what it loads.
    const document = request.isNavigationRequest() && request.frame() === page.mainFrame();
    const type = request.resourceType();
    const blocked = document
      ? null
      : types.has(type)
        ? "blockResources"
        : patterns.some((pattern) => matchesPattern(pattern, url))
          ? "blockRequests"
          : blockedByLists(lists, url, type, page.url())
            ? "the ad and tracker lists"
            : null;
    if (blocked) {
      onBlocked?.(url, type, `blocked by ${blocked}`);
      return void settle(standIn(request));
    }
    if (adds && origin !== null && URL.canParse(url) && new URL(url).origin === origin) {
      return void settle(request.continue({ headers: { ...request.headers(), ...extra } }));
    }
    void settle(request.continue());
  });
}
