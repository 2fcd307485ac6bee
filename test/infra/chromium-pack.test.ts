import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliCompressSync, constants, zstdCompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPacked, packChromium, type UnpackWay, unpackChromium } from "../../lib/render/packaging/chromium-pack.js";

const WAYS: readonly UnpackWay[] = ["reused-buffer", "streams"];
const PIECES = { segment: 256 * 1024, rawGrowth: 32 * 1024 };

// A stand-in for @sparticuz/chromium's bin/ (its real 200 MB binary is packed and run by test/infra
// and the cold-start bench): a 3.5 MB "binary" whose size is not a whole number of pieces, and the
// three archives. Packed in 256 KiB pieces allowed to grow the layer by 32 KiB: the random bytes
// (which compression does not shrink) are kept raw, the text and the run of sevens compressed.
let root: string;
let source: string;
let packed: string;
let binary: Buffer;

const brotli = (data: Buffer) => brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });

beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), "chromium-pack-"));
  source = path.join(root, "bin");
  packed = path.join(root, "layer");
  mkdirSync(source);
  const piece = 256 * 1024;
  binary = Buffer.concat([
    randomBytes(4 * piece),
    Buffer.from(
      randomBytes(3 * piece)
        .toString("base64")
        .slice(0, 4 * piece),
    ),
    randomBytes(2 * piece),
    Buffer.alloc(1_000_001, 7),
  ]);
  writeFileSync(path.join(source, "chromium.br"), brotli(binary));
  for (const [archive, files] of Object.entries({
    swiftshader: { "libEGL.so": "egl", "libGLESv2.so": "gles", "vk_swiftshader_icd.json": "{}" },
    al2023: { "lib/libnss3.so": "nss" },
    fonts: { "fonts.conf": "<fontconfig/>", "fonts/Open_Sans/OpenSans-Regular.ttf": "ttf" },
  })) {
    const dir = path.join(root, "src", archive);
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), content);
    }
    writeFileSync(path.join(source, `${archive}.tar.br`), brotli(execFileSync("tar", ["-c", "-C", dir, "."])));
  }
  packChromium(source, packed, PIECES);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("packChromium", () => {
  it("keeps the pieces compression does not shrink raw, compresses the rest, and unpacks the small archives in the layer", () => {
    expect(isPacked(packed)).toBe(true);
    expect(isPacked(source)).toBe(false);
    const manifest = JSON.parse(readFileSync(path.join(packed, "chromium.json"), "utf8")) as {
      size: number;
      parts: { file: string; offset: number; encoding: string }[];
    };
    expect(manifest.size).toBe(binary.length);
    const piece = PIECES.segment;
    expect(manifest.parts).toEqual([
      { file: "chromium.0.bin", offset: 0, encoding: "raw" },
      { file: "chromium.1.zst", offset: 4 * piece, encoding: "zstd" },
      { file: "chromium.2.bin", offset: 8 * piece, encoding: "raw" },
      { file: "chromium.3.zst", offset: 10 * piece, encoding: "zstd" },
    ]);
    expect(readFileSync(path.join(packed, "chromium.0.bin")).equals(binary.subarray(0, 4 * piece))).toBe(true);
    // The text shrinks to ~3/4 (base64), the sevens to almost nothing.
    expect(statSync(path.join(packed, "chromium.1.zst")).size).toBeLessThan(0.8 * 4 * piece);
    expect(readFileSync(path.join(packed, "swiftshader", "libEGL.so"), "utf8")).toBe("egl");
    expect(readFileSync(path.join(packed, "al2023", "lib", "libnss3.so"), "utf8")).toBe("nss");
    expect(existsSync(path.join(packed, "fonts", "fonts", "Open_Sans", "OpenSans-Regular.ttf"))).toBe(true);
  });

  it("does not pack the same source twice", () => {
    const before = statSync(path.join(packed, "chromium.1.zst")).mtimeMs;
    packChromium(source, packed, PIECES);
    expect(statSync(path.join(packed, "chromium.1.zst")).mtimeMs).toBe(before);
  });

  it("keeps nothing raw that would grow the layer past its allowance", () => {
    const strict = path.join(root, "strict");
    packChromium(source, strict, { segment: PIECES.segment, rawGrowth: 0 });
    const manifest = JSON.parse(readFileSync(path.join(strict, "chromium.json"), "utf8")) as { parts: { encoding: string }[] };
    // Random bytes do not compress: raw they cost nothing, so even no allowance keeps them raw.
    expect(manifest.parts.map((p) => p.encoding)).toEqual(["raw", "zstd", "raw", "zstd"]);
    const loose = path.join(root, "loose");
    packChromium(source, loose, { segment: PIECES.segment, rawGrowth: 100 * 1024 * 1024 });
    expect((JSON.parse(readFileSync(path.join(loose, "chromium.json"), "utf8")) as { parts: { encoding: string }[] }).parts).toEqual([
      { file: "chromium.0.bin", offset: 0, encoding: "raw" },
    ]);
  });
});

