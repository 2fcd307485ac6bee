import { describe, expect, it } from "vitest";
import { composeOver, frameFrom, type Pixels } from "../../../../lib/render/mockup/mockup-frame.js";

// A 6x5 mockup whose capture box is the 4x3 at (1, 1); every pixel of the base starts as grey 100.
const WIDTH = 6;
const HEIGHT = 5;
const BOX = { x: 1, y: 1, width: 4, height: 3 };
const at = (x: number, y: number, width = WIDTH) => (y * width + x) * 3;

/** The black drawing: grey frame, black box; `frameOver` pixels of the box are covered as given. */
function drawings(frameOver: Record<string, { black: number[]; white: number[] }> = {}) {
  const base = Buffer.alloc(WIDTH * HEIGHT * 3, 100);
  const white: Pixels = { ...BOX, rgb: Buffer.alloc(BOX.width * BOX.height * 3, 255) };
  for (let y = 0; y < BOX.height; y++) for (let x = 0; x < BOX.width; x++) base.fill(0, at(BOX.x + x, BOX.y + y), at(BOX.x + x, BOX.y + y) + 3);
  for (const [key, { black, white: w }] of Object.entries(frameOver)) {
    const [x, y] = key.split(",").map(Number) as [number, number];
    base.set(black, at(x, y));
    white.rgb.set(w, at(x - BOX.x, y - BOX.y, BOX.width));
  }
  return { base, white };
}

const capture = (rgb: [number, number, number]) => Buffer.from(Array.from({ length: BOX.width * BOX.height }, () => rgb).flat());

describe("frameFrom and composeOver", () => {
  it("puts the capture in its box as it is, the frame around it untouched", () => {
    const { base, white } = drawings();
    const frame = frameFrom(base, WIDTH, HEIGHT, BOX, 2, [white])!;
    expect(frame.edges.length).toBe(0);
    const out = composeOver(frame, capture([10, 200, 30]));
    expect([...out.subarray(at(2, 2), at(2, 2) + 3)]).toEqual([10, 200, 30]);
    expect([...out.subarray(at(0, 0), at(0, 0) + 3)]).toEqual([100, 100, 100]);
    expect([...out.subarray(at(5, 4), at(5, 4) + 3)]).toEqual([100, 100, 100]);
  });

  it("blends where the frame lies partly over the capture, and hides it where wholly", () => {
    // (1, 1): a corner the frame covers wholly with (40, 50, 60); (4, 3): a hairline at half strength of (0, 0, 100).
    const { base, white } = drawings({ "1,1": { black: [40, 50, 60], white: [40, 50, 60] }, "4,3": { black: [0, 0, 50], white: [128, 128, 178] } });
    const frame = frameFrom(base, WIDTH, HEIGHT, BOX, 2, [white])!;
    expect(frame.edges.length).toBe(2);
    const out = composeOver(frame, capture([200, 100, 0]));
    expect([...out.subarray(at(1, 1), at(1, 1) + 3)]).toEqual([40, 50, 60]);
    expect([...out.subarray(at(4, 3), at(4, 3) + 3)]).toEqual([100, 50, 50]);
    expect([...out.subarray(at(2, 2), at(2, 2) + 3)]).toEqual([200, 100, 0]);
  });

  it("refuses a frame that draws inside the box's edges, or edges left undrawn in white", () => {
    const { base, white } = drawings({ "2,2": { black: [1, 0, 0], white: [255, 255, 255] } });
    // inset 1: (2, 2) is inside the edges, and the frame draws there.
    expect(frameFrom(base, WIDTH, HEIGHT, BOX, 1, [white])).toBeNull();
    const clean = drawings();
    // The white drawing covers only the box's top row: the other edge pixels are unknown.
    expect(frameFrom(clean.base, WIDTH, HEIGHT, BOX, 1, [{ ...BOX, height: 1, rgb: clean.white.rgb.subarray(0, BOX.width * 3) }])).toBeNull();
  });

  it("lays patches over the result, and refuses a capture of another size", () => {
    const { base, white } = drawings();
    const frame = frameFrom(base, WIDTH, HEIGHT, BOX, 2, [white])!;
    const out = composeOver(frame, capture([0, 0, 0]), [{ x: 4, y: 0, width: 2, height: 1, rgb: Buffer.from([1, 2, 3, 4, 5, 6]) }]);
    expect([...out.subarray(at(4, 0), at(4, 0) + 6)]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(() => composeOver(frame, Buffer.alloc(3))).toThrow(/4x3 capture/);
  });
});
