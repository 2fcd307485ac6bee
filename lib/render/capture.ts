import { setTimeout as sleep } from "node:timers/promises";
import type { HTTPRequest, HTTPResponse, Page } from "puppeteer-core";
import { TimeoutError } from "puppeteer-core";
import { config } from "../config.js";
import { invalidParams } from "../http/errors.js";
import { PHONE_VIEWPORT, type ScreenshotRequest } from "../http/schemas.js";
import { withPage, type PageSession } from "./browser.js";
import { dismissCookieBanners, prepareCookieBanners } from "./cookie-banners.js";
import { guardFailure, invalidUrl, renderTimeout, translateNavigationError, translateRenderError } from "./errors.js";
import { imageSize } from "./image-size.js";
import { composeMockup } from "./mockup.js";

/** What to render: a URL, or a raw HTML document. */
export type RenderSource = { kind: "url"; url: string } | { kind: "html"; html: string };

/** The capture options of a screenshot request (everything but the source and the response form). */
export type CaptureOptions = Omit<ScreenshotRequest, "url" | "responseFormat">;

export type OutputFormat = "png" | "jpeg" | "pdf";

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
  /** The page was taller than MAX_CAPTURE_HEIGHT and was cut there. */
  readonly truncated: boolean;
  readonly renderMs: number;
}

export const CONTENT_TYPES: Record<OutputFormat, string> = { png: "image/png", jpeg: "image/jpeg", pdf: "application/pdf" };

/** Full-page captures stop at this many CSS pixels (SPEC.md). */
export const MAX_CAPTURE_HEIGHT = 20_000;

// Caps of the load steps after the `load` event; each is a courtesy wait, never a failure.
const NETWORK_QUIET_MS = 100;
const NETWORK_QUIET_CAP_MS = 1_500;
const FONTS_CAP_MS = 2_000;
// Time kept back from the request deadline for the capture itself and the response.
const CAPTURE_RESERVE_MS = 3_000;

/** Counts the page's requests in flight, so "network quiet" costs nothing on a page that is already quiet. */
function trackRequests(page: Page) {
  const inFlight = new Set<HTTPRequest>();
  let lastChange = Date.now();
  const done = (request: HTTPRequest) => {
    if (inFlight.delete(request)) lastChange = Date.now();
  };
  page.on("request", (request) => {
    inFlight.add(request);
    lastChange = Date.now();
  });
  page.on("requestfinished", done);
  page.on("requestfailed", done);
  return {
    /** Resolves when nothing has been in flight for NETWORK_QUIET_MS, or at `capMs`. */
    async quiet(capMs: number) {
      const until = Date.now() + capMs;
      // Long-lived requests (event streams, long polls) would never finish: they do not count after 1 s.
      const settled = () => [...inFlight].every((r) => r.resourceType() === "eventsource" || r.resourceType() === "websocket");
      if (settled()) return;
      while (Date.now() < until) {
        await sleep(25);
        if (settled() && Date.now() - lastChange >= NETWORK_QUIET_MS) return;
      }
    },
  };
}

// In-page scripts are strings: functions passed to page.evaluate would carry the names a bundler or
// tsx injects (`__name(...)`), which do not exist in the page.

// Scrolls through the page once so lazy-loaded content (loading=lazy, IntersectionObserver) loads, then back to the top.
const SCROLL_THROUGH = (limit: number) => `(async () => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 16)));
  const step = Math.max(200, Math.floor(window.innerHeight * 0.9));
  for (let y = 0; y < Math.min(document.documentElement.scrollHeight, ${limit}); y += step) {
    window.scrollTo(0, y);
    await frame();
  }
  window.scrollTo(0, 0);
  await frame();
})()`;

// Resolves when every image in the document has loaded or failed.
const IMAGES_SETTLED = `Promise.all(Array.from(document.images).filter((img) => !img.complete).map((img) =>
  new Promise((resolve) => { img.addEventListener("load", resolve, { once: true }); img.addEventListener("error", resolve, { once: true }); })))`;

// Height of the whole document in CSS pixels.
const DOCUMENT_HEIGHT = `Math.ceil(Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0))`;

const FONTS_READY = `document.fonts.ready.then(() => true)`;