describe("unpackChromium", () => {
  it.each(WAYS)(
    "%s: writes the exact binary, executable, with SwiftShader's libraries linked next to it; concurrent callers share one unpacking",
    async (way) => {
      const into = path.join(root, `tmp-1-${way}`, "shotline-chromium");
      const first = unpackChromium(packed, into, way);
      expect(unpackChromium(packed, into, way)).toBe(first);
      const unpacked = await first;
      expect(unpacked.executablePath).toBe(path.join(into, "chromium"));
      expect(readFileSync(unpacked.executablePath).equals(binary)).toBe(true);
      expect(statSync(unpacked.executablePath).mode & 0o777).toBe(0o700);
      expect(readlinkSync(path.join(into, "libGLESv2.so"))).toBe(path.join(packed, "swiftshader", "libGLESv2.so"));
      expect(unpacked.libraryDir).toBe(path.join(packed, "al2023", "lib"));
      // Written aside and renamed into place: nothing half-made is left beside it.
      expect(readdirSync(path.dirname(into))).toEqual(["shotline-chromium"]);
    },
  );

  it("uses a binary already there (a warm container) as it is", async () => {
    const into = path.join(root, "tmp-2", "shotline-chromium");
    mkdirSync(into, { recursive: true });
    writeFileSync(path.join(into, "chromium"), "already here");
    const { executablePath } = await unpackChromium(packed, into);
    expect(readFileSync(executablePath, "utf8")).toBe("already here");
  });

  it.each(WAYS.flatMap((way) => [`${way} truncated`, `${way} scrambled`, `${way} short`, `${way} raw-truncated`]))(
    "%s: fails on a corrupt part without leaving a binary to start, and is tried again afterwards",
    async (name) => {
      const [way, damage] = name.split(" ") as [UnpackWay, string];
      const broken = path.join(root, `broken-${way}-${damage}`);
      execFileSync("cp", ["-r", packed, broken]);
      // Part 1 is the compressed text (part 3, the run of sevens, is too small to scramble); part 2 is raw.
      const part = path.join(broken, { scrambled: "chromium.1.zst", "raw-truncated": "chromium.2.bin" }[damage] ?? "chromium.3.zst");
      const good = readFileSync(part);
      const scrambled = Buffer.from(good);
      for (let i = 200; i < scrambled.length; i += 997) scrambled[i] = scrambled[i]! ^ 0x5a;
      // "short": a valid zstd frame of a part that decodes to fewer bytes than its place in the binary.
      const truncated = good.subarray(0, good.length / 2);
      const bad = { truncated, "raw-truncated": truncated, scrambled, short: zstdCompressSync(binary.subarray(0, 1000)) }[damage]!;
      writeFileSync(part, bad);
      const into = path.join(root, `tmp-3-${way}-${damage}`, "shotline-chromium");
      await expect(unpackChromium(broken, into, way)).rejects.toThrow();
      expect(existsSync(path.join(into, "chromium"))).toBe(false);
      writeFileSync(part, good);
      const { executablePath } = await unpackChromium(broken, into, way);
      expect(readFileSync(executablePath).equals(binary)).toBe(true);
      expect(lstatSync(path.join(into, "libEGL.so")).isSymbolicLink()).toBe(true);
    },
  );

  it("packs and unpacks safely side by side: five fresh processes starting at once in one temp dir all get the whole binary", async () => {
    const shared = path.join(root, "side-by-side");
    mkdirSync(shared);
    const module = new URL("../../lib/render/packaging/chromium-pack.ts", import.meta.url).pathname;
    const script = `import { localLayer, unpackChromium, unpackedDir } from ${JSON.stringify(module)};
const layer = localLayer(${JSON.stringify(source)});
const { executablePath } = await unpackChromium(layer, unpackedDir(layer));
console.log(executablePath);`;
    const run = () =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env: { ...process.env, TMPDIR: shared } }, (error, stdout) =>
          error ? reject(error) : resolve(stdout.trim()),
        ),
      );
    const paths = await Promise.all(Array.from({ length: 5 }, run));
    expect(new Set(paths).size).toBe(1);
    expect(readFileSync(paths[0]!).equals(binary)).toBe(true);
    // One layer and one unpacked binary, nothing half-made or moved aside left behind.
    expect(
      readdirSync(shared)
        .filter((name) => name.startsWith("shotline-"))
        .sort(),
    ).toEqual(["shotline-chromium-layer", path.basename(path.dirname(paths[0]!))].sort());
  }, 60_000);

  it("refuses a folder that is not a packed layer", async () => {
    await expect(unpackChromium(source, path.join(root, "tmp-4"))).rejects.toThrow(/not a packed Chromium layer/);
  });
});
