import { inflateSync } from "node:zlib";

/**
 * Converts a WOFF 1.0 font to the plain TrueType/OpenType (sfnt) it wraps, without the tables named
 * in `drop`. Chromium's fontconfig indexes only sfnt files, and most fonts we ship come from npm as
 * WOFF (see fonts.ts).
 */
export function woffToSfnt(woff: Buffer, drop: readonly string[] = []): Buffer {
  if (woff.readUInt32BE(0) !== 0x774f4646) throw new Error("not a WOFF 1.0 file");
  const flavor = woff.readUInt32BE(4);
  const numTables = woff.readUInt16BE(12);
  const tables: { tag: number; checksum: number; data: Buffer }[] = [];
  for (let i = 0; i < numTables; i++) {
    const entry = 44 + i * 20;
    const tag = woff.readUInt32BE(entry);
    const offset = woff.readUInt32BE(entry + 4);
    const compLength = woff.readUInt32BE(entry + 8);
    const origLength = woff.readUInt32BE(entry + 12);
    const checksum = woff.readUInt32BE(entry + 16);
    if (drop.includes(woff.toString("latin1", entry, entry + 4))) continue;
    const raw = woff.subarray(offset, offset + compLength);
    const data = compLength < origLength ? inflateSync(raw) : raw;
    if (data.length !== origLength) throw new Error("corrupt WOFF table");
    tables.push({ tag, checksum, data });
  }
  return sfnt(flavor, tables);
}

interface Table {
  readonly tag: number;
  readonly checksum: number;
  readonly data: Buffer;
}

const padded = (n: number) => (n + 3) & ~3;

/** An sfnt font of `tables` (sorted by tag, as the format wants). */
function sfnt(flavor: number, tables: Table[]): Buffer {
  tables.sort((a, b) => a.tag - b.tag);
  const entrySelector = Math.floor(Math.log2(tables.length));
  const searchRange = 2 ** entrySelector * 16;
  const headerLength = 12 + tables.length * 16;
  const out = Buffer.alloc(headerLength + tables.reduce((sum, t) => sum + padded(t.data.length), 0));
  out.writeUInt32BE(flavor, 0);
  out.writeUInt16BE(tables.length, 4);
  out.writeUInt16BE(searchRange, 6);
  out.writeUInt16BE(entrySelector, 8);
  out.writeUInt16BE(tables.length * 16 - searchRange, 10);
  let offset = headerLength;
  tables.forEach((table, i) => {
    const record = 12 + i * 16;
    out.writeUInt32BE(table.tag, record);
    out.writeUInt32BE(table.checksum, record + 4);
    out.writeUInt32BE(offset, record + 8);
    out.writeUInt32BE(table.data.length, record + 12);
    table.data.copy(out, offset);
    offset += padded(table.data.length);
  });
  return out;
}

/** Table `tag` holding `data`, with its checksum. */
const tableOf = (tag: number, data: Buffer): Table => ({ tag, checksum: checksum(data), data });

/** A table's checksum: the sum of its big-endian 32-bit words, zero-padded (head's checkSumAdjustment counted as stored). */
function checksum(data: Buffer): number {
  let sum = 0;
  const whole = data.length & ~3;
  for (let i = 0; i < whole; i += 4) sum = (sum + data.readUInt32BE(i)) >>> 0;
  if (whole < data.length) {
    const tail = Buffer.alloc(4);
    data.copy(tail, 0, whole);
    sum = (sum + tail.readUInt32BE(0)) >>> 0;
  }
  return sum;
}

/**
 * Joins sfnt fonts into one TrueType Collection (each font whole, its table offsets moved to its
 * place in the file). Fontconfig indexes every font of a collection as it would separate files, and
 * one file instead of a hundred slices makes the folder of links a cold start builds that much smaller.
 */
export function sfntCollection(fonts: readonly Buffer[]): Buffer {
  const header = 12 + fonts.length * 4;
  const offsets: number[] = [];
  let at = padded(header);
  for (const font of fonts) {
    offsets.push(at);
    at += padded(font.length);
  }
  const out = Buffer.alloc(at);
  out.write("ttcf", 0, "latin1");
  out.writeUInt32BE(0x00010000, 4);
  out.writeUInt32BE(fonts.length, 8);
  fonts.forEach((font, i) => {
    const base = offsets[i]!;
    out.writeUInt32BE(base, 12 + i * 4);
    font.copy(out, base);
    // Each table record's offset counts from the start of the file, not of the font.
    const numTables = font.readUInt16BE(4);
    for (let t = 0; t < numTables; t++) {
      const record = base + 12 + t * 16 + 8;
      out.writeUInt32BE(out.readUInt32BE(record) + base, record);
    }
  });
  return out;
}

/**
 * Renames a font's family in its name table: `from` becomes `to` in every name, and so do their
 * PostScript forms (without spaces). Google Fonts' slices of a variable font keep the names of its
 * default instance ("Noto Sans JP Thin") on the regular weight's outlines; fontconfig and a page's
 * `font-family` know the family by its name. With `face`, the face's own names (unique, full and
 * PostScript: CSS `local()` finds a face by them) become these.
 */
