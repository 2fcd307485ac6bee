import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { brotliDecompressSync, constants, zstdCompressSync } from "node:zlib";

// The Chromium layer, packed for a fast cold start. @sparticuz/chromium ships its binary brotli-
// compressed (67 MB) and inflates it into /tmp on every cold start: measured here 1.4 s of CPU for
// brotli alone, 2.5 s to the first page with its README's code. Uncompressed (200 MB) it does not fit
// Lambda's 250 MB (function + layers) next to our fonts, filter lists and sharp. So at deploy the
// binary is cut into parts: those that compress worst are kept as they are (copying costs a fraction
// of decompressing), as many as RAW_GROWTH lets the layer grow by, and the rest zstd-compressed
// (decompresses ~4x faster than brotli); a cold start writes them into /tmp. Its small archives
// (SwiftShader, Amazon Linux 2023 libraries, Open Sans) are unpacked in the layer itself: nothing to
// do for them at a cold start. This module imports nothing of the project: stacks/ packs with it,
// lib/render/browser.ts unpacks. Off Lambda the installed package is packed once into the temp dir
// and unpacked the same way: one unpacker everywhere, and every step writes aside and renames, so
// any number of processes (checkouts, `npm run dev`, `npm test`) can start at once.

/** The binary is judged in pieces of this size: each kept raw or compressed; neighbours of a kind make one part. */
const SEGMENT = 4 * 1024 * 1024;
/**
 * How much larger than all-compressed the layer may get by holding pieces raw: 64 MiB holds 116 of
 * the binary's 200 MiB raw, and the function and its three layers stay ~25 MiB under Lambda's 250
 * (asserted in test/infra).
 */
const RAW_GROWTH = 64 * 1024 * 1024;
// zstd level 9: 79 MB for the whole binary (brotli's 67 MB); higher levels decompress no faster.
const LEVEL = 9;
const MANIFEST = "chromium.json";
// 2: parts carry zstd's content checksum, so a damaged part fails to decompress instead of writing wrong bytes.
// 3: parts may be raw (checked by their length; Lambda checks a layer's content by its SHA-256 when it is published).
const FORMAT = 3;

type Encoding = "zstd" | "raw";

interface Manifest {
  readonly format: number;
  readonly source: string;
  readonly size: number;
  readonly parts: readonly { readonly file: string; readonly offset: number; readonly encoding: Encoding }[];
}

const readManifest = (dir: string): Manifest | null =>
  existsSync(path.join(dir, MANIFEST)) ? (JSON.parse(readFileSync(path.join(dir, MANIFEST), "utf8")) as Manifest) : null;

const compress = (data: Buffer, level: number) =>
  zstdCompressSync(data, { params: { [constants.ZSTD_c_compressionLevel]: level, [constants.ZSTD_c_checksumFlag]: 1 } });

/** Which pieces of `binary` to keep raw: those whose compression saves least, while the bytes they add stay within `rawGrowth`. */
function rawPieces(binary: Buffer, segment: number, rawGrowth: number): boolean[] {
  if (rawGrowth === Number.POSITIVE_INFINITY) return Array.from({ length: Math.ceil(binary.length / segment) }, () => true);
  const pieces = Array.from({ length: Math.ceil(binary.length / segment) }, (_, i) => {
    const piece = binary.subarray(i * segment, (i + 1) * segment);
    return { i, growth: piece.length - compress(piece, LEVEL).length };
  });
  const raw = pieces.map(() => false);
  let grown = 0;
  for (const { i, growth } of pieces.sort((a, b) => a.growth - b.growth)) {
    if (grown + Math.max(0, growth) > rawGrowth) break;
    grown += Math.max(0, growth);
    raw[i] = true;
  }
  return raw;
}

