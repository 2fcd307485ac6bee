import type { Page } from "puppeteer-core";
import type { Sharp } from "sharp";
import { recall, remember } from "../../lru.js";
import { escapeHtml } from "../../text.js";
import { withComposerPage } from "../browser.js";
import { chromiumFormat, finishImage, type ImageOutput, loadSharp } from "../encode.js";
import type { MockupFrame } from "../options.js";
import { captureTiles, needsTiles } from "../tiles.js";
import { BACKGROUND_PRESETS, isBackgroundPreset } from "./backgrounds.js";
import { type Box, composeOver, type Frame, frameBytes, frameFrom, type Pixels } from "./mockup-frame.js";

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
  /** The capture may be transparent. */
  readonly omitBackground: boolean;
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
 * The template, everything inline, no network. `imageUrl`: the capture as a data URL, or a hex colour
 * that fills the capture's box (the frame's own drawings, lib/render/mockup/mockup-frame.ts). `backdrop`: "render" draws only the background and the
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
  const image = content(
    imageUrl.startsWith("#")
      ? `<div class="capture" style="width:${width}px;height:${height}px;background:${imageUrl}"></div>`
      : `<img class="capture" src="${imageUrl}" width="${width}" height="${height}" alt="">`,
  );
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
.capture { display: block; }
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
.lid .capture { border-radius: 2px; }
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

/** What a layout's drawing depends on, but for the address in the browser bar. */
const layoutKey = (width: number, height: number, options: MockupOptions) =>
  JSON.stringify([
    width,
    height,
    options.frame,
    options.padding,
    options.borderRadius,
    options.shadow,
    options.background,
    options.deviceScaleFactor,
    options.darkMode,
  ]);

/** The background + shadow for this layout as a data URL, from the cache or rendered now. */
async function backdropFor(page: Page, width: number, height: number, options: MockupOptions): Promise<string> {
  const key = layoutKey(width, height, { ...options, darkMode: false });
  const cached = recall(backdrops, key);
  if (cached) return cached;
  const layout = mockupLayout(width, height, options);
  await page.setViewport({ width: layout.width, height: layout.height, deviceScaleFactor: options.deviceScaleFactor * BACKDROP_SCALE });
  await page.setContent(mockupHtml("", width, height, options, "render"), { waitUntil: "load" });
  // The viewport is exactly the image: no clip, which would cost a relayout.
  const png = await page.screenshot({ type: "png", optimizeForSpeed: true });
  return remember(backdrops, key, `data:image/png;base64,${Buffer.from(png).toString("base64")}`, BACKDROP_CACHE_SIZE);
}

// Frames kept as pixels (lib/render/mockup/mockup-frame.ts) for layouts met more than once: a layout's
// first mockup is drawn whole by the composer, its second draws the frame (about the cost of one
// more mockup), every later one is composed in Node. A full-page mockup's layout (its height) is
// usually met once, and pays nothing for this. Frames take 16 MB each at 1280x800 and 2x.
const FRAME_CACHE_BYTES = 96 * 2 ** 20;
const MAX_FRAME_BYTES = 32 * 2 ** 20;
const SEEN_LAYOUTS = 64;
const ADDRESS_CACHE_SIZE = 64;
const seenLayouts = new Map<string, true>();
// Layouts whose frame cannot be kept (it lies over the capture's inside): drawn whole, not tried again.
const undrawable = new Map<string, true>();
const frames = new Map<string, Frame>();
const drawing = new Map<string, Promise<Frame | null>>();
const addresses = new Map<string, Promise<Pixels>>();

let composedOverFrames = 0;

/** Frames held, the bytes they take, and mockups composed over them so far (tests see that the cache is used and stays bounded). */
export function frameCacheStats() {
  return { frames: frames.size, bytes: [...frames.values()].reduce((sum, frame) => sum + frameBytes(frame), 0), composed: composedOverFrames };
}

/** Keeps `frame` for `key` within FRAME_CACHE_BYTES, the least recently used dropped first. */
function keepFrame(key: string, frame: Frame) {
  if (frameBytes(frame) > MAX_FRAME_BYTES) return;
  remember(frames, key, frame, Number.POSITIVE_INFINITY);
  while (frameCacheStats().bytes > FRAME_CACHE_BYTES) frames.delete(frames.keys().next().value!);
}

/** Device pixels of a CSS rectangle at a whole `scale`. */
const scaled = (box: Box, scale: number): Box => ({ x: box.x * scale, y: box.y * scale, width: box.width * scale, height: box.height * scale });

/** A PNG as RGB pixels. */
async function rgbOf(png: Uint8Array): Promise<Buffer> {
  return (await loadSharp())(png, { limitInputPixels: false }).removeAlpha().raw().toBuffer();
}

