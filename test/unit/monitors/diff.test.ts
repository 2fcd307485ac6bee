import { describe, expect, it } from "vitest";
import { type RawImage, TEXT_MAX_EDITS, textDiff, visualDiff } from "../../../lib/monitors/diff.js";

// Captures made here: a white page of "lines" of text (dark dots in a pattern of the line's own),
// 20 px each, 400 px wide. A line is known by its seed, so a page is the list of its lines.
const WIDTH = 400;
const LINE = 20;

/** A deterministic pseudo-random generator. */
const random = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

/** A page of the lines `seeds`, and for each line how far its text reaches (`lengths`, px). */
function page(seeds: readonly number[], lengths: Record<number, number> = {}): RawImage {
  const data = Buffer.alloc(WIDTH * LINE * seeds.length * 4, 255);
  seeds.forEach((seed, line) => {
    const next = random(seed);
    const reach = lengths[line] ?? WIDTH - 40;
    for (let y = 4; y < LINE - 4; y++)
      for (let x = 20; x < reach; x++)
        if (next() < 0.3) {
          const i = ((line * LINE + y) * WIDTH + x) * 4;
          data[i] = data[i + 1] = data[i + 2] = 30;
        }
  });
  return { data, width: WIDTH, height: seeds.length * LINE };
}

const lines = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);

describe("visual diff", () => {
  it("two equal captures: nothing changed", () => {
    expect(visualDiff(page(lines(50)), page(lines(50)))).toEqual({ changedPercent: 0, boxes: [] });
  });

  it("a line inserted near the top: the inserted band only, not the page it pushed down", () => {
    const before = page(lines(250));
    const after = page([...lines(5), 999, ...lines(245, 6)]);
    const diff = visualDiff(before, after);
    // The band's blank rows repeat the rows beside them (space that grew): the change is its inked rows.
    expect(diff.boxes).toEqual([{ x: 0, y: 5 * LINE + 4, width: WIDTH, height: LINE - 8 }]);
    expect(diff.changedPercent).toBeCloseTo((100 * (LINE - 8)) / after.height, 2);
  });

  it("a line whose text changed in place: a box around that line, as wide as what changed", () => {
    const after = page([...lines(10), 777, ...lines(9, 12)], { 10: 200 });
    const diff = visualDiff(page(lines(20)), after);
    expect(diff.boxes).toHaveLength(1);
    const [box] = diff.boxes;
    expect(box!.y).toBeGreaterThanOrEqual(10 * LINE);
    expect(box!.y + box!.height).toBeLessThanOrEqual(11 * LINE);
    expect(box!.x).toBeGreaterThanOrEqual(20);
    // A row is read as it lies, a pixel along at most.
    expect(box!.x + box!.width).toBeLessThanOrEqual(WIDTH - 40 + 1);
    expect(diff.changedPercent).toBeGreaterThan(0);
    expect(diff.changedPercent).toBeLessThan(100 / 20);
  });

  it("a gap a row taller or shorter (text laid out a sub-pixel along) is not a change", () => {
    const before = page(lines(30));
    // A blank row added under line 10, and one taken from under line 20: the page between moved by a row.
    const row = WIDTH * 4;
    const cut = (image: RawImage, y: number, extra: number) => ({
      ...image,
      height: image.height + extra,
      data: Buffer.concat([
        image.data.subarray(0, y * row),
        ...(extra > 0 ? [Buffer.alloc(row, 255)] : []),
        image.data.subarray((y - Math.min(0, extra)) * row),
      ]),
    });
    const after = cut(cut(before, 11 * LINE - 2, 1), 21 * LINE - 1, -1);
    expect(after.height).toBe(before.height);
    expect(visualDiff(before, after)).toEqual({ changedPercent: 0, boxes: [] });
  });

  it("a line taken out: a change where it was", () => {
    const diff = visualDiff(page(lines(30)), page([...lines(12), ...lines(17, 14)]));
    expect(diff.boxes).toHaveLength(1);
    expect(Math.abs(diff.boxes[0]!.y - 12 * LINE)).toBeLessThanOrEqual(4);
  });

  it("noise of anti-aliasing and encoding, and an edge drawn a pixel along, are not changes", () => {
    const before = page(lines(40));
    const noisy = Buffer.from(before.data);
    const next = random(7);
    for (let i = 0; i < noisy.length; i += 4) {
      const delta = Math.round((next() - 0.5) * 40);
      for (let c = 0; c < 3; c++) noisy[i + c] = Math.max(0, Math.min(255, noisy[i + c]! + delta));
    }
    expect(visualDiff(before, { ...before, data: noisy })).toEqual({ changedPercent: 0, boxes: [] });
    // Every dark pixel of one line moved one pixel right.
    const shifted = Buffer.from(before.data);
    shifted.copy(shifted, (3 * LINE * WIDTH + 1) * 4, 3 * LINE * WIDTH * 4, (4 * LINE * WIDTH - 1) * 4);
    expect(visualDiff(before, { ...before, data: shifted }).boxes).toEqual([]);
  });

  it("a page changed all over, or at another width, is changed all over", () => {
    const all = visualDiff(page(lines(60)), page(lines(60, 500)));
    // Of two random lines of 30% ink, about two pixels in five of the inked band differ.
    expect(all.changedPercent).toBeGreaterThan(15);
    expect(all.boxes).toHaveLength(60);
    expect(all.boxes[0]!.y).toBe(4);
    expect(all.boxes.at(-1)!.y + all.boxes.at(-1)!.height).toBe(60 * LINE - 4);
    const narrow = page(lines(10));
    const wide: RawImage = { data: Buffer.alloc(500 * 200 * 4, 255), width: 500, height: 200 };
    expect(visualDiff(narrow, wide)).toEqual({ changedPercent: 100, boxes: [{ x: 0, y: 0, width: 500, height: 200 }] });
  });
});

describe("text diff", () => {
  it("the lines added and removed, in order; moved text around them is not a change", () => {
    const before = ["Pricing", "Starter $9", "Team $29", "Contact us"];
    const after = ["Pricing", "Starter $12", "Team $29", "Enterprise: ask", "Contact us"];
    expect(textDiff(before, after)).toEqual({ added: ["Starter $12", "Enterprise: ask"], removed: ["Starter $9"] });
    expect(textDiff(before, before)).toEqual({ added: [], removed: [] });
  });

  it("texts that differ past the edit budget are compared whole, in bounded time: 20,000 new random lines a side", () => {
    // Unbounded, this pair takes jsdiff 79 s here; bounded, 83 ms. Ten seconds is a wide margin both ways.
    const next = random(7);
    const lines = () => Array.from({ length: 20_000 }, () => next().toString(36).slice(2).repeat(8));
    const [before, after] = [lines(), lines()];
    const started = performance.now();
    expect(textDiff(before, after)).toEqual({ added: [], removed: [], tooLarge: true });
    expect(performance.now() - started).toBeLessThan(10_000);
    // The same text, however long, is unchanged; a change within the budget is listed line by line.
    expect(textDiff(before, [...before])).toEqual({ added: [], removed: [] });
    const edited = before.map((line, i) => (i % 50 === 0 ? `${line}!` : line));
    const diff = textDiff(before, edited);
    expect(diff.tooLarge).toBeUndefined();
    expect(diff.added).toHaveLength(400);
    expect(diff.removed).toEqual(before.filter((_, i) => i % 50 === 0));
    // One edit past the budget: compared whole.
    const over = before.map((line, i) => (i < TEXT_MAX_EDITS / 2 + 1 ? `${line}!` : line));
    expect(textDiff(before, over).tooLarge).toBe(true);
  });
});
