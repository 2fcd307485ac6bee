import type { Sharp } from "sharp";
import type { ImageFormat } from "./options.js";

// Image encoding past what Chromium's screenshot does (PNG, JPEG, WebP): AVIF, and the stitched
// tiles of very large captures, with sharp (libvips), loaded only when needed (it is native and
// large: most renders never touch it).

/** The formats Chromium encodes itself. */
export type ChromiumFormat = Exclude<ImageFormat, "avif">;

/** The format to ask Chromium for when the output is `format`: lossless PNG where sharp encodes the result. */
export const chromiumFormat = (format: ImageFormat): ChromiumFormat => (format === "avif" ? "png" : format);

/** sharp, loaded on first use. */
export const loadSharp = async () => (await import("sharp")).default;

/** Encodes `image` as `format` at `quality` (JPEG, WebP, AVIF); JPEG is flattened on white. */
export function encodeWith(image: Sharp, format: ImageFormat, quality: number): Promise<Buffer> {
  switch (format) {
    case "png":
      return image.png().toBuffer();
    case "jpeg":
      return image.flatten({ background: "#ffffff" }).jpeg({ quality }).toBuffer();
    case "webp":
      return image.webp({ quality }).toBuffer();
    case "avif":
      // effort 2 of 9: a 2560x1600 page in ~0.3 s rather than seconds, for files a few percent larger.
      return image.avif({ quality, effort: 2 }).toBuffer();
  }
}

/** `png` re-encoded as `format` when Chromium could not produce it (AVIF); as it is otherwise. */
export async function finishEncoding(png: Buffer, format: ImageFormat, quality: number): Promise<Buffer> {
  if (format !== "avif") return png;
  const sharp = await loadSharp();
  return encodeWith(sharp(png, { limitInputPixels: false }), format, quality);
}
