import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decompress as referenceDecompress } from "woff2-encoder";
import { solidPng } from "../../../dev/harness/fixtures.js";
import { imageSize } from "../../../lib/render/image-size.js";
import { renameFamily, sfntCollection, woffToSfnt } from "../../../lib/render/packaging/woff.js";
import { tablesOf } from "../../helpers/sfnt.js";

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

  it("names Google's slice of the regular weight by its family, not the variable font's default instance, and changes nothing else", async () => {
    const dir = path.join(path.dirname(createRequire(import.meta.url).resolve("noto-sans-jp/package.json")), "noto_sans_jp_regular");
    const font = Buffer.from(await referenceDecompress(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith(".woff2"))!))));
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
