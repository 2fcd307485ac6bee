// The fonts layer as lib/render/packaging/fonts.ts builds it: its CJK collections hold Google's
// WOFF2 slices exactly as the reference decoder gives them (the check kept from when the decoder was
// our own). Here with the other packaging checks: the build takes seconds.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decompress as referenceDecompress } from "woff2-encoder";
import { buildFonts } from "../../lib/render/packaging/fonts.js";
import { tablesOf } from "../helpers/sfnt.js";

describe("the shipped CJK collections", () => {
  it("hold each of Google's WOFF2 slices table for table as its reference decoder gives them, renamed in name alone", async () => {
    const out = mkdtempSync(path.join(tmpdir(), "shotline-fonts-test-"));
    try {
      await buildFonts(out);
      let faces = 0;
      for (const family of ["jp", "sc", "tc"]) {
        const dir = path.join(path.dirname(createRequire(import.meta.url).resolve(`noto-sans-${family}/package.json`)), `noto_sans_${family}_regular`);
        const sources = readdirSync(dir)
          .filter((f) => f.endsWith(".woff2"))
          .sort();
        const ttc = readFileSync(path.join(out, `noto-sans-${family}.ttc`));
        expect(ttc.readUInt32BE(8), family).toBe(sources.length);
        for (const [i, file] of sources.entries()) {
          const shipped = tablesOf(ttc, ttc.readUInt32BE(12 + i * 4));
          const reference = tablesOf(Buffer.from(await referenceDecompress(readFileSync(path.join(dir, file)))), 0);
          expect(
            shipped.map(({ tag }) => tag),
            file,
          ).toEqual(reference.map(({ tag }) => tag));
          for (const [t, { tag, data }] of shipped.entries()) {
            // head's checkSumAdjustment (bytes 8-11) sums the whole file, whose layout is the decoder's.
            const comparable = (table: Buffer) => (tag === "head" ? Buffer.concat([table.subarray(0, 8), table.subarray(12)]) : table);
            if (tag !== "name") expect(comparable(data).equals(comparable(reference[t]!.data)), `${file}: ${tag}`).toBe(true);
          }
          faces++;
        }
      }
      expect(faces).toBeGreaterThan(300);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
