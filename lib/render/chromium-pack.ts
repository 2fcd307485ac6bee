import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { brotliDecompressSync, constants, zstdCompressSync } from "node:zlib";

// The Chromium layer, packed for a fast cold start. @sparticuz/chromium ships its binary brotli-
// compressed (67 MB) and inflates it into /tmp on every cold start: measured here 1.4 s of CPU for
// brotli alone, 2.5 s to the first page with its README's code. Uncompressed (200 MB) it does not fit
// Lambda's 250 MB (function + layers) next to our fonts, filter lists and sharp. So at deploy the
// binary is split into PARTS pieces, each zstd-compressed (decompresses ~4x faster than brotli), and
// a cold start writes them into /tmp in parallel. Its small archives (SwiftShader, Amazon Linux 2023
// libraries, Open Sans) are unpacked in the layer itself: nothing to do for them at a cold start.
// This module imports nothing of the project: stacks/ packs with it, lib/render/browser.ts unpacks.

const PARTS = 4;
// zstd level 9: 79 MB for the four parts (brotli's 67 MB), 5 s to pack; higher levels decompress no faster.
const LEVEL = 9;
const MANIFEST = "chromium.json";
// 2: parts carry zstd's content checksum, so a damaged part fails to decompress instead of writing wrong bytes.
const FORMAT = 2;

interface Manifest {
  readonly format: number;
  readonly source: string;
  readonly size: number;
  readonly parts: readonly { readonly file: string; readonly offset: number }[];
}

const readManifest = (dir: string): Manifest | null =>
  existsSync(path.join(dir, MANIFEST)) ? (JSON.parse(readFileSync(path.join(dir, MANIFEST), "utf8")) as Manifest) : null;

/**
 * Packs @sparticuz/chromium's bin/ (`source`) into `out`: chromium.json + chromium.<n>.zst, and the
 * folders swiftshader/, al2023/ and fonts/ unpacked. Skipped when `out` already holds this source.
 */
export function packChromium(source: string, out: string): void {
  const binary = statSync(path.join(source, "chromium.br"));
  const stamp = `${binary.size}:${binary.mtimeMs}`;
  const previous = readManifest(out);
  if (previous?.format === FORMAT && previous.source === stamp) return;
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const whole = brotliDecompressSync(readFileSync(path.join(source, "chromium.br")));
  const step = Math.ceil(whole.length / PARTS);
  const parts = Array.from({ length: PARTS }, (_, i) => {
    const file = `chromium.${i}.zst`;
    writeFileSync(
      path.join(out, file),
      zstdCompressSync(whole.subarray(i * step, (i + 1) * step), {
        params: { [constants.ZSTD_c_compressionLevel]: LEVEL, [constants.ZSTD_c_checksumFlag]: 1 },
      }),
    );
    return { file, offset: i * step };
  });
  for (const archive of ["swiftshader", "al2023", "fonts"]) {
    const into = path.join(out, archive);
    mkdirSync(into);
    execFileSync("tar", ["-x", "-C", into], { input: brotliDecompressSync(readFileSync(path.join(source, `${archive}.tar.br`))) });
  }
  // The manifest last: a pack interrupted halfway has none and is done again.
  writeFileSync(path.join(out, MANIFEST), JSON.stringify({ format: FORMAT, source: stamp, size: whole.length, parts } satisfies Manifest));
}

/** Where a packed layer's parts are, for Chromium to run: the executable, its libraries and fonts. */
export interface UnpackedChromium {
  readonly executablePath: string;
  /** Amazon Linux 2023's libraries Chromium needs there (for LD_LIBRARY_PATH). */
  readonly libraryDir: string;
  /** Open Sans (@sparticuz/chromium's one font). */
  readonly fontsDir: string;
}

/** Where a rendering function unpacks Chromium: its own /tmp. */
export const unpackedDir = (): string => path.join(tmpdir(), "shotline-chromium");

/** Whether `dir` is a layer packChromium() wrote (else it is @sparticuz/chromium's own bin/). */
export const isPacked = (dir: string): boolean => readManifest(dir) !== null;

// The unpacking in progress or done, shared by every copy of this module in the process: the boot
// module (lib/render/chromium-boot.ts, preloaded on Lambda) starts it, the function's bundle uses it.
const UNPACKING = Symbol.for("shotline.chromium-unpacking");
const registry = globalThis as { [UNPACKING]?: Map<string, Promise<UnpackedChromium>> };

/**
 * Writes the packed binary of `dir` into `into` (the parts decompressed in parallel, each to its
 * offset) and links SwiftShader's libraries next to it, where Chromium looks for them. Once per
 * `into` and process (a failure may be retried); a binary already there (a warm container) is used
 * as it is. Written under another name and renamed, so a half-written binary is never started. Runs
 * on a worker thread: at INIT the main thread is busy loading the function's code, and a stream on
 * it would stall until that is done.
 */
export function unpackChromium(dir: string, into: string, way: UnpackWay = "reused-buffer"): Promise<UnpackedChromium> {
  registry[UNPACKING] ??= new Map();
  const started = registry[UNPACKING];
  const existing = started.get(into);
  if (existing) return existing;
  const pending = unpack(dir, into, way);
  started.set(into, pending);
  pending.catch(() => started.delete(into));
  return pending;
}

