import { createHash } from "node:crypto";
import type { Jimp } from "jimp";

type Image = Awaited<ReturnType<typeof Jimp.read>>;

/** What a person sees of a band of text drawn dark on white: how much ink, in how many distinct shapes, with what gaps. */
export interface InkBand {
  /** Dark pixels in the band. */
  readonly ink: number;
  /** Runs of columns with ink (glyphs, or words of a connected script), left to right. */
  readonly pieces: number;
  /** How many of those runs differ in their pixels: text has many shapes, "tofu" boxes one. */
  readonly distinct: number;
  /** The share of the pieces taken by the most common shape. */
  readonly commonest: number;
  /** The widest blank run of columns between the first and the last ink (a run of blank glyphs). */
  readonly widestGap: number;
  /** First and last column with ink (-1 when none). */
  readonly left: number;
  readonly right: number;
}

/** Reads the rows top..bottom (exclusive) of `image`, a pixel being ink when its R+G+B is under 384. */
export function inkBand(image: Image, top: number, bottom: number): InkBand {
  const { width, data } = image.bitmap;
  const dark = (x: number, y: number) => {
    const i = (y * width + x) * 4;
    return data[i]! + data[i + 1]! + data[i + 2]! < 384;
  };
  let ink = 0;
  const inked: boolean[] = [];
  for (let x = 0; x < width; x++) {
    let column = 0;
    for (let y = top; y < bottom; y++) if (dark(x, y)) column++;
    ink += column;
    inked.push(column > 0);
  }
  const shapes = new Map<string, number>();
  let pieces = 0;
  let widestGap = 0;
  let gap = 0;
  const left = inked.indexOf(true);
  const right = inked.lastIndexOf(true);
  for (let x = Math.max(0, left); x <= right; ) {
    if (!inked[x]) {
      gap++;
      x++;
      continue;
    }
    widestGap = Math.max(widestGap, gap);
    gap = 0;
    const start = x;
    while (x <= right && inked[x]) x++;
    const hash = createHash("sha1");
    for (let y = top; y < bottom; y++) for (let c = start; c < x; c++) hash.update(dark(c, y) ? "1" : "0");
    const key = hash.digest("hex");
    shapes.set(key, (shapes.get(key) ?? 0) + 1);
    pieces++;
  }
  const commonest = pieces ? Math.max(...shapes.values()) / pieces : 0;
  return { ink, pieces, distinct: shapes.size, commonest, widestGap, left, right };
}
