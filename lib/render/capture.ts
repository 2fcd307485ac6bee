import { config } from "../config.js";
import { type Deadline, pageLoadLimit } from "../deadline.js";
import { withoutCredentials } from "../redacted.js";
import { cleanText, MAX_URL_CHARS } from "../text.js";
import type { PageSession } from "./browser.js";
import { assertValidSelectors, captureArea, emulate, selectorsOf } from "./controls.js";
import { prepareCookieBanners } from "./cookie-banners.js";
import { encodingMs } from "./encode.js";
import { guardFailure, invalidUrl } from "./errors.js";
import { type Geo, geoField } from "./geo.js";
import { applyRequestControls } from "./guard/requests.js";
import { parseProxy, type UpstreamProxy } from "./guard/upstream-proxy.js";
import { maxCaptureHeight } from "./limits.js";
import type { CaptureOptions, Clip, OutputFormat, RenderSource } from "./options.js";
import { type Incomplete, type LoadedPage, withLoadedPage } from "./page-load.js";
import { type PageLogs, recordPage, secretsOf } from "./page-log.js";
import { isPaged } from "./pdf.js";
import { type Settled, settle, trackRequests } from "./settle.js";
import { CONTENT_TYPES, shoot } from "./shoot.js";
import { tiledCaptureMs } from "./tiles.js";
import { userAgentFor, type Viewport, viewportFor } from "./viewport.js";

/** The page's title is cut to this many characters in answers (the final URL to MAX_URL_CHARS). */
const MAX_TITLE_CHARS = 1_000;

/** A finished capture. */
export interface Capture {
  readonly body: Buffer;
  readonly format: OutputFormat;
  readonly contentType: string;
  /** Output size: pixels for images, CSS pixels of the page for PDF. */
  readonly width: number;
  readonly height: number;
  /** The final URL after redirects; null for HTML input. */
  readonly url: string | null;
  readonly title: string;
  /** PDF pages. */
  readonly pages?: number | undefined;
  /** The page was taller than MAX_CAPTURE_HEIGHT (a paged PDF longer than MAX_PDF_PAGES) and was cut there. */
  readonly truncated: boolean;
  /** The part captured (selector's element or clip), in CSS px of the document; null for the viewport or full page. */
  readonly clip: Clip | null;
  readonly renderMs: number;
  /** Set when the page was captured as it stood at the page-load limit, its `load` never having come. */
  readonly incomplete: Incomplete | null;
  /** What the page did, when `capture` asked for it. */
  readonly logs?: PageLogs | undefined;
  /** Where `geo: "auto"` found the page's country, when it was asked. */
  readonly geo?: Geo | undefined;
}

/** A page loaded and settled as `options` ask, ready to be captured or read. */
export interface SettledPage {
  readonly loaded: LoadedPage;
  readonly settled: Settled;
  readonly viewport: Viewport;
  /** When the render began (epoch ms). */
  readonly started: number;
}

/** The longest a proxy may take to open a connection (the page-load limit's half, if shorter). */
const PROXY_HANDSHAKE_MS = 10_000;

/** Whether `options` ask for any log of what the page did. */
const recording = (options: CaptureOptions) => !!options.capture && (options.capture.har || options.capture.console || options.capture.network);

/**
 * Loads `source` with `options` and settles it, in steps: the viewport (decided once), preparing
 * the page, loading it, settling it; then runs `fn` on it before the deadline (a capture, or a
 * reading of its DOM: lib/content). With `capture`, what the page did until then comes back as `logs`.
 */