/** The client rectangle of the element `selector` in the composer's page, CSS px. */
const boxOf = (page: Page, selector: string): Promise<Box> =>
  page.$eval(selector, (element) => {
    const { x, y, width, height } = element.getBoundingClientRect();
    return { x, y, width, height };
  });

/**
 * Draws the frame of this layout (no address in the bar): whole with the capture's box black, then
 * the box's edges white, as deep as any frame reaches into it (a phone's screen corners at most).
 */
async function drawFrame(page: Page, width: number, height: number, options: MockupOptions): Promise<Frame | null> {
  const scale = options.deviceScaleFactor;
  const layout = mockupLayout(width, height, options);
  const backdrop = await backdropFor(page, width, height, options);
  await page.setViewport({ width: layout.width, height: layout.height, deviceScaleFactor: scale });
  await page.setContent(mockupHtml("#000000", width, height, { ...options, host: null }, backdrop), { waitUntil: "load" });
  const box = await boxOf(page, ".capture");
  // The capture must sit on whole pixels (it does in every frame: padding and insets are whole CSS px).
  if (![box.x, box.y, box.width, box.height].every(Number.isInteger)) return null;
  const base = await rgbOf(await page.screenshot({ type: "png", optimizeForSpeed: true }));
  await page.$eval(".capture", (element) => {
    (element as HTMLElement).style.background = "#ffffff";
  });
  const inset = Math.min(Math.max(options.borderRadius, PHONE_MIN_RADIUS, TABLET_MIN_RADIUS) + 2, Math.floor(box.width / 2), Math.floor(box.height / 2));
  const edges = [
    { ...box, height: inset },
    { ...box, y: box.y + box.height - inset, height: inset },
    { ...box, y: box.y + inset, width: inset, height: box.height - 2 * inset },
    { ...box, x: box.x + box.width - inset, y: box.y + inset, width: inset, height: box.height - 2 * inset },
  ].filter((edge) => edge.width > 0 && edge.height > 0);
  const whites: Pixels[] = [];
  for (const edge of edges)
    whites.push({ ...scaled(edge, scale), rgb: await rgbOf(await page.screenshot({ type: "png", optimizeForSpeed: true, clip: edge })) });
  return frameFrom(base, layout.width * scale, layout.height * scale, scaled(box, scale), inset * scale, whites);
}

/** The browser bar's address showing `host`, as drawn at its place in the bar of a window `windowWidth` wide (the bar's top left is 0, 0). */
async function drawAddress(page: Page, windowWidth: number, options: MockupOptions): Promise<Pixels> {
  const scale = options.deviceScaleFactor;
  // The bar alone: the same window, no capture, padding or rounding (neither reaches the address).
  await page.setViewport({ width: windowWidth, height: BROWSER_BAR_HEIGHT, deviceScaleFactor: scale });
  await page.setContent(mockupHtml("#000000", windowWidth, 0, { ...options, padding: 0, borderRadius: 0, shadow: false }), { waitUntil: "load" });
  const address = await boxOf(page, ".address");
  // Its 1 px outline and its edges' antialiasing included, out to whole pixels.
  const x = Math.max(0, Math.floor(address.x) - 2);
  const right = Math.min(windowWidth, Math.ceil(address.x + address.width) + 2);
  const y = Math.max(0, Math.floor(address.y) - 2);
  const bottom = Math.min(BROWSER_BAR_HEIGHT - 1, Math.ceil(address.y + address.height) + 2);
  const clip = { x, y, width: right - x, height: bottom - y };
  return { ...scaled(clip, scale), rgb: await rgbOf(await page.screenshot({ type: "png", optimizeForSpeed: true, clip })) };
}

/** The frame for this layout if it is kept or worth drawing now (its second time, on a composer page), else null. */
async function frameFor(width: number, height: number, options: MockupOptions): Promise<Frame | null> {
  const key = layoutKey(width, height, options);
  const kept = recall(frames, key);
  if (kept) return kept;
  const pending = drawing.get(key);
  if (pending) return pending;
  if (undrawable.has(key)) return null;
  if (!seenLayouts.has(key)) {
    remember(seenLayouts, key, true, SEEN_LAYOUTS);
    return null;
  }
  const drawn = withComposerPage((page) => drawFrame(page, width, height, options)).finally(() => drawing.delete(key));
  drawing.set(key, drawn);
  const frame = await drawn;
  if (frame) keepFrame(key, frame);
  else remember(undrawable, key, true, SEEN_LAYOUTS);
  return frame;
}

