import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { brotliCompressSync, constants } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compress as referenceCompress, decompress as referenceDecompress } from "woff2-encoder";
import { solidPng } from "../../../dev/harness/fixtures.js";
import { imageSize } from "../../../lib/render/image-size.js";
import { renameFamily, sfntCollection, woff2ToSfnt, woffToSfnt } from "../../../lib/render/packaging/woff.js";

describe("imageSize", () => {
  it("reads a PNG's size from its header", () => {
    expect(imageSize(solidPng(37, 21, [1, 2, 3]))).toEqual({ width: 37, height: 21 });
  });

  it("reads a JPEG's size from its start-of-frame segment, skipping the segments before it", () => {
    // SOI, an APP0 segment of 16 bytes, then SOF0 with height 300 and width 500.
    const jpeg = Buffer.from([
      0xff,
      0xd8,
      0xff,
      0xe0,
      0x00,
      0x10,
      ...Array(14).fill(0),
      0xff,
      0xc0,
      0x00,
      0x11,
      0x08,
      0x01,
      0x2c,
      0x01,
      0xf4,
      0x03,
      ...Array(9).fill(0),
    ]);
    expect(imageSize(jpeg)).toEqual({ width: 500, height: 300 });
  });

  it("answers null for anything else", () => {
    expect(imageSize(Buffer.from("%PDF-1.4"))).toBeNull();
  });
});

/** The tables of the sfnt font whose directory starts at `at` in `file`. */
function tablesOf(file: Buffer, at: number) {
  return Array.from({ length: file.readUInt16BE(at + 4) }, (_, t) => {
    const record = at + 12 + t * 16;
    const offset = file.readUInt32BE(record + 8);
    return { tag: file.toString("latin1", record, record + 4), data: file.subarray(offset, offset + file.readUInt32BE(record + 12)) };
  });
}

describe("woffToSfnt", () => {
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve("@fontsource/noto-color-emoji/package.json")), "files");
  const woff = readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith(".woff"))!));

  it("unwraps a WOFF into a TrueType/OpenType file with the same tables, sorted, 4-byte aligned", () => {
    const sfnt = woffToSfnt(woff);
    const numTables = woff.readUInt16BE(12);
    expect(sfnt.readUInt32BE(0)).toBe(woff.readUInt32BE(4)); // the flavor: 0x00010000 or 'OTTO'
    expect(sfnt.readUInt16BE(4)).toBe(numTables);
    // WOFF's header records the size of the font it wraps.
    expect(sfnt.length).toBe(woff.readUInt32BE(16));
    const tags: string[] = [];
    for (let i = 0; i < numTables; i++) {
      const record = 12 + i * 16;
      tags.push(sfnt.subarray(record, record + 4).toString("latin1"));
      expect(sfnt.readUInt32BE(record + 8) % 4).toBe(0);
    }
    expect(tags).toEqual([...tags].sort());
    expect(tags).toEqual(expect.arrayContaining(["cmap", "head", "name"]));
    // The head table keeps its magic number after decompression.
    const head = tags.indexOf("head");
    expect(sfnt.readUInt32BE(sfnt.readUInt32BE(12 + head * 16 + 8) + 12)).toBe(0x5f0f3cf5);
  });

  it("leaves out the tables asked for, keeping the directory consistent", () => {
    const sfnt = woffToSfnt(woff, ["SVG ", "COLR"]);
    expect(tablesOf(sfnt, 0).map(({ tag }) => tag)).toEqual(
      tablesOf(woffToSfnt(woff), 0)
        .map(({ tag }) => tag)
        .filter((tag) => tag !== "SVG " && tag !== "COLR"),
    );
    expect(sfnt.readUInt16BE(4)).toBe(woff.readUInt16BE(12) - 2);
  });

  it("joins fonts into a TrueType Collection in which each font's tables are where its directory says", () => {
    const fonts = readdirSync(dir)
      .filter((f) => /-\d+-400-normal\.woff$/.test(f))
      .slice(0, 3)
      .map((f) => woffToSfnt(readFileSync(path.join(dir, f))));
    const ttc = sfntCollection(fonts);
    expect(ttc.toString("latin1", 0, 4)).toBe("ttcf");
    expect(ttc.readUInt32BE(8)).toBe(3);
    fonts.forEach((font, i) => {
      const at = ttc.readUInt32BE(12 + i * 4);
      expect(at % 4).toBe(0);
      const [inCollection, alone] = [tablesOf(ttc, at), tablesOf(font, 0)];
      expect(inCollection.map(({ tag, data }) => [tag, data.toString("base64")])).toEqual(alone.map(({ tag, data }) => [tag, data.toString("base64")]));
    });
  });

  it("refuses a file that is not WOFF 1.0", () => {
    expect(() => woffToSfnt(Buffer.from("wOF2aaaaaaaaaaaa"))).toThrow(/not a WOFF 1.0 file/);
  });
});

