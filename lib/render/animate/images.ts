import { inflateSync } from "node:zlib";
import gifenc from "gifenc";
import { loadSharp } from "../encode.js";
import type { FrameImages } from "./encoder.js";
import { animatedWebp } from "./webp.js";

// Animated GIF and WebP (docs/api.md, "Animate"). WebP: a frame at a time (./webp.ts), each a band
// of the image it was cut from (for a synthetic scroll, the one tall capture). GIF: the frames'
// images stacked into one sheet (the tall capture itself), each frame a band of its rows; the sheet quantised once to one palette for
// every frame (libimagequant, with Floyd-Steinberg dithering so gradients do not band; a palette
// per frame would flicker as the page scrolls), then each band written in that palette (gifenc's
// LZW): 1.4 CPU-s for 60 frames at 1280x720 where libvips's own GIF writer, quantising each frame,
// took 3.9.

export type AnimatedImageFormat = "gif" | "webp";

/**
 * Frame `index`'s delay in ms for frames at `fps`. GIF counts in hundredths of a second: the delays
 * are rounded where the frames fall, so that the whole lasts frames / fps however the parts round.
 */
function frameDelay(index: number, fps: number, format: AnimatedImageFormat): number {
  const step = format === "gif" ? 10 : 1;
  const at = (i: number) => Math.round((i * 1000) / fps / step) * step;
  return at(index + 1) - at(index);
}

/** Each frame's delay in ms for `frames` frames at `fps` (frameDelay). */
export const frameDelays = (frames: number, fps: number, format: AnimatedImageFormat): number[] =>
  Array.from({ length: frames }, (_, i) => frameDelay(i, fps, format));

/**
 * The frames' images as one sheet (stacked, each as it was captured: libvips decodes them as it
 * stacks them, so the sheet is held once) in one palette of at most 256 colours, as an indexed PNG,
 * and each frame's first row in it.
 */
async function palettedSheet(images: FrameImages): Promise<{ png: Buffer; tops: number[] }> {
  const sharp = await loadSharp();
  const pngs: Buffer[] = [];
  const tops: number[] = [];
  let rows = 0;
  for await (const { png, tops: cut } of images) {
    for (const top of cut) tops.push(rows + top);
    pngs.push(png);
    rows += (await sharp(png).metadata()).height;
  }
  const sheet = pngs.length === 1 ? sharp(pngs[0]!, { limitInputPixels: false }) : sharp(pngs, { join: { across: 1 }, limitInputPixels: false });
  return { png: await sheet.png({ palette: true, colours: 256, dither: 1, effort: 1, adaptiveFiltering: false }).toBuffer(), tops };
}

/**
 * Each pixel's index in the palette of an indexed PNG (colour type 3, 8 bits, not interlaced: as
 * libvips writes one), and the palette: read straight from its data, the rows unfiltered in place, so that
 * the sheet is never decoded to colours again (3 bytes a pixel, then a lookup per pixel).
 */
export function indicesOf(png: Buffer): { index: Uint8Array; palette: number[][] } {
  const idat: Buffer[] = [];
  let header: Buffer | undefined;
  let palette: number[][] = [];
  for (let at = 8; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString("ascii", at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") header = data;
    else if (type === "PLTE") palette = Array.from({ length: length / 3 }, (_, i) => [data[3 * i]!, data[3 * i + 1]!, data[3 * i + 2]!]);
    else if (type === "IDAT") idat.push(data);
    at += 12 + length;
  }
  // sharp writes a palette's indices a byte each (bitdepth 8, its default).
  if (header?.[8] !== 8 || header[9] !== 3 || header[12] !== 0) throw new Error("not an 8-bit indexed, non-interlaced PNG");
  const width = header.readUInt32BE(0);
  const rows = header.readUInt32BE(4);
  const data = inflateSync(Buffer.concat(idat.splice(0)));
  // Unfiltered in place (a byte a pixel: the left neighbour is the byte before), each row moved to its place without its filter byte.
  const out = new Uint8Array(data.buffer, data.byteOffset, width * rows);
  for (let y = 0; y < rows; y++) {
    const from = y * (width + 1) + 1;
    const filter = data[from - 1]!;
    const row = y * width;
    const up = row - width;
    for (let x = 0; x < width; x++) {
      const left = x > 0 ? out[row + x - 1]! : 0;
      const above = y > 0 ? out[up + x]! : 0;
      let value = data[from + x]!;
      if (filter === 1) value += left;
      else if (filter === 2) value += above;
      else if (filter === 3) value += (left + above) >> 1;
      else if (filter === 4) {
        const corner = x > 0 && y > 0 ? out[up + x - 1]! : 0;
        const p = left + above - corner;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - above);
        const pc = Math.abs(p - corner);
        value += pa <= pb && pa <= pc ? left : pb <= pc ? above : corner;
      }
      out[row + x] = value & 0xff;
    }
  }
  return { index: out, palette };
}

/** An animated image of the frames of `images`, each `size` (device px), shown at `fps`. */
export async function encodeAnimatedImage(
  format: AnimatedImageFormat,
  size: { width: number; height: number },
  fps: number,
  images: FrameImages,
): Promise<Buffer> {
  const { width, height } = size;
  if (format === "webp") {
    // A frame at a time, each image decoded as it comes (a live one as it is captured), its frames views of it.
    const sharp = await loadSharp();
    const webp = animatedWebp(width, height);
    let frame = 0;
    for await (const { png, tops } of images) {
      const { data } = await sharp(png, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      for (const top of tops) await webp.add(data.subarray(top * width * 4, (top + height) * width * 4), frameDelay(frame++, fps, format));
    }
    return webp.finish();
  }
  const paletted = await palettedSheet(images);
  const { tops } = paletted;
  const delays = frameDelays(tops.length, fps, format);
  const { index, palette } = indicesOf(paletted.png);
  // Each frame's bytes taken as it is written: the file is put together once, at the end (gifenc's
  // own buffer grows by copying, and held the file up to three times over).
  const gif = gifenc.GIFEncoder({ auto: false });
  const parts: Buffer[] = [];
  const take = () => {
    parts.push(Buffer.from(gif.bytes()));
    gif.reset();
  };
  gif.writeHeader();
  for (let frame = 0; frame < tops.length; ) {
    // A frame the next ones repeat (a hold) is written once, shown for all their time.
    let delay = delays[frame]!;
    let next = frame + 1;
    while (next < tops.length && tops[next] === tops[frame]) delay += delays[next++]!;
    const top = tops[frame]!;
    gif.writeFrame(index.subarray(top * width, (top + height) * width), width, height, { ...(frame === 0 ? { palette, repeat: 0, first: true } : {}), delay });
    take();
    frame = next;
  }
  gif.finish();
  take();
  return Buffer.concat(parts.splice(0));
}
