import { loadSharp } from "../render/encode.js";
import type { RawImage, VisualDiff } from "./diff.js";

// A check's images (docs/api.md, "Monitors"): the capture decoded for the diff, the diff image (the
// new capture with each changed region outlined and tinted) and a thumbnail of the first change for
// the dashboard.

/** Width of a change's thumbnail, in pixels; it shows this much of the page above and below the change. */
const THUMB_WIDTH = 480;
const THUMB_MARGIN = 120;
const MARK = "#e5484d";

/** A PNG as RGBA pixels. */
export async function decode(png: Buffer): Promise<RawImage> {
  const sharp = await loadSharp();
  const { data, info } = await sharp(png, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/** The new capture with the changed regions marked: a translucent tint and an outline around each. */
export async function diffImage(after: Buffer, size: { width: number; height: number }, boxes: VisualDiff["boxes"]): Promise<Buffer> {
  const sharp = await loadSharp();
  const pad = 3;
  const rects = boxes
    .map((box) => {
      const x = Math.max(0, box.x - pad);
      const y = Math.max(0, box.y - pad);
      return `<rect x="${x}" y="${y}" width="${box.width + 2 * pad}" height="${box.height + 2 * pad}" fill="${MARK}" fill-opacity="0.18" stroke="${MARK}" stroke-width="3"/>`;
    })
    .join("");
  const svg = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}">${rects}</svg>`);
  return sharp(after, { limitInputPixels: false })
    .composite([{ input: svg, top: 0, left: 0 }])
    .png({ compressionLevel: 6 })
    .toBuffer();
}

/** A small WebP of the diff image around its first change (its top when nothing is boxed). */
export async function thumbnail(diff: Buffer, size: { width: number; height: number }, boxes: VisualDiff["boxes"]): Promise<Buffer> {
  const sharp = await loadSharp();
  const first = boxes[0];
  // The band around the first change, as tall as a 16:10 thumbnail of the full width shows.
  const tall = Math.min(size.height, Math.round((size.width * 10) / 16));
  const top = first ? Math.max(0, Math.min(size.height - tall, first.y - THUMB_MARGIN)) : 0;
  return sharp(diff, { limitInputPixels: false })
    .extract({ left: 0, top, width: size.width, height: tall })
    .resize({ width: Math.min(THUMB_WIDTH, size.width) })
    .webp({ quality: 75 })
    .toBuffer();
}