/** The browser bar's address for `host`, kept per host and bar (drawn on a composer page when it is not). */
function addressFor(windowWidth: number, options: MockupOptions): Promise<Pixels> {
  const key = JSON.stringify([options.host, windowWidth, options.darkMode, options.deviceScaleFactor]);
  const kept = recall(addresses, key);
  if (kept) return kept;
  const drawn = withComposerPage((page) => drawAddress(page, windowWidth, options));
  drawn.catch(() => addresses.delete(key));
  return remember(addresses, key, drawn, ADDRESS_CACHE_SIZE);
}

/**
 * The mockup composed in Node over this layout's kept frame, encoded in chromiumFormat(options)
 * (or not yet encoded when sharp has more to do: a thumbnail, AVIF); null when it must be
 * drawn whole: a layout met for the first time, a capture that may be transparent, a fractional
 * device scale (the capture would not sit on whole pixels), or a frame that lies over the capture's inside.
 */
async function composeOverFrame(capture: Buffer, width: number, height: number, options: MockupOptions): Promise<Buffer | Sharp | null> {
  if (options.omitBackground || !Number.isInteger(options.deviceScaleFactor)) return null;
  const frame = await frameFor(width, height, options);
  if (!frame) return null;
  const sharp = await loadSharp();
  const { data, info } = await sharp(capture, { limitInputPixels: false }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.width !== frame.box.width || info.height !== frame.box.height) return null;
  const patches: Pixels[] = [];
  if (options.frame === "browser" && options.host) {
    const windowWidth = mockupLayout(width, height, options).windowWidth;
    const address = await addressFor(windowWidth, options);
    // In a narrow window with round corners the address reaches the corners, which the bar alone does not round.
    const corner = (options.borderRadius + 2) * options.deviceScaleFactor;
    if (address.x < corner || address.x + address.width > windowWidth * options.deviceScaleFactor - corner) return null;
    // The bar lies right above the capture, as wide as the window.
    patches.push({ ...address, x: frame.box.x + address.x, y: frame.box.y - BROWSER_BAR_HEIGHT * options.deviceScaleFactor + address.y });
  }
  composedOverFrames++;
  const raw = { raw: { width: frame.width, height: frame.height, channels: 3 as const }, limitInputPixels: false };
  // More work for sharp (a thumbnail, AVIF): the pipeline, over pixels of its own.
  if (chromiumFormat(options) !== options.format) return sharp(composeOver(frame, data, patches), raw);
  // Encoded here, so the pixels' buffer is free again afterwards: the next mockup of this size reuses it.
  const out = scratch?.length === frame.base.length ? scratch : undefined;
  scratch = null;
  const pixels = composeOver(frame, data, patches, out);
  const encoded = await finishImage(sharp(pixels, raw), options);
  scratch = pixels;
  return encoded;
}

/** The last composed mockup's pixels, free for the next one of its size. */
let scratch: Buffer | null = null;

/**
 * Composes `capture` (a PNG of `width` x `height` CSS px at the device scale) into the mockup:
 * encoded in chromiumFormat(options) when the composer drew it, or not yet encoded (a layout met
 * before, composed over its frame; or, past Chromium's one-piece limit, captured in tiles).
 */
export async function composeMockup(capture: Buffer, width: number, height: number, options: MockupOptions): Promise<Buffer | Sharp> {
  const layout = mockupLayout(width, height, options);
  const whole = { x: 0, y: 0, width: layout.width, height: layout.height };
  const tiled = needsTiles(whole, options.deviceScaleFactor);
  // Over a kept frame (with a kept address) no composer page is needed at all.
  const composed = tiled ? null : await composeOverFrame(capture, width, height, options);
  if (composed) return composed;
  return withComposerPage(async (page) => {
    const image = () => `data:image/png;base64,${capture.toString("base64")}`;
    if (tiled) {
      // One pass (the backdrop would be as large), in tiles, from a viewport of ordinary size.
      await page.setViewport({ width: layout.width, height: Math.min(layout.height, 2000), deviceScaleFactor: options.deviceScaleFactor });
      await page.setContent(mockupHtml(image(), width, height, options), { waitUntil: "load" });
      return captureTiles(page, whole, options.deviceScaleFactor, { omitBackground: false, beyondViewport: true });
    }
    const backdrop = await backdropFor(page, width, height, options);
    await page.setViewport({ width: layout.width, height: layout.height, deviceScaleFactor: options.deviceScaleFactor });
    await page.setContent(mockupHtml(image(), width, height, options, backdrop), { waitUntil: "load" });
    const type = chromiumFormat(options);
    return Buffer.from(await page.screenshot({ type, ...(type === "png" ? { optimizeForSpeed: true } : { quality: options.quality }) }));
  });
}
