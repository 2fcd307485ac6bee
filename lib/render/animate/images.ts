import gifenc from "gifenc";
import { loadSharp } from "../encode.js";
import type { FrameImages } from "./encoder.js";

// Animated GIF and WebP (docs/api.md, "Animate"). The frames' images are stacked into one sheet
// (for a synthetic scroll, the one tall capture itself), each frame a band of its rows.
// WebP: the bands, encoded by sharp (libwebp). GIF: the sheet quantised once to one palette for
// every frame (libimagequant, with Floyd-Steinberg dithering so gradients do not band; a palette
// per frame would flicker as the page scrolls), then each band written in that palette (gifenc's
// LZW): 1.4 CPU-s for 60 frames at 1280x720 where libvips's own GIF writer, quantising each frame,
// took 3.9.

export type AnimatedImageFormat = "gif" | "webp";

/**
 * Each frame's delay in ms for frames at `fps`. GIF counts in hundredths of a second: the delays
 * are rounded where the frames fall, so that the whole lasts frames / fps however the parts round.
 */
export function frameDelays(frames: number, fps: number, format: AnimatedImageFormat): number[] {
  const step = format === "gif" ? 10 : 1;
  const at = (i: number) => Math.round((i * 1000) / fps / step) * step;
  return Array.from({ length: frames }, (_, i) => at(i + 1) - at(i));
}

/** The frames' images as one RGBA sheet, and each frame's first row in it. */
async function sheetOf(images: FrameImages): Promise<{ sheet: Buffer; rows: number; tops: number[] }> {
  const sharp = await loadSharp();
  const parts: Buffer[] = [];
  const tops: number[] = [];
  let rows = 0;
  for await (const { png, tops: cut } of images) {
    const { data, info } = await sharp(png, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    for (const top of cut) tops.push(rows + top);
    parts.push(data);
    rows += info.height;
  }
  return { sheet: parts.length === 1 ? parts[0]! : Buffer.concat(parts), rows, tops };
}

/** The sheet in one palette of at most 256 colours: each pixel's index, and the palette. */
async function quantise(sheet: Buffer, width: number, rows: number): Promise<{ index: Uint8Array; palette: number[][] }> {
  const sharp = await loadSharp();
  const raw = { width, height: rows, channels: 4 as const };
  const indexed = await sharp(sheet, { raw, limitInputPixels: false }).png({ palette: true, colours: 256, dither: 1, effort: 1 }).toBuffer();
  // Decoded again, every pixel is one of the palette's colours: its index is found by its colour.
  const { data } = await sharp(indexed, { limitInputPixels: false }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const index = new Uint8Array(width * rows);
  const entries = new Map<number, number>();
  const palette: number[][] = [];
  for (let pixel = 0, i = 0; pixel < index.length; pixel++, i += 3) {
    const colour = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    let entry = entries.get(colour);
    if (entry === undefined) {
      entry = palette.length;
      entries.set(colour, entry);
      palette.push([data[i]!, data[i + 1]!, data[i + 2]!]);
    }
    index[pixel] = entry;
  }
  return { index, palette };
}

/** An animated image of the frames of `images`, each `size` (device px), shown at `fps`. */
export async function encodeAnimatedImage(
  format: AnimatedImageFormat,
  size: { width: number; height: number },
  fps: number,
  images: FrameImages,
): Promise<Buffer> {
  const { width, height } = size;
  const { sheet, rows, tops } = await sheetOf(images);
  const delays = frameDelays(tops.length, fps, format);
  if (format === "webp") {
    const frameBytes = width * height * 4;
    const frames = Buffer.concat(tops.map((top) => sheet.subarray(top * width * 4, top * width * 4 + frameBytes)));
    const sharp = await loadSharp();
    // minSize: libwebp's key frames otherwise left blocks of another shade in pale gradients once a
    // page scrolled back over them (measured on the showcase); without them the file was smaller too.
    return sharp(frames, { raw: { width, height: height * tops.length, channels: 4, pageHeight: height }, limitInputPixels: false })
      .webp({ loop: 0, delay: delays, quality: 80, effort: 1, minSize: true })
      .toBuffer();
  }
  const { index, palette } = await quantise(sheet, width, rows);
  const gif = gifenc.GIFEncoder();
  for (let frame = 0; frame < tops.length; ) {
    // A frame the next ones repeat (a hold) is written once, shown for all their time.
    let delay = delays[frame]!;
    let next = frame + 1;
    while (next < tops.length && tops[next] === tops[frame]) delay += delays[next++]!;
    const top = tops[frame]!;
    gif.writeFrame(index.subarray(top * width, (top + height) * width), width, height, { ...(frame === 0 ? { palette, repeat: 0 } : {}), delay });
    frame = next;
  }
  gif.finish();
  return Buffer.from(gif.bytes());
}