/** The installed @sparticuz/chromium's bin/: its brotli binary and archives. */
export const chromiumSource = (): string => path.join(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..", "bin");

/**
 * Packs @sparticuz/chromium's bin/ (`source`) into `out`: chromium.json + chromium.<n>.zst and
 * chromium.<n>.bin, and the folders swiftshader/, al2023/ and fonts/ unpacked. Skipped when `out`
 * already holds this source. Made in a folder aside and renamed into place whole, so a process that
 * packs at the same time, or reads `out`, never sees half a layer. `segment` and `rawGrowth` are for tests.
 */
export function packChromium(source: string, out: string, { segment = SEGMENT, rawGrowth = RAW_GROWTH } = {}): void {
  const binary = statSync(path.join(source, "chromium.br"));
  const stamp = `${binary.size}:${binary.mtimeMs}:${segment}:${rawGrowth}`;
  const current = () => {
    const manifest = readManifest(out);
    return manifest?.format === FORMAT && manifest.source === stamp;
  };
  if (current()) return;
  mkdirSync(path.dirname(out), { recursive: true });
  const work = mkdtempSync(`${out}.partial-`);
  try {
    const whole = brotliDecompressSync(readFileSync(path.join(source, "chromium.br")));
    const raw = rawPieces(whole, segment, rawGrowth);
    const parts: Manifest["parts"][number][] = [];
    for (let first = 0; first < raw.length; ) {
      let end = first + 1;
      while (end < raw.length && raw[end] === raw[first]) end++;
      const encoding: Encoding = raw[first] ? "raw" : "zstd";
      const file = `chromium.${parts.length}.${encoding === "raw" ? "bin" : "zst"}`;
      const bytes = whole.subarray(first * segment, end * segment);
      writeFileSync(path.join(work, file), encoding === "raw" ? bytes : compress(bytes, LEVEL));
      parts.push({ file, offset: first * segment, encoding });
      first = end;
    }
    for (const archive of ["swiftshader", "al2023", "fonts"]) {
      const into = path.join(work, archive);
      mkdirSync(into);
      execFileSync("tar", ["-x", "-C", into], { input: brotliDecompressSync(readFileSync(path.join(source, `${archive}.tar.br`))) });
    }
    writeFileSync(path.join(work, MANIFEST), JSON.stringify({ format: FORMAT, source: stamp, size: whole.length, parts } satisfies Manifest));
    // Another process may have put the same layer in place meanwhile: then ours is not needed.
    if (current()) return;
    // An older layer (another package version) is moved aside before this one takes its place.
    if (existsSync(out)) renameSync(out, mkdtempSync(`${out}.old-`).concat("/layer"));
    renameSync(work, out);
  } catch (error) {
    if (!current()) throw error;
  } finally {
    rmSync(work, { recursive: true, force: true });
    for (const old of oldLayers(out)) rmSync(old, { recursive: true, force: true });
  }
}

/** Folders packChromium moved aside (`<out>.old-*`). */
const oldLayers = (out: string): string[] => {
  const parent = path.dirname(out);
  const prefix = `${path.basename(out)}.old-`;
  return existsSync(parent)
    ? readdirSync(parent)
        .filter((name) => name.startsWith(prefix))
        .map((name) => path.join(parent, name))
    : [];
};

/**
 * Off Lambda: `source` (the installed @sparticuz/chromium's bin/) packed once into the temp dir for
 * unpackChromium, all raw: no size limit to meet there, and judging every piece's compression took
 * ~6 s of a first start here, against ~2 s to inflate and write. The first process after an install
 * pays for it; the others find it made.
 */
export function localLayer(source = chromiumSource()): string {
  const out = path.join(tmpdir(), "shotline-chromium-layer");
  packChromium(source, out, { rawGrowth: Number.POSITIVE_INFINITY });
  return out;
}

/** Where a packed layer's parts are, for Chromium to run: the executable, its libraries and fonts. */
export interface UnpackedChromium {
  readonly executablePath: string;
  /** Amazon Linux 2023's libraries Chromium needs there (for LD_LIBRARY_PATH). */
  readonly libraryDir: string;
  /** Open Sans (@sparticuz/chromium's one font). */
  readonly fontsDir: string;
}

/**
 * Where Chromium of the packed layer `dir` is unpacked: in the temp dir (on Lambda, the function's
 * own /tmp), named after the binary it holds, so a machine with several versions keeps them apart.
 */
export const unpackedDir = (dir: string): string =>
  path.join(
    tmpdir(),
    `shotline-chromium-${createHash("sha256")
      .update(readManifest(dir)?.source ?? dir)
      .digest("hex")
      .slice(0, 12)}`,
  );

/** Whether `dir` is a layer packChromium() wrote (else it is @sparticuz/chromium's own bin/). */
export const isPacked = (dir: string): boolean => readManifest(dir) !== null;

// The unpacking in progress or done, shared by every copy of this module in the process: the boot
// module (lib/render/packaging/chromium-boot.ts, preloaded on Lambda) starts it, the function's bundle uses it.
const UNPACKING = Symbol.for("shotline.chromium-unpacking");
const registry = globalThis as { [UNPACKING]?: Map<string, Promise<UnpackedChromium>> };

/**
 * Writes the packed binary of `dir` into `into` (each part copied or decompressed to its offset)
 * and links SwiftShader's libraries next to it, where Chromium looks for them. Once per
 * `into` and process (a failure may be retried); a binary already there (a warm container, or
 * another process's) is used as it is. Written in a folder aside and renamed into place whole, so a
 * half-written binary is never started, whoever else unpacks at the same time. Runs on a worker
 * thread: at INIT the main thread is busy loading the function's code, and a stream on it would
 * stall until that is done.
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
  // taken as CommonJS or as an ES module (the process may run with --input-type=module). Run from
  // source through tsx, its functions carry calls to esbuild's __name helper: given here as a no-op.
  const source = `const __name = (target) => target;\n(${writeParts.toString()})((id) => process.getBuiltinModule(id), process.getBuiltinModule("node:worker_threads").workerData)`;
  const worker = new Worker(source, {
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
 * copied or decompressed one after another through one 1 MB buffer, written at their offsets:
 * measured here 310-360 ms for the 209 MB binary all compressed, where four parallel stream
 * pipelines took 800-930 ms (a stream hands on a new buffer for every chunk, and fresh memory costs
 * a page fault per 4 KB; the writes themselves are cheap). Node has no public call that decompresses
 * into a buffer of the caller's, so this one drives the decompressor's handle as zlib's own sync
 * code does; should a Node release change that, the streams do the work.
 */
async function writeParts(
  load: (id: string) => unknown,
  { dir, into, manifest, way }: { dir: string; into: string; manifest: Manifest; way: UnpackWay },
): Promise<void> {
  const fs = load("node:fs") as typeof import("node:fs");
  const { join, dirname } = load("node:path") as typeof import("node:path");
  const zlib = load("node:zlib") as typeof import("node:zlib");
  const writeInto = async (partial: string): Promise<void> => {
    const fd = fs.openSync(partial, "w", 0o700);
    // Each part must fill its place exactly: later parts' writes would hide a short one in the file's size.
    const checkLength = (index: number, written: number) => {
      const { file, offset } = manifest.parts[index]!;
      const length = (manifest.parts[index + 1]?.offset ?? manifest.size) - offset;
      if (written !== length) throw new Error(`${file} gave ${written} bytes, not ${length}`);
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
        for (const [index, { file, offset, encoding }] of manifest.parts.entries()) {
          const z = encoding === "raw" ? null : decompressor();
          // A decoding error destroys the stream (its error event comes later, and is not needed).
          z?.on("error", () => undefined);
          const source = fs.openSync(join(dir, file), "r");
          try {
            let position = offset;
            for (let read = fs.readSync(source, input); read > 0; read = fs.readSync(source, input)) {
              if (!z) {
                position += fs.writeSync(fd, input, 0, read, position);
                continue;
              }
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
            z?.close();
          }
        }
      } else {
        const { pipeline } = load("node:stream/promises") as typeof import("node:stream/promises");
        // Every part settles before the file closes (one failing must not leave the others writing to a closed fd).
        const results = await Promise.allSettled(
          manifest.parts.map(async ({ file, offset, encoding }, index) => {
            const sink = fs.createWriteStream("", { fd, start: offset, autoClose: false });
            const read = fs.createReadStream(join(dir, file), { highWaterMark: 1 << 22 });
            await (encoding === "raw" ? pipeline(read, sink) : pipeline(read, zlib.createZstdDecompress({ chunkSize: 1 << 21 }), sink));
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
  };
  fs.mkdirSync(dirname(into), { recursive: true });
  // A folder without its binary is what an interrupted unpacking of an older release left.
  if (fs.existsSync(into) && !fs.existsSync(join(into, "chromium"))) fs.rmSync(into, { recursive: true, force: true });
  const work = fs.mkdtempSync(`${into}.partial-`);
  try {
    await writeInto(join(work, "chromium"));
    for (const name of fs.readdirSync(join(dir, "swiftshader"))) fs.symlinkSync(join(dir, "swiftshader", name), join(work, name));
    try {
      fs.renameSync(work, into);
    } catch (error) {
      // Another process put a whole one in place first: it is the same binary.
      if (!fs.existsSync(join(into, "chromium"))) throw error;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