async function unpack(dir: string, into: string, way: UnpackWay): Promise<UnpackedChromium> {
  const manifest = readManifest(dir);
  if (!manifest) throw new Error(`${dir} is not a packed Chromium layer`);
  const executablePath = path.join(into, "chromium");
  const unpacked = { executablePath, libraryDir: path.join(dir, "al2023", "lib"), fontsDir: path.join(dir, "fonts") };
  if (existsSync(executablePath)) return unpacked;
  // The worker runs this function's source: it may use only its arguments (the bundle is not there),
  // and loads Node's modules with process.getBuiltinModule, which works whether the worker's code is
  // taken as CommonJS or as an ES module (the process may run with --input-type=module).
  const worker = new Worker(`(${writeParts.toString()})((id) => process.getBuiltinModule(id), process.getBuiltinModule("node:worker_threads").workerData)`, {
    eval: true,
    workerData: { dir, into, manifest, way },
  });
  await new Promise<void>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`unpacking Chromium stopped (exit code ${code})`))));
  });
  if (!existsSync(executablePath)) throw new Error(`unpacking Chromium into ${into} failed`);
  return unpacked;
}

/** How unpackChromium writes the parts: through one reused buffer (the default), or Node's public streams. */
export type UnpackWay = "reused-buffer" | "streams";

/**
 * unpackChromium's work, on its worker thread; `load` gives it Node's built-in modules. The parts are
 * decompressed one after another through one 1 MB output buffer, written at their offsets: measured
 * here 310-360 ms for the 209 MB binary, where four parallel stream pipelines took 800-930 ms (a
 * stream hands on a new buffer for every chunk, and fresh memory costs a page fault per 4 KB; the
 * writes themselves are cheap). Node has no public call that decompresses into a buffer of the
 * caller's, so this one drives the decompressor's handle as zlib's own sync code does; should a
 * Node release change that, the streams do the work.
 */
async function writeParts(
  load: (id: string) => unknown,
  { dir, into, manifest, way }: { dir: string; into: string; manifest: Manifest; way: UnpackWay },
): Promise<void> {
  const fs = load("node:fs") as typeof import("node:fs");
  const join = (load("node:path") as typeof import("node:path")).join;
  const zlib = load("node:zlib") as typeof import("node:zlib");
  fs.rmSync(into, { recursive: true, force: true });
  fs.mkdirSync(into, { recursive: true });
  const partial = join(into, "chromium.partial");
  const fd = fs.openSync(partial, "w", 0o700);
  // Each part must fill its place exactly: later parts' writes would hide a short one in the file's size.
  const checkLength = (index: number, written: number) => {
    const { file, offset } = manifest.parts[index]!;
    const length = (manifest.parts[index + 1]?.offset ?? manifest.size) - offset;
    if (written !== length) throw new Error(`${file} decompressed to ${written} bytes, not ${length}`);
  };
  interface Handle {
    writeSync(flush: number, input: Buffer, inOffset: number, inLength: number, out: Buffer, outOffset: number, outLength: number): void;
  }
  const decompressor = () =>
    zlib.createZstdDecompress() as unknown as {
      _handle?: Handle;
      _writeState?: Uint32Array;
      destroyed: boolean;
      close(): void;
      on(event: "error", listener: () => void): void;
    };
  const probe = decompressor();
  const direct = way === "reused-buffer" && typeof probe._handle?.writeSync === "function" && probe._writeState instanceof Uint32Array;
  probe.close();
  try {
    if (direct) {
      const input = Buffer.alloc(1 << 20);
      const output = Buffer.alloc(1 << 20);
      for (const [index, { file, offset }] of manifest.parts.entries()) {
        const z = decompressor();
        // A decoding error destroys the stream (its error event comes later, and is not needed).
        z.on("error", () => undefined);
        const source = fs.openSync(join(dir, file), "r");
        try {
          let position = offset;
          for (let read = fs.readSync(source, input); read > 0; read = fs.readSync(source, input)) {
            let consumed = 0;
            for (;;) {
              z._handle!.writeSync(zlib.constants.ZSTD_e_continue, input, consumed, read - consumed, output, 0, output.length);
              if (z.destroyed) throw new Error(`${file} is not a valid zstd part`);
              const [outLeft, inLeft] = z._writeState!;
              const produced = output.length - outLeft!;
              if (produced > 0) position += fs.writeSync(fd, output, 0, produced, position);
              consumed = read - inLeft!;
              // All input taken and room left over: the decompressor has nothing more for now.
              if (inLeft === 0 && outLeft! > 0) break;
            }
          }
          checkLength(index, position - offset);
        } finally {
          fs.closeSync(source);
          z.close();
        }
      }
    } else {
      const { pipeline } = load("node:stream/promises") as typeof import("node:stream/promises");
      // Every part settles before the file closes (one failing must not leave the others writing to a closed fd).
      const results = await Promise.allSettled(
        manifest.parts.map(async ({ file, offset }, index) => {
          const sink = fs.createWriteStream("", { fd, start: offset, autoClose: false });
          await pipeline(fs.createReadStream(join(dir, file), { highWaterMark: 1 << 22 }), zlib.createZstdDecompress({ chunkSize: 1 << 21 }), sink);
          checkLength(index, sink.bytesWritten);
        }),
      );
      for (const result of results) if (result.status === "rejected") throw result.reason;
    }
  } finally {
    fs.closeSync(fd);
  }
  const written = fs.statSync(partial).size;
  if (written !== manifest.size) throw new Error(`unpacking Chromium wrote ${written} bytes, not ${manifest.size}`);
  for (const name of fs.readdirSync(join(dir, "swiftshader"))) fs.symlinkSync(join(dir, "swiftshader", name), join(into, name));
  fs.renameSync(partial, join(into, "chromium"));
}
