import type { Page } from "puppeteer-core";
import { withComposerPage } from "./browser.js";
import { chromiumFormat, type ImageOutput } from "./encode.js";

// Mockups are composed as an HTML/CSS template in a browser that is already running (the composer,
// see browser.ts): the capture as an image at its own device scale (so no resampling blur), inside a
// browser window or a phone, on a gradient or a solid colour, with padding, rounded corners and a soft
// shadow. Far faster than compositing in JS (jimp took 3-5 s at 2560x1600).
// The backdrop (background + shadow) is smooth, so it is rendered at a quarter of the pixels and
// scaled up, and cached per layout: rasterizing a large blur and gradient at full scale was most of
// a mockup's cost.

export interface MockupOptions extends ImageOutput {
  readonly background: string;
  readonly padding: number;
  readonly borderRadius: number;
  readonly shadow: boolean;
  readonly frame: "browser" | "phone" | "none";
  readonly darkMode: boolean;
  readonly deviceScaleFactor: number;
  /** The page's host for the browser bar; null for HTML input (no address to show). */
  readonly host: string | null;
}

/** Height of the browser window's title bar, CSS px. */
export const BROWSER_BAR_HEIGHT = 40;
/** Width of the phone's bezel around the screen, CSS px. */
export const PHONE_BEZEL = 14;
/** Height of the phone's status bar (time, island, battery) above the page, CSS px. */
export const PHONE_STATUS_BAR = 48;
/** A phone's corners are never squarer than this, whatever borderRadius says (CSS px). */
const PHONE_MIN_RADIUS = 48;

/** The default background: a soft violet -> pink -> peach diagonal. */
const DEFAULT_GRADIENT = "linear-gradient(135deg, #a78bfa 0%, #f472b6 52%, #fdba74 100%)";

const SHADOW = "0 32px 64px -16px rgba(15, 23, 42, 0.45), 0 14px 28px -12px rgba(15, 23, 42, 0.35)";

