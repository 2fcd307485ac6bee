import type { Page } from "puppeteer-core";
import type { Sharp } from "sharp";
import { escapeHtml } from "../text.js";
import { BACKGROUND_PRESETS, isBackgroundPreset } from "./backgrounds.js";
import { withComposerPage } from "./browser.js";
import { chromiumFormat, type ImageOutput } from "./encode.js";
import type { MockupFrame } from "./options.js";
import { captureTiles, needsTiles } from "./tiles.js";

// Mockups are composed as an HTML/CSS template in a browser that is already running (the composer,
// see browser.ts): the capture as an image at its own device scale (so no resampling blur), inside a
// browser window, a phone, a tablet or a laptop, on a named background or a solid colour, with padding, rounded corners and a soft
// shadow. Far faster than compositing in JS (jimp took 3-5 s at 2560x1600).
// The backdrop (background + shadow) is smooth, so it is rendered at a quarter of the pixels and
// scaled up, and cached per layout: rasterizing a large blur and gradient at full scale was most of
// a mockup's cost.

export interface MockupOptions extends ImageOutput {
  readonly background: string;
  readonly padding: number;
  readonly borderRadius: number;
  readonly shadow: boolean;
  readonly frame: MockupFrame;
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
/** The tablet's even bezel, its status bar (time and date, wifi, battery) and its least corner radius, CSS px. */
export const TABLET_BEZEL = 20;
export const TABLET_STATUS_BAR = 24;
const TABLET_MIN_RADIUS = 36;
/** The laptop's lid: bezel at the sides and bottom, a deeper one at the top (the camera); the base below it, CSS px. */
export const LAPTOP_BEZEL = 16;
export const LAPTOP_TOP_BEZEL = 24;
export const LAPTOP_BASE = 20;
const LAPTOP_MIN_RADIUS = 16;

/** How far the laptop's base reaches past its lid on each side: 6% of the screen, at least 24 px. */
export const laptopOverhang = (width: number) => Math.max(24, Math.round(width * 0.06));

const SHADOW = "0 32px 64px -16px rgba(15, 23, 42, 0.45), 0 14px 28px -12px rgba(15, 23, 42, 0.35)";

/** What each frame adds around the capture (CSS px): at each side, above and below. */
function frameInsets(frame: MockupFrame, width: number) {
  switch (frame) {
    case "browser":
      return { x: 0, top: BROWSER_BAR_HEIGHT, bottom: 0 };
    case "phone":
      return { x: PHONE_BEZEL, top: PHONE_BEZEL + PHONE_STATUS_BAR, bottom: PHONE_BEZEL };
    case "tablet":
      return { x: TABLET_BEZEL, top: TABLET_BEZEL + TABLET_STATUS_BAR, bottom: TABLET_BEZEL };
    case "laptop":
      return { x: LAPTOP_BEZEL + laptopOverhang(width), top: LAPTOP_TOP_BEZEL, bottom: LAPTOP_BEZEL + LAPTOP_BASE };
    case "none":
      return { x: 0, top: 0, bottom: 0 };
  }
}

/** The framed window's (device's) size and the whole image's size, in CSS px, for a capture of `width` x `height`. */
export function mockupLayout(width: number, height: number, options: Pick<MockupOptions, "frame" | "padding">) {
  const inset = frameInsets(options.frame, width);
  const windowWidth = width + 2 * inset.x;
  const windowHeight = height + inset.top + inset.bottom;
  return { windowWidth, windowHeight, width: windowWidth + 2 * options.padding, height: windowHeight + 2 * options.padding };
}

// Status bar icons, drawn in currentColor.
const WIFI = `<svg width="16" height="12" viewBox="0 0 16 12"><path fill="currentColor" d="M8 2.2c2.3 0 4.4.9 6 2.4l1.2-1.3A10.4 10.4 0 0 0 8 .4 10.4 10.4 0 0 0 .8 3.3L2 4.6a8.6 8.6 0 0 1 6-2.4Zm0 3.5c1.4 0 2.6.5 3.6 1.4l1.2-1.3A7 7 0 0 0 8 3.9a7 7 0 0 0-4.8 1.9l1.2 1.3c1-.9 2.2-1.4 3.6-1.4Zm0 3.4c.5 0 1 .2 1.3.5L8 11.2 6.7 9.6c.3-.3.8-.5 1.3-.5Z"/></svg>`;
const BATTERY = `<span class="battery"><b></b></span>`;
const SIGNAL = `<span class="signal"><b></b><b></b><b></b><b></b></span>`;

/**
 * The template, everything inline, no network. `backdrop`: "render" draws only the background and the
 * device's shadow (the device itself transparent); a data URL uses that image as the background and
 * draws the device without a shadow; null draws everything in one pass.
 */
export function mockupHtml(imageUrl: string, width: number, height: number, options: MockupOptions, backdrop: "render" | string | null = null): string {
  const layout = mockupLayout(width, height, options);
  const preset = isBackgroundPreset(options.background) ? BACKGROUND_PRESETS[options.background] : options.background;
  const background = backdrop !== null && backdrop !== "render" ? `url(${backdrop}) 0 0 / 100% 100% no-repeat` : preset;
  const shadow = options.shadow && (backdrop === null || backdrop === "render") ? SHADOW : "none";
  const dark = options.darkMode;
  // In the backdrop pass the device is drawn as its bare shapes, so that only their shadows show.
  const content = (html: string) => (backdrop === "render" ? "" : html);
  const image = content(`<img src="${imageUrl}" width="${width}" height="${height}" alt="">`);
  const frames: Record<MockupFrame, () => string> = {
    browser: () => {
      const host = options.host ? `<div class="address">${escapeHtml(options.host)}</div>` : "";
      return `<div class="window browser">${content(`<div class="bar"><i style="background:#ff5f57"></i><i style="background:#febc2e"></i><i style="background:#28c840"></i>${host}</div>`)}${image}</div>`;
    },
    phone: () =>
      `<div class="window phone">${content(`<div class="screen"><div class="status"><span class="time">9:41</span><span class="island"></span><span class="icons">${SIGNAL}${BATTERY}</span></div>${image}</div>`)}</div>`,
    tablet: () =>
      `<div class="window tablet">${content(`<span class="camera"></span><div class="screen"><div class="status"><span>9:41&nbsp;&nbsp;Mon Jun 10</span><span class="icons">${WIFI}<span>100%</span>${BATTERY}</span></div>${image}</div>`)}</div>`,
    laptop: () =>
      `<div class="window laptop"><div class="lid">${content(`<span class="camera"></span>`)}${image}</div><div class="base">${content(`<span class="lip"></span>`)}</div></div>`,
    none: () => `<div class="window">${image}</div>`,
  };
  const phoneRadius = Math.max(options.borderRadius, PHONE_MIN_RADIUS);
  const tabletRadius = Math.max(options.borderRadius, TABLET_MIN_RADIUS);
  const lidRadius = Math.max(options.borderRadius, LAPTOP_MIN_RADIUS);
  const overhang = laptopOverhang(width);
  return `<!doctype html><html><head><meta charset="utf-8"><style>
* { margin: 0; padding: 0; box-sizing: border-box; }
html, body { width: ${layout.width}px; height: ${layout.height}px; overflow: hidden; }
body { background: ${background}; display: flex; align-items: center; justify-content: center;
  font-family: -apple-system, "Segoe UI", "Open Sans", sans-serif; }
img { display: block; }
.window { position: relative; flex: none; width: ${layout.windowWidth}px; height: ${layout.windowHeight}px;
  border-radius: ${options.borderRadius}px; overflow: hidden; box-shadow: ${shadow}; }
.window::after { content: ""; position: absolute; inset: 0; border-radius: inherit; pointer-events: none;
  box-shadow: inset 0 0 0 1px ${dark ? "rgba(255,255,255,0.08)" : "rgba(15,23,42,0.08)"}; }
.backdrop .window::after, .backdrop .lid::after { display: none; }
.backdrop .window:not(.laptop), .backdrop .lid, .backdrop .base { background: transparent !important; }
.browser { background: ${dark ? "#1f2024" : "#ffffff"}; }
.bar { position: relative; height: ${BROWSER_BAR_HEIGHT}px; display: flex; align-items: center; gap: 8px; padding: 0 16px;
  background: ${dark ? "#2a2b30" : "#f3f4f6"}; border-bottom: 1px solid ${dark ? "#3a3b41" : "#e5e7eb"}; }
.bar i { width: 12px; height: 12px; border-radius: 50%; }
.address { position: absolute; left: 50%; transform: translateX(-50%); min-width: 34%; max-width: 56%; height: 24px; padding: 0 16px;
  text-align: center;
  border-radius: 7px; background: ${dark ? "#1c1d21" : "#ffffff"}; color: ${dark ? "#c9cbd1" : "#4b5563"};
  box-shadow: ${dark ? "none" : "0 0 0 1px #e5e7eb"}; font-size: 13px; line-height: 24px; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
.screen { position: relative; overflow: hidden; background: ${dark ? "#000" : "#fff"}; }
.status { position: relative; display: flex; align-items: center; justify-content: space-between; color: ${dark ? "#fff" : "#000"}; font-weight: 600; }
.icons { display: flex; align-items: center; gap: 6px; }
.signal { display: flex; align-items: flex-end; gap: 2px; height: 11px; }
.signal b { width: 3px; background: currentColor; border-radius: 1px; }
.signal b:nth-child(1) { height: 4px; } .signal b:nth-child(2) { height: 6px; } .signal b:nth-child(3) { height: 8px; } .signal b:nth-child(4) { height: 11px; }
.battery { position: relative; width: 24px; height: 12px; border: 1.5px solid currentColor; border-radius: 4px; opacity: 0.9; padding: 1.5px; }
.battery::after { content: ""; position: absolute; right: -4px; top: 3px; width: 2px; height: 4px; border-radius: 1px; background: currentColor; }
.battery b { display: block; width: 80%; height: 100%; border-radius: 1.5px; background: currentColor; }
.phone { border-radius: ${phoneRadius}px; padding: ${PHONE_BEZEL}px; background: #0b0b0f; }
.phone::after { box-shadow: inset 0 0 0 2px #34343c, inset 0 0 0 4px #0b0b0f; }
.phone .screen { border-radius: ${phoneRadius - PHONE_BEZEL}px; }
.phone .status { height: ${PHONE_STATUS_BAR}px; padding: 4px 26px 0; font-size: 15px; }
.island { position: absolute; top: 9px; left: 50%; transform: translateX(-50%); width: ${Math.min(120, Math.round(width * 0.31))}px; height: 33px;
  border-radius: 17px; background: #000; }
.tablet { border-radius: ${tabletRadius}px; padding: ${TABLET_BEZEL}px; background: #18181c; }
.tablet::after { box-shadow: inset 0 0 0 1.5px #3b3b44, inset 0 0 0 3px #18181c; }
.tablet .screen { border-radius: ${tabletRadius - TABLET_BEZEL}px; }
.tablet .status { height: ${TABLET_STATUS_BAR}px; padding: 2px 22px 0; font-size: 12px; }
.tablet .status .icons { gap: 5px; }
.tablet .camera, .lid .camera { position: absolute; left: 50%; width: 6px; height: 6px; margin-left: -3px; border-radius: 50%;
  background: radial-gradient(circle at 35% 35%, #3f4a5a 0, #15171c 70%); }
.tablet .camera { top: ${TABLET_BEZEL / 2 - 3}px; }
.laptop { overflow: visible; border-radius: 0; box-shadow: none; display: flex; flex-direction: column; align-items: center; }
.laptop::after { display: none; }
.lid { position: relative; width: ${width + 2 * LAPTOP_BEZEL}px; height: ${height + LAPTOP_TOP_BEZEL + LAPTOP_BEZEL}px;
  padding: ${LAPTOP_TOP_BEZEL}px ${LAPTOP_BEZEL}px ${LAPTOP_BEZEL}px; background: #0c0c0f;
  border-radius: ${lidRadius}px ${lidRadius}px 4px 4px; box-shadow: ${shadow}; }
.lid::after { content: ""; position: absolute; inset: 0; border-radius: inherit; box-shadow: inset 0 0 0 1.5px #34343b; }
.lid .camera { top: ${LAPTOP_TOP_BEZEL / 2 - 3}px; }
.lid img { border-radius: 2px; }
.base { position: relative; width: ${layout.windowWidth}px; height: ${LAPTOP_BASE}px; box-shadow: ${shadow};
  border-radius: 3px 3px ${Math.round(overhang * 0.6)}px ${Math.round(overhang * 0.6)}px / 3px 3px ${LAPTOP_BASE - 4}px ${LAPTOP_BASE - 4}px;
  background: ${dark ? "linear-gradient(#5b5d64, #3a3b41 45%, #222327)" : "linear-gradient(#eef0f3, #cfd2d8 45%, #a4a8b0)"}; }
.lip { position: absolute; top: 0; left: 50%; width: 15%; height: 7px; transform: translateX(-50%); border-radius: 0 0 9px 9px;
  background: ${dark ? "linear-gradient(#2a2b30, #45474d)" : "linear-gradient(#b9bcc3, #dcdee2)"}; }
</style></head><body${backdrop === "render" ? ' class="backdrop"' : ""}>${frames[options.frame]()}</body></html>`;
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

/**
 * Composes `capture` (a PNG of `width` x `height` CSS px at the device scale) into the mockup:
 * encoded in chromiumFormat(options), or, past Chromium's one-piece limit, captured in tiles and
 * not yet encoded (lib/render/tiles.ts).
 */
export async function composeMockup(capture: Buffer, width: number, height: number, options: MockupOptions): Promise<Buffer | Sharp> {
  const layout = mockupLayout(width, height, options);
  const whole = { x: 0, y: 0, width: layout.width, height: layout.height };
  const image = `data:image/png;base64,${capture.toString("base64")}`;
  return withComposerPage(async (page) => {
    if (needsTiles(whole, options.deviceScaleFactor)) {
      // One pass (the backdrop would be as large), in tiles, from a viewport of ordinary size.
      await page.setViewport({ width: layout.width, height: Math.min(layout.height, 2000), deviceScaleFactor: options.deviceScaleFactor });
      await page.setContent(mockupHtml(image, width, height, options), { waitUntil: "load" });
      return captureTiles(page, whole, options.deviceScaleFactor, { omitBackground: false, beyondViewport: true });
    }
    const backdrop = await backdropFor(page, width, height, options);
    await page.setViewport({ width: layout.width, height: layout.height, deviceScaleFactor: options.deviceScaleFactor });
    await page.setContent(mockupHtml(image, width, height, options, backdrop), { waitUntil: "load" });
    const type = chromiumFormat(options);
    return Buffer.from(await page.screenshot({ type, ...(type === "png" ? { optimizeForSpeed: true } : { quality: options.quality }) }));
  });
}