/** Refuses a waitForSelector that is not CSS before any loading (it would otherwise just time out). */
async function assertValidSelector(page: Page, selector: string) {
  const valid = await page.evaluate(`(() => { try { document.createDocumentFragment().querySelector(${JSON.stringify(selector)}); return true; } catch { return false; } })()`);
  if (!valid) throw invalidParams(`Invalid request: waitForSelector: "${selector}" is not a valid CSS selector.`);
}

/**
 * The time a page may take to load, counted from `slotAt` (when its render got a browser slot:
 * queueing behind other renders is not the page's time): the page-load limit, within the request's
 * `deadline` less what the capture and the response need.
 */
export const pageLoadBudget = (deadline: number, slotAt = Date.now()) => Math.min(config.PAGE_LOAD_TIMEOUT_MS, deadline - CAPTURE_RESERVE_MS - slotAt);

/**
 * Loads the source to its `load` event: a navigation failure or an HTTP error status becomes our
 * error. Returns a function telling the last main-frame document requested (where a redirect chain ended).
 */
export async function navigate(session: PageSession, source: RenderSource, budgetMs: number, loadSeconds: number): Promise<() => string | undefined> {
  const { page, guard } = session;
  let documentUrl: string | undefined = source.kind === "url" ? source.url : undefined;
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) documentUrl = request.url();
  });
  let response: HTTPResponse | null;
  try {
    response =
      source.kind === "url"
        ? await page.goto(source.url, { waitUntil: "load", timeout: budgetMs })
        : (await page.setContent(source.html, { waitUntil: "load", timeout: budgetMs }), null);
  } catch (error) {
    throw translateNavigationError(error, documentUrl, guard, loadSeconds);
  }
  if (response && response.status() >= 400) {
    const refused = guardFailure(response.url(), guard);
    throw invalidUrl(refused ?? `${response.url()} answered HTTP ${response.status()}`);
  }
  return () => documentUrl;
}

// What puppeteer says when the page navigated away under an evaluation.
const NAVIGATED = /Execution context was destroyed|Cannot find context with specified id|frame got detached/i;

