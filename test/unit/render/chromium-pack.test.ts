import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliCompressSync, constants, zstdCompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPacked, packChromium, type UnpackWay, unpackChromium } from "../../../lib/render/chromium-pack.js";

const WAYS: readonly UnpackWay[] = ["reused-buffer", "streams"];

// A stand-in for @sparticuz/chromium's bin/ (its real 200 MB binary is packed and run by test/infra
// and the cold-start bench): a 3 MB "binary" that does not split evenly, and the three archives.
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
  binary = Buffer.concat([randomBytes(1_500_001), Buffer.alloc(1_500_000, 7)]);
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
  packChromium(source, packed);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("packChromium", () => {
  it("splits the binary into zstd parts with a manifest and unpacks the small archives in the layer", () => {
    expect(isPacked(packed)).toBe(true);
    expect(isPacked(source)).toBe(false);
    const manifest = JSON.parse(readFileSync(path.join(packed, "chromium.json"), "utf8")) as { size: number; parts: { file: string; offset: number }[] };
    expect(manifest.size).toBe(binary.length);
    expect(manifest.parts.map((p) => p.file)).toEqual(["chromium.0.zst", "chromium.1.zst", "chromium.2.zst", "chromium.3.zst"]);
    expect(manifest.parts[1]!.offset).toBe(Math.ceil(binary.length / 4));
    expect(readFileSync(path.join(packed, "swiftshader", "libEGL.so"), "utf8")).toBe("egl");
    expect(readFileSync(path.join(packed, "al2023", "lib", "libnss3.so"), "utf8")).toBe("nss");
    expect(existsSync(path.join(packed, "fonts", "fonts", "Open_Sans", "OpenSans-Regular.ttf"))).toBe(true);
  });

  it("does not pack the same source twice", () => {
    const before = statSync(path.join(packed, "chromium.0.zst")).mtimeMs;
    packChromium(source, packed);
    expect(statSync(path.join(packed, "chromium.0.zst")).mtimeMs).toBe(before);
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
      expect(readdirSync(into)).not.toContain("chromium.partial");
    },
  );

  it("uses a binary already there (a warm container) as it is", async () => {
    const into = path.join(root, "tmp-2", "shotline-chromium");
    mkdirSync(into, { recursive: true });
    writeFileSync(path.join(into, "chromium"), "already here");
    const { executablePath } = await unpackChromium(packed, into);
    expect(readFileSync(executablePath, "utf8")).toBe("already here");
  });

  it.each(WAYS.flatMap((way) => [`${way} truncated`, `${way} scrambled`, `${way} short`]))(
    "%s: fails on a corrupt part without leaving a binary to start, and is tried again afterwards",
    async (name) => {
      const [way, damage] = name.split(" ") as [UnpackWay, string];
      const broken = path.join(root, `broken-${way}-${damage}`);
      execFileSync("cp", ["-r", packed, broken]);
      // Part 1 holds random bytes (part 2 is a short run of sevens: too small to scramble).
      const part = path.join(broken, damage === "scrambled" ? "chromium.1.zst" : "chromium.2.zst");
      const good = readFileSync(part);
      const scrambled = Buffer.from(good);
      for (let i = 200; i < scrambled.length; i += 997) scrambled[i] = scrambled[i]! ^ 0x5a;
      // "short": a valid zstd frame of a part that decodes to fewer bytes than its place in the binary.
      const bad = { truncated: good.subarray(0, good.length / 2), scrambled, short: zstdCompressSync(binary.subarray(0, 1000)) }[damage]!;
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

  it("refuses a folder that is not a packed layer", async () => {
    await expect(unpackChromium(source, path.join(root, "tmp-4"))).rejects.toThrow(/not a packed Chromium layer/);
  });
});