export async function withSettledPage<T extends object>(
  source: RenderSource,
  options: CaptureOptions,
  deadline: Deadline,
  fn: (page: SettledPage) => Promise<T>,
  limits: CaptureLimits = {},
): Promise<T & { readonly logs?: PageLogs }> {
  const started = Date.now();
  const viewport = viewportFor(options);
  const paged = isPaged(options);

  const prepare = async ({ page, guard, userAgents }: PageSession) => {
    // The customer's proxy carries every connection from the first; its credentials stay in the guard.
    const proxy = options.proxy === undefined ? undefined : (parseProxy(options.proxy) as UpstreamProxy);
    if (proxy) guard.useProxy(proxy, Math.min(PROXY_HANDSHAKE_MS, pageLoadLimit(deadline, config.PAGE_LOAD_TIMEOUT_MS) / 2));
    // Recording starts before anything else reaches the page.
    const recorder = recording(options)
      ? await recordPage(page, guard, options.capture!, secretsOf(options, proxy ? [proxy.username, proxy.password] : []))
      : undefined;
    // Independent settings, sent at once: their round trips to the browser overlap.
    await Promise.all([
      page.setUserAgent(userAgentFor(viewport, userAgents, options.userAgent)),
      page.setViewport({
        width: viewport.width,
        height: viewport.height,
        deviceScaleFactor: viewport.deviceScaleFactor,
        isMobile: viewport.mobile,
        hasTouch: viewport.mobile,
      }),
      emulate(page, options, source),
    ]);
    await applyRequestControls(page, options, source, recorder?.blocked);
    const requests = trackRequests(page);
    await assertValidSelectors(page, selectorsOf(options));
    const consent = options.blockCookieBanners ? await prepareCookieBanners(page) : undefined;
    return { requests, consent, recorder };
  };

  return withLoadedPage(
    source,
    deadline,
    prepare,
    async (loaded, { requests, consent, recorder }) => {
      // A paged PDF holds the whole document: it is scrolled through like a full page, so lazy content loads.
      const settled = await settle(
        loaded,
        requests,
        consent,
        { ...options, fullPage: options.fullPage || paged },
        viewport.height,
        maxCaptureHeight(viewport, options.style === "mockup", options.format, limits.maxHeight),
      );
      // A later navigation that failed (refused by the guard, unreachable) leaves Chromium's error page.
      if (loaded.page.url().startsWith("chrome-error:")) {
        const last = loaded.lastDocument();
        throw invalidUrl((last && guardFailure(last, loaded.guard)) ?? "the page navigated to an address that could not be loaded");
      }
      const result = await fn({ loaded, settled, viewport, started });
      return recorder ? { ...result, logs: await loaded.settled(() => recorder.finish()) } : result;
    },
    options.waitUntil,
  );
}

/** The page's final URL (null for HTML input) and title, as answers carry them. */
export async function pageIdentity(loaded: LoadedPage, source: RenderSource): Promise<{ url: string | null; title: string }> {
  // Credentials given in the page's URL are not said back (nor kept with a job's item or a monitor's check).
  const finalUrl = source.kind === "url" ? withoutCredentials(loaded.page.url()) : null;
  return {
    url: finalUrl && finalUrl.length > MAX_URL_CHARS ? `${finalUrl.slice(0, MAX_URL_CHARS)}…` : finalUrl,
    title: cleanText(await loaded.evaluate<string>("document.title"), MAX_TITLE_CHARS),
  };
}

/** Captures a settled page as `options` ask: the output, and what the answer says of it. */
export async function captureSettled({ loaded, settled, viewport, started }: SettledPage, source: RenderSource, options: CaptureOptions): Promise<Capture> {
  const { page } = loaded;
  const { url, title } = await pageIdentity(loaded, source);
  const clip = await loaded.settled(() => captureArea(loaded, options));
  const area = clip ?? { x: 0, y: 0, width: viewport.width, height: settled.height };
  const shot = await loaded.settled(
    () => shoot(page, viewport, area, options, source.kind === "url" ? new URL(page.url()).host : null),
    // Our own work that grows with the output: tiles and AVIF encoding.
    tiledCaptureMs(area, viewport.deviceScaleFactor, options.style === "mockup") +
      encodingMs((area.width * area.height * viewport.deviceScaleFactor ** 2) / 1e6, options.format),
  );
  return {
    body: shot.body,
    format: options.format,
    contentType: CONTENT_TYPES[options.format],
    width: shot.width,
    height: shot.height,
    url,
    title,
    pages: shot.pages,
    truncated: isPaged(options) ? shot.truncated === true : settled.truncated,
    clip,
    renderMs: Date.now() - started,
    incomplete: loaded.incomplete,
    ...geoField(options),
  };
}

/** What a render may reach besides the request's own fields: a job's item a taller full page. */
export interface CaptureLimits {
  /** The tallest full page, CSS px (default MAX_CAPTURE_HEIGHT). */
  readonly maxHeight?: number;
}

/** Renders `source` with `options` and captures it before the deadline. */
export const capture = (source: RenderSource, options: CaptureOptions, deadline: Deadline, limits: CaptureLimits = {}): Promise<Capture> =>
  withSettledPage(source, options, deadline, (page) => captureSettled(page, source, options), limits);
