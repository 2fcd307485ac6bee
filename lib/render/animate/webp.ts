import { loadSharp } from "../encode.js";

// An animated WebP written a frame at a time (docs/api.md, "Animate"): each frame's changed
// rectangle (the whole canvas for the first) encoded alone by sharp (libwebp, lossy), and the
// frames muxed into the container as the WebP specification lays it out (RIFF, VP8X, ANIM, one ANMF
// per frame, each holding its image's ALPH and VP8 chunks). A frame that changes nothing lengthens
// the one before. Only the frame being encoded and the one before it are held, so a live animation
// is encoded while it is captured; libwebp's own animation encoder (sharp's) took every frame at
// once, laid end to end: a second copy of them all.

/** A frame's pixels: RGBA rows of the canvas's width. */
type Rgba = Buffer;

/** WebP's frame offsets count in 2 px. */
const EVEN = (n: number) => n - (n % 2);

/** The smallest rectangle (x and y even) holding every pixel where `frame` differs from `before`; null when none does. */
export function changedBox(before: Rgba, frame: Rgba, width: number, height: number): { x: number; y: number; width: number; height: number } | null {
  const a = new Uint32Array(before.buffer, before.byteOffset, width * height);
  const b = new Uint32Array(frame.buffer, frame.byteOffset, width * height);
  let top = -1;
  for (let i = 0; i < a.length; i++)
    if (a[i] !== b[i]) {
      top = Math.floor(i / width);
      break;
    }
  if (top < 0) return null;
  let bottom = top;
  for (let i = a.length - 1; i >= 0; i--)
    if (a[i] !== b[i]) {
      bottom = Math.floor(i / width);
      break;
    }
  let left = width;
  let right = -1;
  for (let y = top; y <= bottom && (left > 0 || right < width - 1); y++) {
    const row = y * width;
    for (let x = 0; x < left; x++)
      if (a[row + x] !== b[row + x]) {
        left = x;
        break;
      }
    for (let x = width - 1; x > right; x--)
      if (a[row + x] !== b[row + x]) {
        right = x;
        break;
      }
  }
  const x = EVEN(left);
  const y = EVEN(top);
  return { x, y, width: right + 1 - x, height: bottom + 1 - y };
}

/** A RIFF chunk: its tag, size and payload, padded to an even length. */
function chunk(tag: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(tag, 0, "ascii");
  head.writeUInt32LE(payload.length, 4);
  return Buffer.concat([head, payload, ...(payload.length % 2 ? [Buffer.alloc(1)] : [])]);
}

/** The chunks of a still WebP image that an animation's frame holds (ALPH, VP8 or VP8L), and whether one is alpha. */
function frameChunks(webp: Buffer): { data: Buffer; alpha: boolean } {
  const parts: Buffer[] = [];
  let alpha = false;
  for (let at = 12; at + 8 <= webp.length; ) {
    const tag = webp.toString("ascii", at, at + 4);
    const end = at + 8 + webp.readUInt32LE(at + 4) + (webp.readUInt32LE(at + 4) % 2);
    if (tag === "ALPH") alpha = true;
    if (tag === "ALPH" || tag === "VP8 " || tag === "VP8L") parts.push(webp.subarray(at, end));
    at = end;
  }
  return { data: Buffer.concat(parts), alpha };
}

const uint24 = (value: number) => Buffer.from([value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]);

/**
 * Writes an animated WebP of frames `width` x `height`, looping forever, one frame at a time:
 * `add` each frame with how long it shows (ms), then `finish` for the file.
 */
export function animatedWebp(width: number, height: number) {
  const frames: Buffer[] = [];
  let alpha = false;
  let before: Rgba | null = null;
  // The last frame's rectangle and image, written once its time is known (a frame the next repeats shows longer).
  let pending: { box: { x: number; y: number; width: number; height: number }; data: Buffer; duration: number } | null = null;
  const flush = () => {
    if (!pending) return;
    const { box, data, duration } = pending;
    // Each frame replaces its rectangle (no blending: what it says is what shows), and stays.
    const header = Buffer.concat([uint24(box.x / 2), uint24(box.y / 2), uint24(box.width - 1), uint24(box.height - 1), uint24(duration), Buffer.from([0b10])]);
    frames.push(chunk("ANMF", Buffer.concat([header, data])));
    pending = null;
  };
  return {
    async add(frame: Rgba, duration: number): Promise<void> {
      const box = before ? changedBox(before, frame, width, height) : { x: 0, y: 0, width, height };
      before = frame;
      if (!box) {
        if (pending) pending.duration += duration;
        return;
      }
      const sharp = await loadSharp();
      const image = sharp(frame, { raw: { width, height, channels: 4 }, limitInputPixels: false });
      const still = await (box.width === width && box.height === height
        ? image
        : image.extract({ left: box.x, top: box.y, width: box.width, height: box.height })
      )
        .webp({ quality: 80, effort: 1 })
        .toBuffer();
      const { data, alpha: hasAlpha } = frameChunks(still);
      alpha ||= hasAlpha;
      flush();
      pending = { box, data, duration };
    },
    finish(): Buffer {
      flush();
      const vp8x = Buffer.alloc(10);
      vp8x.writeUInt8(0b10 | (alpha ? 0b10000 : 0), 0);
      uint24(width - 1).copy(vp8x, 4);
      uint24(height - 1).copy(vp8x, 7);
      // Background white, opaque (BGRA), shown nowhere: the first frame covers the canvas; loop forever.
      const anim = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0]);
      const head = [Buffer.from("WEBP", "ascii"), chunk("VP8X", vp8x), chunk("ANIM", anim)];
      const riff = Buffer.alloc(8);
      riff.write("RIFF", 0, "ascii");
      riff.writeUInt32LE(
        [...head, ...frames].reduce((sum, part) => sum + part.length, 0),
        4,
      );
      // One copy of the frames, into the file.
      return Buffer.concat([riff, ...head, ...frames.splice(0)]);
    },
  };
}
