import { inflateSync } from "node:zlib";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { indicesOf } from "../../../lib/render/animate/images.js";
import { animatedWebp, changedBox } from "../../../lib/render/animate/webp.js";

const W = 64;
const H = 48;

/** A frame of one colour with a square of another at (x, y). */
function frame(background: number[], square?: { x: number; y: number; size: number; colour: number[] }): Buffer {
  const rgba = Buffer.alloc(W * H * 4);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const inside = square && x >= square.x && x < square.x + square.size && y >= square.y && y < square.y + square.size;
      Buffer.from([...(inside ? square.colour : background), 255]).copy(rgba, (y * W + x) * 4);
    }
  return rgba;
}

/** The mean difference of two RGBA frames' colour channels. */
function meanDifference(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) if (i % 4 !== 3) sum += Math.abs(a[i]! - b[i]!);
  return sum / ((a.length / 4) * 3);
}

describe("animated WebP, a frame at a time", () => {
  it("the changed rectangle: none for a same frame; even x and y, holding every changed pixel", () => {
    const a = frame([255, 255, 255]);
    expect(changedBox(a, Buffer.from(a), W, H)).toBeNull();
    const b = frame([255, 255, 255], { x: 13, y: 7, size: 5, colour: [0, 0, 255] });
    expect(changedBox(a, b, W, H)).toEqual({ x: 12, y: 6, width: 6, height: 6 });
    const corner = Buffer.from(a);
    corner[(W * H - 1) * 4] = 0;
    expect(changedBox(a, corner, W, H)).toEqual({ x: W - 2, y: H - 2, width: 2, height: 2 });
  });

  it("decodes (libwebp's demuxer, through sharp) to the frames given, their delays, a frame that repeats shown longer, looping", async () => {
    const frames = [
      frame([255, 255, 255]),
      frame([255, 255, 255], { x: 10, y: 10, size: 12, colour: [200, 30, 30] }),
      frame([255, 255, 255], { x: 30, y: 20, size: 12, colour: [30, 30, 200] }),
      frame([255, 255, 255], { x: 30, y: 20, size: 12, colour: [30, 30, 200] }),
      frame([20, 120, 20]),
    ];
    const webp = animatedWebp(W, H);
    for (const f of frames) await webp.add(f, 100);
    const file = webp.finish();
    const meta = await sharp(file, { animated: true }).metadata();
    expect(meta).toMatchObject({ format: "webp", width: W, pages: 4, pageHeight: H, loop: 0 });
    expect(meta.delay).toEqual([100, 100, 200, 100]);
    const { data } = await sharp(file, { animated: true }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const shown = [0, 1, 2, 4].map((i) => frames[i]!);
    for (const [page, expected] of shown.entries()) {
      const decoded = data.subarray(page * W * H * 4, (page + 1) * W * H * 4);
      // Lossy at quality 80: near, and far nearer than the frame before it.
      expect(meanDifference(decoded, expected), `page ${page}`).toBeLessThan(4);
      if (page > 0) expect(meanDifference(decoded, shown[page - 1]!), `page ${page} moved on`).toBeGreaterThan(4);
    }
  });
});

/** A PNG's image data, its IDAT chunks joined. */
function idatOf(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length; at += 12 + png.readUInt32BE(at))
    if (png.toString("ascii", at + 4, at + 8) === "IDAT") parts.push(png.subarray(at + 8, at + 8 + png.readUInt32BE(at)));
  return Buffer.concat(parts);
}

describe("a GIF's palette indices, read from libvips's indexed PNG", () => {
  it.each([
    [2, false],
    [200, false],
    // Adaptive filtering: rows filtered Sub, Up, Average and Paeth as well as none.
    [16, true],
    [200, true],
  ])("with %i colours (adaptive filtering: %s): each pixel's index names the colour libvips decodes it to", async (colours, adaptiveFiltering) => {
    const width = 37;
    const height = 23;
    const rgba = Buffer.alloc(width * height * 4);
    for (let p = 0; p < width * height; p++) {
      const c = (p * 7919) % colours;
      Buffer.from([(c * 53) % 256, (c * 101) % 256, (c * 211) % 256, 255]).copy(rgba, p * 4);
    }
    const png = await sharp(rgba, { raw: { width, height, channels: 4 } })
      .png({ palette: true, colours: 256, dither: 0, effort: 1, adaptiveFiltering })
      .toBuffer();
    const filters = new Set(Array.from({ length: height }, (_, y) => inflateSync(idatOf(png))[y * (width + 1)]));
    expect(filters.size > 1).toBe(adaptiveFiltering);
    const { index, palette } = indicesOf(png);
    const { data } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    expect(index).toHaveLength(width * height);
    for (let p = 0; p < width * height; p++) expect(palette[index[p]!], `pixel ${p}`).toEqual([data[p * 3], data[p * 3 + 1], data[p * 3 + 2]]);
  });
});