/** The framed window's size and the whole image's size, in CSS px, for a capture of `width` x `height`. */
export function mockupLayout(width: number, height: number, options: Pick<MockupOptions, "frame" | "padding">) {
  const frameX = options.frame === "phone" ? 2 * PHONE_BEZEL : 0;
  const frameY = options.frame === "phone" ? 2 * PHONE_BEZEL + PHONE_STATUS_BAR : options.frame === "browser" ? BROWSER_BAR_HEIGHT : 0;
  const windowWidth = width + frameX;
  const windowHeight = height + frameY;
  return { windowWidth, windowHeight, width: windowWidth + 2 * options.padding, height: windowHeight + 2 * options.padding };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The template, everything inline, no network. `backdrop`: "render" draws only the background and the
 * window's shadow (the window itself transparent); a data URL uses that image as the background and
 * draws the window without a shadow; null draws everything in one pass.
 */
export function mockupHtml(imageUrl: string, width: number, height: number, options: MockupOptions, backdrop: "render" | string | null = null): string {
  const layout = mockupLayout(width, height, options);
  const background =
    backdrop !== null && backdrop !== "render"
      ? `url(${backdrop}) 0 0 / 100% 100% no-repeat`
      : options.background === "gradient"
        ? DEFAULT_GRADIENT
        : options.background;
  const shadow = options.shadow && (backdrop === null || backdrop === "render") ? SHADOW : "none";
  const dark = options.darkMode;
  const image = `<img src="${imageUrl}" width="${width}" height="${height}" alt="">`;
  let frame: string;
  if (backdrop === "render") {
    frame = `<div class="window backdrop${options.frame === "phone" ? " phone-shape" : ""}"></div>`;
  } else if (options.frame === "browser") {
    const host = options.host ? `<div class="address">${escapeHtml(options.host)}</div>` : "";
    frame = `<div class="window browser"><div class="bar"><i style="background:#ff5f57"></i><i style="background:#febc2e"></i><i style="background:#28c840"></i>${host}</div>${image}</div>`;
  } else if (options.frame === "phone") {
    frame = `<div class="window phone"><div class="screen"><div class="status"><span class="time">9:41</span><span class="island"></span>
<span class="icons"><span class="signal"><b></b><b></b><b></b><b></b></span><span class="battery"><b></b></span></span></div>${image}</div></div>`;
  } else {
    frame = `<div class="window">${image}</div>`;
  }
  const phoneRadius = Math.max(options.borderRadius, PHONE_MIN_RADIUS);
  return `<!doctype html><html><head><meta charset="utf-8"><style>
* { margin: 0; padding: 0; box-sizing: border-box; }
html, body { width: ${layout.width}px; height: ${layout.height}px; overflow: hidden; }
body { background: ${background}; display: flex; align-items: center; justify-content: center;
  font-family: -apple-system, "Segoe UI", "Open Sans", sans-serif; }
img { display: block; }
.window { position: relative; width: ${layout.windowWidth}px; height: ${layout.windowHeight}px;
  border-radius: ${options.borderRadius}px; overflow: hidden; box-shadow: ${shadow}; }
.window::after { content: ""; position: absolute; inset: 0; border-radius: inherit; pointer-events: none;
  box-shadow: inset 0 0 0 1px ${dark ? "rgba(255,255,255,0.08)" : "rgba(15,23,42,0.08)"}; }
.browser { background: ${dark ? "#1f2024" : "#ffffff"}; }
.bar { position: relative; height: ${BROWSER_BAR_HEIGHT}px; display: flex; align-items: center; gap: 8px; padding: 0 16px;
  background: ${dark ? "#2a2b30" : "#f3f4f6"}; border-bottom: 1px solid ${dark ? "#3a3b41" : "#e5e7eb"}; }
.bar i { width: 12px; height: 12px; border-radius: 50%; }
.address { position: absolute; left: 50%; transform: translateX(-50%); min-width: 34%; max-width: 56%; height: 24px; padding: 0 16px;
  text-align: center;
  border-radius: 7px; background: ${dark ? "#1c1d21" : "#ffffff"}; color: ${dark ? "#c9cbd1" : "#4b5563"};
  box-shadow: ${dark ? "none" : "0 0 0 1px #e5e7eb"}; font-size: 13px; line-height: 24px; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
.backdrop.window::after { display: none; }
.backdrop.phone-shape { border-radius: ${phoneRadius}px; }
.phone { border-radius: ${phoneRadius}px; padding: ${PHONE_BEZEL}px; background: #0b0b0f; }
.phone::after { box-shadow: inset 0 0 0 2px #34343c, inset 0 0 0 4px #0b0b0f; }
.screen { position: relative; overflow: hidden; border-radius: ${phoneRadius - PHONE_BEZEL}px; background: ${dark ? "#000" : "#fff"}; }
.status { position: relative; height: ${PHONE_STATUS_BAR}px; display: flex; align-items: center; justify-content: space-between;
  padding: 4px 26px 0; color: ${dark ? "#fff" : "#000"}; font-size: 15px; font-weight: 600; }
.island { position: absolute; top: 9px; left: 50%; transform: translateX(-50%); width: ${Math.min(120, Math.round(width * 0.31))}px; height: 33px;
  border-radius: 17px; background: #000; }
.icons { display: flex; align-items: center; gap: 6px; }
.signal { display: flex; align-items: flex-end; gap: 2px; height: 11px; }
.signal b { width: 3px; background: currentColor; border-radius: 1px; }
.signal b:nth-child(1) { height: 4px; } .signal b:nth-child(2) { height: 6px; } .signal b:nth-child(3) { height: 8px; } .signal b:nth-child(4) { height: 11px; }
.battery { position: relative; width: 24px; height: 12px; border: 1.5px solid currentColor; border-radius: 4px; opacity: 0.9; padding: 1.5px; }
.battery::after { content: ""; position: absolute; right: -4px; top: 3px; width: 2px; height: 4px; border-radius: 1px; background: currentColor; }
.battery b { display: block; width: 80%; height: 100%; border-radius: 1.5px; background: currentColor; }
</style></head><body>${frame}</body></html>`;
}

// Backdrops are rendered at this fraction of the device scale (a quarter of the pixels at 0.5).
const BACKDROP_SCALE = 0.5;
const BACKDROP_CACHE_SIZE = 16;
const backdrops = new Map<string, string>();

/** The background + shadow for this layout as a data URL, from the cache or rendered now. */
async function backdropFor(page: Page, width: number, height: number, options: MockupOptions): Promise<string> {
  const key = JSON.stringify([
    width,
    height,
    options.frame,
    options.padding,
    options.borderRadius,
    options.shadow,
    options.background,
    options.deviceScaleFactor,
  ]);
  const cached = backdrops.get(key);
  if (cached) {
    backdrops.delete(key);
    backdrops.set(key, cached);
    return cached;
  }
  const layout = mockupLayout(width, height, options);
  await page.setViewport({ width: layout.width, height: layout.height, deviceScaleFactor: options.deviceScaleFactor * BACKDROP_SCALE });
  await page.setContent(mockupHtml("", width, height, options, "render"), { waitUntil: "load" });
  // The viewport is exactly the image: no clip, which would cost a relayout.
  const png = await page.screenshot({ type: "png", optimizeForSpeed: true });
  const url = `data:image/png;base64,${Buffer.from(png).toString("base64")}`;
  backdrops.set(key, url);
  if (backdrops.size > BACKDROP_CACHE_SIZE) backdrops.delete(backdrops.keys().next().value!);
  return url;
}

/** Composes `capture` (a PNG of `width` x `height` CSS px at the device scale) into the mockup, encoded in chromiumFormat(options). */
export async function composeMockup(capture: Buffer, width: number, height: number, options: MockupOptions): Promise<Buffer> {
  const layout = mockupLayout(width, height, options);
  return withComposerPage(async (page) => {
    const backdrop = await backdropFor(page, width, height, options);
    await page.setViewport({ width: layout.width, height: layout.height, deviceScaleFactor: options.deviceScaleFactor });
    await page.setContent(mockupHtml(`data:image/png;base64,${capture.toString("base64")}`, width, height, options, backdrop), { waitUntil: "load" });
    const type = chromiumFormat(options);
    return Buffer.from(await page.screenshot({ type, ...(type === "png" ? { optimizeForSpeed: true } : { quality: options.quality }) }));
  });
}
