import { createHash } from "node:crypto";
import type { Image } from "./image.js";

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

/** A row of text per line, each `row` px tall, at `px` px, in its language and direction (and font, if given). */
export function textRowsHtml(rows: readonly { lang: string; dir: string; text: string; font?: string }[], row: number, px: number): string {
  const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const style = (font?: string) =>
    `height:${row}px;line-height:${row}px;font-size:${px}px;${font ? `font-family:${font};` : ""}white-space:nowrap;overflow:hidden;padding:0 16px`;
  return `<body style="margin:0;background:#fff;color:#000">${rows.map((r) => `<div lang="${r.lang}" dir="${r.dir}" style="${style(r.font)}">${escapeHtml(r.text)}</div>`).join("")}</body>`;
}

/** What is wrong with a band of `chars` characters at `px` px as running text: little ink, few shapes ("tofu"), a blank run, too short. */
export function textProblems(band: InkBand, chars: number, px: number): string[] {
  return [
    band.ink < 20 * chars && `little ink (${band.ink})`,
    band.distinct < 5 && `${band.distinct} distinct shapes`,
    band.commonest > 0.5 && `one shape is ${Math.round(band.commonest * 100)}% of the line`,
    band.widestGap > 1.5 * px && `a blank run of ${band.widestGap} px`,
    band.right - band.left < 0.2 * px * chars && `only ${band.right - band.left} px of text`,
  ].filter((problem): problem is string => typeof problem === "string");
}