describe("woff2ToSfnt", () => {
  const packageDir = (pkg: string) => path.dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  const filesOf = (dir: string, pattern: RegExp) =>
    readdirSync(dir)
      .filter((f) => pattern.test(f))
      .map((f) => path.join(dir, f));
  // What the fonts layer converts (the regular slices of Noto Sans JP, SC and TC); fontsource's WOFF2
  // of the script fonts, regular and bold (composite glyphs); and the hinted TrueType fonts we ship
  // (Arimo, Tinos, Cousine, Gelasio, DejaVu: instructions, overlap flags), made WOFF2 by Google's encoder.
  const shipped = ["jp", "sc", "tc"].flatMap((family) => filesOf(path.join(packageDir(`noto-sans-${family}`), `noto_sans_${family}_regular`), /\.woff2$/));
  const fontsource = path.dirname(packageDir("@fontsource/noto-sans-thai"));
  const scripts = readdirSync(fontsource).flatMap((pkg) => filesOf(path.join(fontsource, pkg, "files"), /-[a-z]+-(400|700)-normal\.woff2$/));
  const expo = path.dirname(packageDir("@expo-google-fonts/arimo"));
  const hinted = [
    ...readdirSync(expo).flatMap((family) => filesOf(path.join(expo, family, "400Regular"), /\.ttf$/)),
    ...filesOf(path.join(packageDir("dejavu-fonts-ttf"), "ttf"), /^DejaVuSans(-Bold)?\.ttf$/),
  ];

  /** How many glyphs of a TrueType font's glyf table are composite, have instructions, or have overlapping contours. */
  function glyphKinds(font: Buffer) {
    const tables = Object.fromEntries(tablesOf(font, 0).map(({ tag, data }) => [tag, data]));
    const [head, loca, glyf] = [tables.head!, tables.loca!, tables.glyf!];
    const long = head.readInt16BE(50) === 1;
    const count = loca.length / (long ? 4 : 2) - 1;
    const kinds = { composite: 0, instructed: 0, overlapping: 0 };
    for (let g = 0; g < count; g++) {
      const at = long ? loca.readUInt32BE(g * 4) : loca.readUInt16BE(g * 2) * 2;
      const end = long ? loca.readUInt32BE(g * 4 + 4) : loca.readUInt16BE(g * 2 + 2) * 2;
      if (end === at) continue;
      const contours = glyf.readInt16BE(at);
      if (contours < 0) {
        kinds.composite++;
        continue;
      }
      const instructions = glyf.readUInt16BE(at + 10 + 2 * contours);
      if (instructions > 0) kinds.instructed++;
      // The first point's flag: OVERLAP_SIMPLE is 0x40.
      if (glyf[at + 12 + 2 * contours + instructions]! & 0x40) kinds.overlapping++;
    }
    return kinds;
  }

  it("rebuilds every font the way Google's reference decoder does, table for table", async () => {
    expect(shipped.length).toBeGreaterThan(300);
    expect(scripts.length).toBeGreaterThan(100);
    expect(hinted.length).toBe(6);
    const kinds = { composite: 0, instructed: 0, overlapping: 0 };
    for (const file of [...shipped, ...scripts, ...hinted]) {
      const woff2 = file.endsWith(".ttf") ? Buffer.from(await referenceCompress(readFileSync(file))) : readFileSync(file);
      const ours = woff2ToSfnt(woff2);
      const reference = Buffer.from(await referenceDecompress(woff2));
      const [mine, theirs] = [tablesOf(ours, 0), tablesOf(reference, 0)];
      expect(
        mine.map(({ tag }) => tag),
        file,
      ).toEqual(theirs.map(({ tag }) => tag));
      for (const [i, { tag, data }] of mine.entries()) {
        // head's checkSumAdjustment (bytes 8-11) sums the whole file, whose layout is each decoder's own.
        const comparable = (table: Buffer) => (tag === "head" ? Buffer.concat([table.subarray(0, 8), table.subarray(12)]) : table);
        expect(comparable(data).equals(comparable(theirs[i]!.data)), `${file}: ${tag}`).toBe(true);
      }
      // Each table's recorded checksum is its own.
      for (const [t, { data }] of mine.entries()) {
        const record = 12 + t * 16;
        let sum = 0;
        const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
        for (let w = 0; w < padded.length; w += 4) sum = (sum + padded.readUInt32BE(w)) >>> 0;
        expect(ours.readUInt32BE(record + 4)).toBe(sum);
      }
      if (!shipped.includes(file)) {
        const found = glyphKinds(ours);
        kinds.composite += found.composite;
        kinds.instructed += found.instructed;
        kinds.overlapping += found.overlapping;
      }
    }
    // The comparison covered composite, hinted and overlapping glyphs, not only the CJK fonts' plain outlines.
    expect(kinds.composite).toBeGreaterThan(1000);
    expect(kinds.instructed).toBeGreaterThan(1000);
    expect(kinds.overlapping).toBeGreaterThan(10);
  }, 120_000);

  it("refuses a cut or corrupted file with an error, never a crash or a hang", () => {
    const woff2 = readFileSync(scripts.find((f) => f.includes("noto-sans-thai-thai-400"))!);
    let refused = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: woff2.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.boolean(), (at, byte, cut) => {
        const hostile = cut ? woff2.subarray(0, at) : Buffer.from(woff2);
        if (!cut) hostile[at] = byte;
        try {
          expect(woff2ToSfnt(hostile)).toBeInstanceOf(Buffer);
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
          refused++;
        }
      }),
      { numRuns: 300, seed: 35 },
    );
    expect(refused).toBeGreaterThan(100);
  });

  it("does not inflate past the tables it declares (a decompression bomb)", () => {
    // A directory of one 64-byte head table, and 64 MB of zeros behind it.
    const bomb = brotliCompressSync(Buffer.alloc(64 << 20), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
    const header = Buffer.alloc(48);
    header.write("wOF2", 0, "latin1");
    header.writeUInt32BE(0x00010000, 4);
    header.writeUInt16BE(1, 12);
    header.writeUInt32BE(bomb.length, 20);
    const directory = Buffer.from([0x01, 64]); // known tag 1 (head), transform 0, 64 bytes
    expect(() => woff2ToSfnt(Buffer.concat([header, directory, bomb]))).toThrow(/corrupt WOFF2 file: its data does not decompress to its 64 bytes/);
  });

  it("refuses a file that is not WOFF 2.0", () => {
    expect(() => woff2ToSfnt(Buffer.from("wOFFaaaaaaaaaaaa"))).toThrow(/not a WOFF 2.0 file/);
  });
});

