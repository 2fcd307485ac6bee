// gifenc 1.0.3 ships no types: the part lib/render/animate/images.ts uses.
declare module "gifenc" {
  interface WriteFrameOptions {
    /** RGB triples; given on the first frame, it is the file's global palette. */
    palette?: number[][];
    /** ms, written in hundredths of a second. */
    delay?: number;
    /** -1 once, 0 forever, n times. */
    repeat?: number;
  }
  interface Encoder {
    writeFrame(index: Uint8Array, width: number, height: number, options?: WriteFrameOptions): void;
    finish(): void;
    bytes(): Uint8Array;
  }
  const gifenc: { GIFEncoder(): Encoder };
  export default gifenc;
}
