import type { Page } from "puppeteer-core";
import type { Sharp } from "sharp";
import { loadSharp } from "./encode.js";
import type { Clip } from "./options.js";

// Chromium captures at most 8,192 device pixels along either side in one piece: past that the image
// starts over (a 20,000 px page at 1x came back with bands 9-20 repeating bands 1-12; at 2x from
// 4,096 CSS px, at 3x from 2,731; a 3840 px wide page at 3x repeated its left side on the right).
// Larger areas are captured in tiles within that limit and stitched with sharp (libvips), which
// also encodes the whole. Fixed elements stay where the page puts them: each tile is a clip of the
// same layout (captureBeyondViewport), not a scrolled viewport, so a fixed header appears once.

/** Device pixels along either side of one capture that Chromium gets right (measured at 1x, 2x, 3x). */
export const MAX_TILE_SIDE = 8192;

/** Device pixels of one tile at most: its decoded RGBA stays near 64 MB. */
const MAX_TILE_PIXELS = 16_000_000;

/** Whether `area` (CSS px) at `scale` is too large for one capture. */
export const needsTiles = (area: Clip, scale: number): boolean =>
  Math.round(area.width * scale) > MAX_TILE_SIDE || Math.round(area.height * scale) > MAX_TILE_SIDE;

/**
 * Time allowed for our own work on a capture in tiles (tiles, stitching, encoding), per Mpx of
 * output. A whole tiled request measured 144-161 ms per Mpx on two slow cores (`npm run bench`,
 * 32 Mpx), twice that when two renders share the cores, and 264 ms per Mpx for a 25.6 Mpx capture
 * of a page that grows while it is captured, with both cores busy elsewhere. This is a bound for a
 * page that wedges the capture, not an estimate, so it errs long: the request's deadline still caps it.
 */
const TILED_MS_PER_MPX = 400;

/** The time a capture of `area` at `scale` may take past the capture's usual reserve: only a capture in tiles (a mockup's twice) needs it. */
export const tiledCaptureMs = (area: Clip, scale: number, mockup: boolean): number =>
  needsTiles(area, scale) ? Math.round(((area.width * area.height * scale * scale) / 1e6) * TILED_MS_PER_MPX * (mockup ? 2 : 1)) : 0;

/** The largest CSS length at most `limit` device px whose device length is whole at `scale` (tiles meet on pixel edges). */
function alignedLength(limit: number, scale: number): number {
  const most = Math.floor(limit / scale);
  for (let length = most; length > most / 2; length--) {
    if (Math.abs(length * scale - Math.round(length * scale)) < 1e-6) return length;
  }
  return most;
}

/** The tiles covering `area` (CSS px), row by row, each within MAX_TILE_SIDE and MAX_TILE_PIXELS at `scale`. */
export function tilesFor(area: Clip, scale: number): Clip[] {
  const tileWidth = alignedLength(Math.min(MAX_TILE_SIDE, area.width * scale), scale) || area.width;
  const tileHeight = alignedLength(Math.min(MAX_TILE_SIDE, MAX_TILE_PIXELS / Math.round(tileWidth * scale)), scale);
  const tiles: Clip[] = [];
  for (let y = 0; y < area.height; y += tileHeight) {
    for (let x = 0; x < area.width; x += tileWidth) {
      tiles.push({ x: area.x + x, y: area.y + y, width: Math.min(tileWidth, area.width - x), height: Math.min(tileHeight, area.height - y) });
    }
  }
  return tiles;
}

/**
 * Captures `area` of the page (CSS px of the document) in tiles and stitches them into one image of
 * `area` x `scale` device px, not yet encoded (lib/render/encode.ts). `beyondViewport`: the area is
 * part of the whole layout (a full page, an element); otherwise it is the viewport as shown.
 */
export async function captureTiles(page: Page, area: Clip, scale: number, options: { omitBackground: boolean; beyondViewport: boolean }): Promise<Sharp> {
  const sharp = await loadSharp();
  const layers: { input: Buffer; left: number; top: number }[] = [];
  for (const tile of tilesFor(area, scale)) {
    // Lossless tiles (zlib's fast setting: they are decoded at once); the whole is encoded once.
    const input = Buffer.from(
      await page.screenshot({
        type: "png",
        optimizeForSpeed: true,
        clip: tile,
        captureBeyondViewport: options.beyondViewport,
        omitBackground: options.omitBackground,
      }),
    );
    layers.push({ input, left: Math.round((tile.x - area.x) * scale), top: Math.round((tile.y - area.y) * scale) });
  }
  return sharp({
    create: { width: Math.round(area.width * scale), height: Math.round(area.height * scale), channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
    limitInputPixels: false,
  }).composite(layers);
}