describe("renameFamily", () => {
  /** A font's Windows names (platform 3), by name id. */
  const namesOf = (font: Buffer) => {
    const name = tablesOf(font, 0).find(({ tag }) => tag === "name")!.data;
    const storage = name.readUInt16BE(4);
    const names: Record<number, string> = {};
    for (let r = 0; r < name.readUInt16BE(2); r++) {
      const record = 6 + r * 12;
      if (name.readUInt16BE(record) !== 3) continue;
      const [length, offset] = [name.readUInt16BE(record + 8), name.readUInt16BE(record + 10)];
      names[name.readUInt16BE(record + 6)] = Buffer.from(name.subarray(storage + offset, storage + offset + length))
        .swap16()
        .toString("utf16le");
    }
    return names;
  };

  it("names Google's slice of the regular weight by its family, not the variable font's default instance, and changes nothing else", () => {
    const dir = path.join(path.dirname(createRequire(import.meta.url).resolve("noto-sans-jp/package.json")), "noto_sans_jp_regular");
    const font = woff2ToSfnt(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith(".woff2"))!)));
    expect(namesOf(font)[1]).toBe("Noto Sans JP Thin");
    const renamed = renameFamily(font, "Noto Sans JP Thin", "Noto Sans JP");
    const names = namesOf(renamed);
    expect([names[1], names[2], names[4], names[6]]).toEqual(["Noto Sans JP", "Regular", "Noto Sans JP Regular", "NotoSansJP-Regular"]);
    expect(names[3]).toMatch(/;NotoSansJP-Regular$/);
    expect(Object.values(names).filter((text) => text.includes("Thin"))).toEqual([]);
    // The copyright and the version are untouched, and so is every other table.
    expect(names[0]).toBe(namesOf(font)[0]);
    expect(names[5]).toBe(namesOf(font)[5]);
    const others = (f: Buffer) =>
      tablesOf(f, 0)
        .filter(({ tag }) => tag !== "name")
        .map(({ tag, data }) => [tag, data.toString("base64")]);
    expect(others(renamed)).toEqual(others(font));
  });
});
