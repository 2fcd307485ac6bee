import { setTimeout as sleep } from "node:timers/promises";
import type { HTTPRequest, Page } from "puppeteer-core";
import { TimeoutError } from "puppeteer-core";
import { REVEAL } from "./anti-flicker.js";
import { applyControls } from "./controls.js";
import { type ConsentState, dismissCookieBanners } from "./cookie-banners.js";
import { renderTimeout } from "./errors.js";
import { hanByLanguage, MIXED_HAN_FORMS } from "./han.js";
import type { CaptureOptions } from "./options.js";
import type { LoadedPage } from "./page-load.js";

// Settling: what happens between the `load` event and the capture (docs/api.md, "What a render
// does"): network quiet, web fonts, anti-flicker snippets revealed, cookie banners, the page controls (styles, click, script),
// waitForSelector, delay, and for a full page one
// scroll through it so lazy content loads. All within the page-load limit.

// Caps of the courtesy waits after `load`; each ends the wait, never the render.
const NETWORK_QUIET_MS = 100;
const NETWORK_QUIET_CAP_MS = 1_500;
const FONTS_CAP_MS = 2_000;

// One turn of the page's event loop: when it has run, a request the page started in answer to what
// came before (a load or click handler, a timer of 0) has been reported, since the browser reports
// events in order. (Waiting for a frame as well cost every render ~70 ms, with nothing more seen.)
const PAGE_TURN = "new Promise((resolve) => setTimeout(resolve, 0))";

/** Counts the page's requests in flight, so "network quiet" costs nothing on a page that has been quiet long enough. */
export function trackRequests(page: Page) {
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
    /**
     * Resolves once nothing has been in flight for NETWORK_QUIET_MS, a window that begins no
     * earlier than `since` (what the page does after a click is seen only after the click), or at
     * `capMs`. It first lets the page take a turn, so requests it is about to start are counted:
     * an instant with nothing in flight *yet* is not quiet.
     */
    async quiet(capMs: number, since = 0) {
      const until = Date.now() + capMs;
      const left = () => Math.max(0, until - Date.now());
      await Promise.race([page.evaluate(PAGE_TURN).catch(() => undefined), sleep(left())]);
      // Long-lived requests (event streams, websockets) would never finish: they do not count.
      const settled = () => [...inFlight].every((r) => r.resourceType() === "eventsource" || r.resourceType() === "websocket");
      for (;;) {
        const quietFor = Date.now() - Math.max(lastChange, since);
        if (settled() && quietFor >= NETWORK_QUIET_MS) return;
        if (left() === 0) return;
        await sleep(Math.min(left(), settled() ? NETWORK_QUIET_MS - quietFor : 25));
      }
    },
  };
}

export type RequestTracker = ReturnType<typeof trackRequests>;

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

/** The height to capture in CSS px, and whether the page was cut (at MAX_CAPTURE_HEIGHT, or to keep within MAX_OUTPUT_PIXELS). */
export interface Settled {
  readonly height: number;
  readonly truncated: boolean;
}

/** Waits until the loaded page is ready to capture, as `options` ask; `maxHeight` is the tallest full page allowed (lib/render/limits.ts). */
export async function settle(
  loaded: LoadedPage,
  requests: RequestTracker,
  consent: ConsentState | undefined,
  options: CaptureOptions,
  viewportHeight: number,
  maxHeight: number,
): Promise<Settled> {
  const { page, remaining, loadSeconds, evaluate } = loaded;
  await requests.quiet(Math.min(NETWORK_QUIET_CAP_MS, remaining()));
  // An A/B-testing tool's script that has not come by now is not waited for: its snippet's hiding goes.
  await evaluate(REVEAL);
  // A page that mixes languages in Han draws each element's in its language's forms.
  const forms = await evaluate<string[]>(MIXED_HAN_FORMS);
  if (forms.length > 0) await evaluate(hanByLanguage(forms));
  await Promise.race([evaluate(FONTS_READY), sleep(Math.max(0, Math.min(FONTS_CAP_MS, remaining())))]);
  if (consent) await dismissCookieBanners(page, consent, Math.max(0, remaining()));
  await applyControls(loaded, (capMs, since) => requests.quiet(capMs, since), options);
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
  if (!options.fullPage) return { height: viewportHeight, truncated: false };
  await evaluate(SCROLL_THROUGH(maxHeight));
  const scrolled = Date.now();
  const settleMs = Math.min(NETWORK_QUIET_CAP_MS, Math.max(0, remaining()));
  await requests.quiet(settleMs, scrolled);
  await Promise.race([evaluate(IMAGES_SETTLED), sleep(settleMs)]);
  const full = await evaluate<number>(DOCUMENT_HEIGHT);
  return { height: Math.max(viewportHeight, Math.min(full, maxHeight)), truncated: full > maxHeight };
}