export function renameFamily(font: Buffer, from: string, to: string, face?: { readonly full: string; readonly postscript: string }): Buffer {
  const tables = Array.from({ length: font.readUInt16BE(4) }, (_, i): Table => {
    const record = 12 + i * 16;
    const offset = font.readUInt32BE(record + 8);
    return { tag: font.readUInt32BE(record), checksum: font.readUInt32BE(record + 4), data: font.subarray(offset, offset + font.readUInt32BE(record + 12)) };
  });
  const index = tables.findIndex(({ tag }) => tag === tagNumber("name"));
  if (index < 0) throw new Error("a font without a name table");
  const name = tables[index]!.data;
  const count = name.readUInt16BE(2);
  const storage = name.readUInt16BE(4);
  const replace = (text: string) => text.replaceAll(from, to).replaceAll(from.replaceAll(" ", ""), to.replaceAll(" ", ""));
  const strings: Buffer[] = [];
  const records = Buffer.from(name.subarray(6, 6 + count * 12));
  let at = 0;
  for (let r = 0; r < count; r++) {
    const [platform, length, offset] = [records.readUInt16BE(r * 12), records.readUInt16BE(r * 12 + 8), records.readUInt16BE(r * 12 + 10)];
    let text = Buffer.from(name.subarray(storage + offset, storage + offset + length));
    // Windows and Unicode names are UTF-16BE; Macintosh names (Roman) are one byte a character.
    const wide = platform === 0 || platform === 3;
    const decoded = wide ? Buffer.from(text).swap16().toString("utf16le") : text.toString("latin1");
    const id = records.readUInt16BE(r * 12 + 6);
    const renamed = face && id === 4 ? face.full : face && (id === 3 || id === 6) ? face.postscript : replace(decoded);
    if (renamed !== decoded) text = wide ? Buffer.from(renamed, "utf16le").swap16() : Buffer.from(renamed, "latin1");
    records.writeUInt16BE(text.length, r * 12 + 8);
    records.writeUInt16BE(at, r * 12 + 10);
    strings.push(text);
    at += text.length;
  }
  // Format 0 (a format 1 table's language tags, after the records, are left out with their strings: none of ours has them).
  if (name.readUInt16BE(0) !== 0) throw new Error("a name table of format 1");
  const header = Buffer.alloc(6);
  header.writeUInt16BE(count, 2);
  header.writeUInt16BE(6 + count * 12, 4);
  const data = Buffer.concat([header, records, ...strings]);
  tables[index] = tableOf(tables[index]!.tag, data);
  return sfnt(font.readUInt32BE(0), tables);
}

/** The code points a font maps to glyphs (its cmap's Unicode subtable of format 12, or else 4). */
export function codepoints(font: Buffer): number[] {
  const directory = Array.from({ length: font.readUInt16BE(4) }, (_, i) => 12 + i * 16);
  const record = directory.find((at) => font.readUInt32BE(at) === tagNumber("cmap"));
  if (record === undefined) throw new Error("a font without a cmap table");
  const cmap = font.subarray(font.readUInt32BE(record + 8), font.readUInt32BE(record + 8) + font.readUInt32BE(record + 12));
  const subtables = Array.from({ length: cmap.readUInt16BE(2) }, (_, i) => ({
    platform: cmap.readUInt16BE(4 + i * 8),
    encoding: cmap.readUInt16BE(6 + i * 8),
    table: cmap.subarray(cmap.readUInt32BE(8 + i * 8)),
  }));
  const unicode = subtables.filter(({ platform, encoding }) => platform === 0 || (platform === 3 && (encoding === 1 || encoding === 10)));
  const found: number[] = [];
  const full = unicode.find(({ table }) => table.readUInt16BE(0) === 12);
  if (full) {
    const t = full.table;
    for (let g = 0, groups = t.readUInt32BE(12); g < groups; g++)
      for (let c = t.readUInt32BE(16 + g * 12), end = t.readUInt32BE(20 + g * 12); c <= end; c++) found.push(c);
    return found;
  }
  const basic = unicode.find(({ table }) => table.readUInt16BE(0) === 4);
  if (!basic) throw new Error("a font without a Unicode cmap of format 4 or 12");
  const t = basic.table;
  const segments = t.readUInt16BE(6) / 2;
  for (let s = 0; s < segments; s++) {
    const end = t.readUInt16BE(14 + s * 2);
    const start = t.readUInt16BE(16 + segments * 2 + s * 2);
    const delta = t.readInt16BE(16 + segments * 4 + s * 2);
    const rangeAt = 16 + segments * 6 + s * 2;
    const rangeOffset = t.readUInt16BE(rangeAt);
    for (let c = start; c <= end && c !== 0xffff; c++) {
      const glyph = rangeOffset === 0 ? (c + delta) & 0xffff : t.readUInt16BE(rangeAt + rangeOffset + (c - start) * 2);
      if (glyph !== 0) found.push(c);
    }
  }
  return found;
}

/** A table's four-letter tag as the number the sfnt directory stores. */
const tagNumber = (tag: string) => Buffer.from(tag, "latin1").readUInt32BE(0);
