import type { Page } from "puppeteer-core";
import { orTimeout } from "../deadline.js";
import { AppError, invalidParams } from "../errors.js";
import { renderTimeout } from "./errors.js";
import { localeOf, timezoneOf } from "./geo.js";
import type { CaptureOptions, Clip, RenderSource } from "./options.js";
import type { LoadedPage } from "./page-load.js";
import { mediaTypeOf } from "./pdf.js";

// Page controls (docs/api.md, "Page controls"), each a small step that capture() and settle() call:
// emulation before the page loads; styles, a click and a script after it; the part to capture.

/** How long a click is given to settle the page (network quiet), at most. */
const CLICK_SETTLE_MS = 1_500;

/** A selector no element matched (422 SELECTOR_NOT_FOUND), naming the field. */
const notFound = (field: string, selector: string) => new AppError("SELECTOR_NOT_FOUND", `${field}: no element matches "${selector}" on the page.`);

/** Every selector a request sends, by field, so that one that is not CSS is refused before the page loads. */
export function selectorsOf(options: CaptureOptions): [field: string, selector: string][] {
  const single = { waitForSelector: options.waitForSelector, selector: options.selector, click: options.click };
  return [
    ...Object.entries(single).flatMap(([field, selector]): [string, string][] => (selector ? [[field, selector]] : [])),
    ...options.hideSelectors.map((selector): [string, string] => ["hideSelectors", selector]),
    ...options.removeSelectors.map((selector): [string, string] => ["removeSelectors", selector]),
  ];
}

/** Refuses (400) a selector that is not valid CSS: it would otherwise time out, match nothing, or break out of the stylesheet it goes into. */
export async function assertValidSelectors(page: Page, selectors: [field: string, selector: string][]): Promise<void> {
  if (!selectors.length) return;
  const invalid = (await page.evaluate(`(() => {
    for (const [field, selector] of ${JSON.stringify(selectors)}) {
      try { document.createDocumentFragment().querySelector(selector); } catch { return field + ": \\"" + selector + "\\" is not a valid CSS selector."; }
    }
    return null;
  })()`)) as string | null;
  if (invalid) throw invalidParams(`Invalid request: ${invalid}`);
}

/** Before the page loads: time zone, locale, position, media (the user agent is the viewport's, lib/render/viewport.ts). */
export async function emulate(page: Page, options: CaptureOptions, source: RenderSource): Promise<void> {
  const timezone = timezoneOf(options);
  const locale = localeOf(options);
  if (timezone) await page.emulateTimezone(timezone);
  if (locale) {
    await page.emulateLocale(locale);
    await page.setExtraHTTPHeaders({ "Accept-Language": locale });
    await page.evaluateOnNewDocument(
      `Object.defineProperty(navigator, "language", { get: () => ${JSON.stringify(locale)} });
       Object.defineProperty(navigator, "languages", { get: () => [${JSON.stringify(locale)}] });`,
    );
  }
  if (options.geolocation && source.kind === "url") {
    await page.browserContext().overridePermissions(new URL(source.url).origin, ["geolocation"]);
    await page.setGeolocation({ ...options.geolocation, accuracy: options.geolocation.accuracy ?? 10 });
  }
  // One call for the media type and the features: puppeteer's emulateMediaType and
  // emulateMediaFeatures each send Emulation.setEmulatedMedia, and each undoes the other's. The
  // session stays attached (its emulation ends with it) and closes with the page.
  const session = await page.createCDPSession();
  await session.send("Emulation.setEmulatedMedia", {
    media: mediaTypeOf(options),
    features: [
      { name: "prefers-color-scheme", value: options.darkMode ? "dark" : "light" },
      { name: "prefers-reduced-motion", value: options.reducedMotion ? "reduce" : "no-preference" },
    ],
  });
  // Our stylesheet must apply even where the page's Content-Security-Policy forbids inline styles.
  if (options.css || options.hideSelectors.length || options.removeSelectors.length) await page.setBypassCSP(true);
}

/** The stylesheet of `css`, `hideSelectors` and `removeSelectors`: rules, so content that loads later is caught too. */
function stylesheet(options: CaptureOptions): string {
  const rules = [
    ...options.hideSelectors.map((s) => `${s} { visibility: hidden !important; }`),
    ...options.removeSelectors.map((s) => `${s} { display: none !important; }`),
  ];
  return [options.css ?? "", ...rules].join("\n");
}

/** After load and cookie banners: the stylesheet, the click (then `quiet`, the network-quiet wait), then the script, within the page-load limit. */
export async function applyControls(loaded: LoadedPage, quiet: (capMs: number, since: number) => Promise<void>, options: CaptureOptions): Promise<void> {
  const { page, remaining, loadSeconds, evaluate } = loaded;
  const css = stylesheet(options);
  if (css.trim()) await page.addStyleTag({ content: css });
  if (options.click) {
    const target = await page.$(options.click);
    if (!target) throw notFound("click", options.click);
    const clicked = Date.now();
    await target.click().catch((error: unknown) => {
      throw new AppError("SELECTOR_NOT_FOUND", `click: the element "${options.click}" could not be clicked (it is hidden or covered).`, { cause: error });
    });
    // A quiet window after the click: its handler's requests may not have started yet.
    await quiet(Math.min(CLICK_SETTLE_MS, Math.max(0, remaining())), clicked);
    await evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
  }
  if (options.js) {
    const run = evaluate(`(async () => {\n${options.js}\n})()`).catch((error: unknown) => {
      throw invalidParams(`Invalid request: js: the script failed: ${String((error as Error).message ?? error).slice(0, 300)}`);
    });
    await orTimeout(run, Math.max(0, remaining()), () => {
      throw renderTimeout(`js did not finish within the ${loadSeconds} s page-load limit.`);
    });
  }
}

/** The part of the page to capture, in CSS px of the document: the element's border box (scrolled into view) or the clip; null for the viewport or full page. */
export async function captureArea(loaded: LoadedPage, options: CaptureOptions): Promise<Clip | null> {
  if (options.clip) return options.clip;
  if (!options.selector) return null;
  const box = await loaded.evaluate<Clip | null>(`(() => {
    const element = document.querySelector(${JSON.stringify(options.selector)});
    if (!element) return null;
    element.scrollIntoView({ block: "center", inline: "center" });
    const r = element.getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  })()`);
  if (!box) throw notFound("selector", options.selector);
  if (box.width < 1 || box.height < 1) throw new AppError("SELECTOR_NOT_FOUND", `selector: the element "${options.selector}" has no size to capture.`);
  return box;
}
