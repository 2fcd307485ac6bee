import sharp from "sharp";

/** A decoded image: its size and RGBA pixels, row by row. */
export interface Image {
  readonly width: number;
  readonly height: number;
  readonly bitmap: { readonly width: number; readonly height: number; readonly data: Buffer };
  /** The pixel at (x, y) as 0xRRGGBBAA. */
  getPixelColor(x: number, y: number): number;
}

/** Decodes a PNG, JPEG, WebP or AVIF for pixel assertions, with sharp (already a dependency of the service). */
export async function readImage(bytes: Buffer): Promise<Image> {
  const { data, info } = await sharp(bytes, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    bitmap: { width: info.width, height: info.height, data },
    getPixelColor(x, y) {
      const i = (Math.floor(y) * info.width + Math.floor(x)) * 4;
      return ((data[i]! << 24) | (data[i + 1]! << 16) | (data[i + 2]! << 8) | data[i + 3]!) >>> 0;
    },
  };
}