/** Renders `source` with `options` and captures it, all before `deadline` (epoch ms). */
export async function capture(source: RenderSource, options: CaptureOptions, deadline: number): Promise<Capture> {
  const started = Date.now();

  const mockup = options.style === "mockup";
  const phone = mockup && options.frame === "phone";
  // A phone mockup without a width renders the page as a phone does (SPEC.md): 390 wide, mobile
  // emulation, touch. Any phone frame defaults to a phone's proportions rather than 16:10.
  const mobile = phone && !options.widthGiven;
  const height = options.height ?? (phone ? Math.round((options.width * PHONE_VIEWPORT.height) / PHONE_VIEWPORT.width) : Math.round((options.width * 10) / 16));

  const work = withPage(async (session) => {
    // The page-load clock starts once this render has a browser slot: time spent queued behind
    // other renders is not the page's; it still counts against the request's own deadline.
    const slotAt = Date.now();
    const pageLoadMs = pageLoadBudget(deadline, slotAt);
    const loadSeconds = Math.round(pageLoadMs / 1000);
    if (pageLoadMs <= 0) throw renderTimeout("There was no time left to load the page.");
    const loadDeadline = slotAt + pageLoadMs;
    const remaining = () => loadDeadline - Date.now();
    const { page } = session;
    await page.setUserAgent(mobile ? session.userAgents.mobile : session.userAgents.desktop);
    await page.setViewport({ width: options.width, height, deviceScaleFactor: options.deviceScaleFactor, isMobile: mobile, hasTouch: mobile });
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: options.darkMode ? "dark" : "light" }]);
    const requests = trackRequests(page);
    if (options.waitForSelector) await assertValidSelector(page, options.waitForSelector);
    const consent = options.blockCookieBanners ? await prepareCookieBanners(page) : undefined;

    const lastDocument = await navigate(session, source, pageLoadMs, loadSeconds);
    // A page may navigate by itself after load (script or meta-refresh redirects): then wait for the
    // new document and run the step again.
    const evaluate = async <T>(script: string): Promise<T> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return (await page.evaluate(script)) as T;
        } catch (error) {
          if (attempt >= 2 || !NAVIGATED.test(String(error))) throw error;
          await page.waitForNavigation({ waitUntil: "load", timeout: Math.max(1, remaining()) }).catch(() => undefined);
        }
      }
    };
    await requests.quiet(Math.min(NETWORK_QUIET_CAP_MS, remaining()));
    await Promise.race([evaluate(FONTS_READY), sleep(Math.max(0, Math.min(FONTS_CAP_MS, remaining())))]);

    if (consent) await dismissCookieBanners(page, consent, Math.max(0, remaining()));
    if (options.waitForSelector) {
      const selector = options.waitForSelector;
      try {
        await page.waitForSelector(selector, { timeout: Math.max(1, remaining()) });
      } catch (error) {
        if (error instanceof TimeoutError) throw renderTimeout(`waitForSelector "${selector}" did not appear within ${loadSeconds} s.`, error);
        throw error;
      }
    }
    if (options.delay > 0) {
      if (options.delay > remaining()) throw renderTimeout(`The page load plus a delay of ${options.delay} ms would exceed ${loadSeconds} s.`);
      await sleep(options.delay);
    }

    let clipHeight = height;
    let truncated = false;
    if (options.fullPage) {
      await evaluate(SCROLL_THROUGH(MAX_CAPTURE_HEIGHT));
      const settleMs = Math.min(NETWORK_QUIET_CAP_MS, Math.max(0, remaining()));
      await requests.quiet(settleMs);
      await Promise.race([evaluate(IMAGES_SETTLED), sleep(settleMs)]);
      const full = await evaluate<number>(DOCUMENT_HEIGHT);
      truncated = full > MAX_CAPTURE_HEIGHT;
      clipHeight = Math.max(height, Math.min(full, MAX_CAPTURE_HEIGHT));
    }
    // A later navigation that failed (refused by the guard, unreachable) leaves Chromium's error page.
    if (page.url().startsWith("chrome-error:")) {
      const last = lastDocument();
      throw invalidUrl((last && guardFailure(last, session.guard)) ?? "the page navigated to an address that could not be loaded");
    }
    const finalUrl = source.kind === "url" ? page.url() : null;
    const title = await evaluate<string>("document.title");

    try {
      if (options.format === "pdf") {
        await page.emulateMediaType("screen");
        const body = Buffer.from(
          await page.pdf({ width: `${options.width}px`, height: `${clipHeight}px`, printBackground: true, pageRanges: "1", margin: { top: 0, right: 0, bottom: 0, left: 0 } }),
        );
        return { body, width: options.width, height: clipHeight, title, finalUrl, truncated };
      }
      const shot = Buffer.from(
        await page.screenshot({
          // A mockup composes a lossless capture; zlib's fast setting, since it is decoded at once.
          ...(mockup ? { type: "png" as const, optimizeForSpeed: true } : { type: options.format }),
          ...(!mockup && options.format === "jpeg" ? { quality: options.quality } : {}),
          ...(options.fullPage ? { clip: { x: 0, y: 0, width: options.width, height: clipHeight }, captureBeyondViewport: true } : {}),
        }),
      );
      const body = mockup
        ? await composeMockup(shot, options.width, clipHeight, {
            ...options,
            format: options.format === "jpeg" ? "jpeg" : "png",
            host: source.kind === "url" && finalUrl ? new URL(finalUrl).host : null,
          })
        : shot;
      const size = imageSize(body) ?? { width: Math.round(options.width * options.deviceScaleFactor), height: Math.round(clipHeight * options.deviceScaleFactor) };
      return { body, ...size, title, finalUrl, truncated };
    } catch (error) {
      throw translateRenderError(error);
    }
  });

  // The whole render, capture included, must answer before the request deadline.
  let timer: NodeJS.Timeout | undefined;
  const overtime = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(renderTimeout(`The page did not finish rendering within ${Math.round((deadline - started) / 1000)} s.`)), deadline - started);
  });
  try {
    const result = await Promise.race([work, overtime]);
    return {
      body: result.body,
      format: options.format,
      contentType: CONTENT_TYPES[options.format],
      width: result.width,
      height: result.height,
      url: source.kind === "url" ? (result.finalUrl ?? source.url) : null,
      title: result.title,
      truncated: result.truncated,
      renderMs: Date.now() - started,
    };
  } catch (error) {
    throw translateRenderError(error);
  } finally {
    clearTimeout(timer);
    // A render abandoned at the deadline still closes its context (withPage's finally) when it settles.
    work.catch(() => undefined);
  }
}
