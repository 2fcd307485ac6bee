// gifenc 1.0.3 ships no types: the part lib/render/animate/images.ts uses.
declare module "gifenc" {
  interface WriteFrameOptions {
    /** RGB triples; given on the first frame, it is the file's global palette. */
    palette?: number[][];
    /** ms, written in hundredths of a second. */
    delay?: number;
    /** -1 once, 0 forever, n times. */
    repeat?: number;
    /** Without `auto`: this frame is the first (it writes the screen descriptor and the global palette). */
    first?: boolean;
  }
  interface Encoder {
    writeFrame(index: Uint8Array, width: number, height: number, options?: WriteFrameOptions): void;
    finish(): void;
    /** A copy of what was written since the last reset. */
    bytes(): Uint8Array;
    /** Forgets what was written (its buffer is kept). */
    reset(): void;
    /** Without `auto`: writes the file's header ("GIF89a"). */
    writeHeader(): void;
  }
  /** `auto: false`: the header is written by writeHeader, and the first frame says it is. */
  const gifenc: { GIFEncoder(options?: { auto?: boolean }): Encoder };
  export default gifenc;
}
