// A mockup's frame kept as pixels, so that a layout met before is composed in Node in a few
// milliseconds instead of being drawn again by the composer (which decodes the capture, rasterizes
// the whole mockup and encodes it: most of a mockup's cost). The frame is drawn once with the
// capture's box filled black, and its edges once more filled white: where the frame lies over the
// capture (rounded corners, the window's hairline, a bezel), `black + (white - black) x capture`
// is exactly what the browser would have drawn there, whatever the frame is made of; elsewhere in
// the box the capture shows as it is. Pure pixel work: lib/render/mockup/mockup.ts draws the frames.

/** A rectangle in device pixels. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Pixels of a rectangle: RGB, row after row. */
export interface Pixels extends Box {
  readonly rgb: Buffer;
}

/** Everything of a mockup but its capture, at the device scale. */
export interface Frame {
  readonly width: number;
  readonly height: number;
  /** The whole mockup (RGB) with the capture's box black. */
  readonly base: Buffer;
  /** Where the capture goes. */
  readonly box: Box;
  /** Pixels of the box (index within the box) that the frame lies over, wholly or partly. */
  readonly edges: Uint32Array;
  /** For each of them, white - black, three channels: how much of the capture shows through. */
  readonly lift: Uint8Array;
}

/** Bytes a frame keeps in memory. */
export const frameBytes = (frame: Frame): number => frame.base.length + frame.edges.byteLength + frame.lift.byteLength;

/**
 * The frame from its black drawing (`base`, `width` x `height` RGB) and white drawings of the box's
 * edges (`whites`, each a rectangle of the image), which must cover every pixel of the box within
 * `inset` of its sides. Null when the frame lies over the box's inside too (then these drawings
 * cannot describe it: the composer must draw the whole).
 */
export function frameFrom(base: Buffer, width: number, height: number, box: Box, inset: number, whites: readonly Pixels[]): Frame | null {
  const edges: number[] = [];
  const lift: number[] = [];
  const inBox = (x: number, y: number) => x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height;
  const covered = new Uint8Array(box.width * box.height);
  for (const white of whites) {
    for (let y = white.y; y < white.y + white.height; y++) {
      for (let x = white.x; x < white.x + white.width; x++) {
        const index = (y - box.y) * box.width + (x - box.x);
        if (!inBox(x, y) || covered[index]) continue;
        covered[index] = 1;
        const b = (y * width + x) * 3;
        const w = ((y - white.y) * white.width + (x - white.x)) * 3;
        const up = [white.rgb[w]! - base[b]!, white.rgb[w + 1]! - base[b + 1]!, white.rgb[w + 2]! - base[b + 2]!];
        if (up.every((value) => value === 255)) continue; // the capture as it is
        edges.push(index);
        lift.push(...up.map((value) => Math.max(0, value)));
      }
    }
  }
  // Inside the edges the frame must draw nothing: the box black, and every edge pixel drawn white.
  for (let y = box.y; y < box.y + box.height; y++) {
    for (let x = box.x; x < box.x + box.width; x++) {
      const nearSide = x - box.x < inset || box.x + box.width - 1 - x < inset || y - box.y < inset || box.y + box.height - 1 - y < inset;
      if (nearSide ? !covered[(y - box.y) * box.width + (x - box.x)] : base.readUIntBE((y * width + x) * 3, 3) !== 0) return null;
    }
  }
  return { width, height, base, box, edges: Uint32Array.from(edges), lift: Uint8Array.from(lift) };
}

/**
 * The mockup: `frame` with `capture` (RGB, the box's size) in its box and `patches` (rectangles of
 * the frame drawn otherwise, such as the browser bar's address) over it, written into `out` (a
 * buffer of the frame's size, reused: fresh memory costs a page fault per 4 KB) or a new buffer.
 */
export function composeOver(frame: Frame, capture: Buffer, patches: readonly Pixels[] = [], out: Buffer = Buffer.allocUnsafe(frame.base.length)): Buffer {
  const { box, base, width } = frame;
  if (capture.length !== box.width * box.height * 3) throw new Error(`a ${box.width}x${box.height} capture was expected`);
  if (out.length !== base.length) throw new Error("the output buffer is not the frame's size");
  base.copy(out);
  const row = box.width * 3;
  for (let y = 0; y < box.height; y++) capture.copy(out, ((box.y + y) * width + box.x) * 3, y * row, (y + 1) * row);
  for (let k = 0; k < frame.edges.length; k++) {
    const index = frame.edges[k]!;
    const o = ((box.y + Math.floor(index / box.width)) * width + box.x + (index % box.width)) * 3;
    const c = index * 3;
    for (let channel = 0; channel < 3; channel++) {
      out[o + channel] = base[o + channel]! + Math.round((frame.lift[k * 3 + channel]! * capture[c + channel]!) / 255);
    }
  }
  for (const patch of patches) {
    const patchRow = patch.width * 3;
    for (let y = 0; y < patch.height; y++) patch.rgb.copy(out, ((patch.y + y) * width + patch.x) * 3, y * patchRow, (y + 1) * patchRow);
  }
  return out;
}
