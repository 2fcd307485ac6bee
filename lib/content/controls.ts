import type { CaptureOptions } from "../render/options.js";

/**
 * The page controls set in `options` that act only in a browser (a fetch loads nothing the page
 * refers to, so the blocking controls need none): with any, `auto` renders, and `never` refuses them.
 */
export function browserControls(options: CaptureOptions): string[] {
  const set = {
    timezone: options.timezone !== undefined,
    geolocation: options.geolocation !== undefined,
    waitForSelector: options.waitForSelector !== undefined,
    waitUntil: options.waitUntil !== undefined && options.waitUntil !== "load",
    delay: options.delay > 0,
    click: options.click !== undefined,
    js: options.js !== undefined,
    css: options.css !== undefined,
    hideSelectors: options.hideSelectors.length > 0,
    removeSelectors: options.removeSelectors.length > 0,
    blockCookieBanners: options.blockCookieBanners,
    // What the page did is recorded in the browser only.
    capture: options.capture !== undefined,
    // The static path fetches without the browser's guard session, which is what speaks to a proxy.
    proxy: options.proxy !== undefined,
  };
  return Object.entries(set).flatMap(([field, on]) => (on ? [field] : []));
}
