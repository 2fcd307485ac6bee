import type { Sharp } from "sharp";
import type { CaptureOptions, ImageFormat } from "./options.js";

// Image encoding past what Chromium's screenshot does (PNG, JPEG, WebP): AVIF, thumbnails
// (`imageWidth` / `imageHeight` / `fit`), and the stitched tiles of very large captures, with sharp
// (libvips), loaded only when needed (it is native and large: most renders never touch it).

/** What finishing an image capture takes from the request. */
export type ImageOutput = Pick<CaptureOptions, "quality" | "imageWidth" | "imageHeight" | "fit"> & { readonly format: ImageFormat };

/** The formats Chromium encodes itself. */
export type ChromiumFormat = Exclude<ImageFormat, "avif">;

const resizes = (output: ImageOutput) => output.imageWidth !== undefined || output.imageHeight !== undefined;

/** Whether sharp has work after Chromium's capture: an AVIF, or a thumbnail. */
const needsSharp = (output: ImageOutput) => output.format === "avif" || resizes(output);

/** The format to ask Chromium for: the output's own, or lossless PNG where sharp still has work to do. */
export const chromiumFormat = (output: ImageOutput): ChromiumFormat => (needsSharp(output) ? "png" : (output.format as ChromiumFormat));

/** Time an AVIF takes to encode, per Mpx, on two cores (0.14 ms/px measured, with room). */
const AVIF_MS_PER_MPX = 200;

/** The time encoding `mpx` of output as `format` may add to a capture: only AVIF is slow enough to count. */
export const encodingMs = (mpx: number, format: ImageFormat | "pdf"): number => (format === "avif" ? Math.round(mpx * AVIF_MS_PER_MPX) : 0);

/** sharp, loaded on first use. */
export const loadSharp = async () => (await import("sharp")).default;

/** Encodes `image` as `format` at `quality` (JPEG, WebP, AVIF); JPEG is flattened on white. */
function encodeWith(image: Sharp, format: ImageFormat, quality: number): Promise<Buffer> {
  switch (format) {
    case "png":
      // zlib-ng's level 4 without row filters: 45 ms for a 5.4 Mpx mockup, where the default (level 6,
      // adaptive filters) took 200 ms for a file 14% smaller.
      return image.png({ compressionLevel: 4, adaptiveFiltering: false }).toBuffer();
    case "jpeg":
      return image.flatten({ background: "#ffffff" }).jpeg({ quality }).toBuffer();
    case "webp":
      return image.webp({ quality }).toBuffer();
    case "avif":
      // libaom at effort 1 of 9: 0.86 s for a 3188x1976 mockup on two cores, where effort 2 took 2.1 s
      // for a file 4% smaller, and 4 took 14 s (effort 0: 0.37 s, but 66% larger, larger than WebP).
      return image.avif({ quality, effort: 1 }).toBuffer();
  }
}

/** The thumbnail's box for a `width` x `height` capture (docs/api.md, "Thumbnails"). */
export function thumbnailSize(width: number, height: number, output: ImageOutput): { width: number; height: number } {
  const { imageWidth, imageHeight, fit = "cover" } = output;
  // Both given with cover or contain: exactly that box.
  if (imageWidth !== undefined && imageHeight !== undefined && fit !== "inside") return { width: imageWidth, height: imageHeight };
  // Otherwise the capture's aspect, within what was given, never enlarged.
  const scale = Math.min(1, (imageWidth ?? Number.POSITIVE_INFINITY) / width, (imageHeight ?? Number.POSITIVE_INFINITY) / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/**
 * The capture made into the output: `image` as Chromium encoded it (in chromiumFormat(output)) or a
 * sharp pipeline (stitched tiles), resized to the thumbnail if one was asked for, encoded as the
 * output's format. A Chromium image already in its final form is returned as it is.
 */
export async function finishImage(image: Buffer | Sharp, output: ImageOutput): Promise<Buffer> {
  if (Buffer.isBuffer(image) && !needsSharp(output)) return image;
  const sharp = await loadSharp();
  let pipeline = Buffer.isBuffer(image) ? sharp(image, { limitInputPixels: false }) : image;
  if (resizes(output)) {
    // sharp resizes before it composites: a stitched canvas is made pixels first.
    if (!Buffer.isBuffer(image)) {
      const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
      pipeline = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels }, limitInputPixels: false });
    }
    const { width = 0, height = 0 } = await pipeline.metadata();
    // Lanczos 3 (sharp's default kernel); cover crops from the top (a page's top is what it is about);
    // contain letterboxes, centred, transparent (white in JPEG).
    const contain = output.fit === "contain";
    pipeline = pipeline.resize({
      ...thumbnailSize(width, height, output),
      fit: contain ? "contain" : "cover",
      position: contain ? "centre" : "top",
      background: output.format === "jpeg" ? "#ffffff" : { r: 0, g: 0, b: 0, alpha: 0 },
    });
  }
  return encodeWith(pipeline, output.format, output.quality);
}

/** The MCP screenshot tool's preview, sized for a model (docs/agents.md, "MCP"): at most this wide, and the top this tall of a longer page. */
export const PREVIEW_MAX_WIDTH = 1024;
export const PREVIEW_MAX_HEIGHT = 1536;

/** A small JPEG of an image capture: scaled to PREVIEW_MAX_WIDTH (never enlarged), then its top PREVIEW_MAX_HEIGHT pixels, flattened on white. */
export async function previewOf(image: Buffer, width: number, height: number): Promise<{ data: Buffer; width: number; height: number }> {
  const sharp = await loadSharp();
  const scaledWidth = Math.min(width, PREVIEW_MAX_WIDTH);
  const scaledHeight = Math.max(1, Math.round((height * scaledWidth) / width));
  const box = { width: scaledWidth, height: Math.min(scaledHeight, PREVIEW_MAX_HEIGHT) };
  const data = await sharp(image, { limitInputPixels: false })
    .resize(scaledWidth, scaledHeight)
    .extract({ left: 0, top: 0, ...box })
    .flatten({ background: "#ffffff" })
    .jpeg({ quality: 80 })
    .toBuffer();
  return { data, ...box };
}
