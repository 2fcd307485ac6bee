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
  tables.sort((a, b) => a.tag - b.tag);
  const entrySelector = Math.floor(Math.log2(tables.length));
  const searchRange = 2 ** entrySelector * 16;
  const headerLength = 12 + tables.length * 16;
  const padded = (n: number) => (n + 3) & ~3;
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

/**
 * Joins sfnt fonts into one TrueType Collection (each font whole, its table offsets moved to its
 * place in the file). Fontconfig indexes every font of a collection as it would separate files, and
 * one file instead of a hundred slices makes the folder of links a cold start builds that much smaller.
 */
export function sfntCollection(fonts: readonly Buffer[]): Buffer {
  const padded = (n: number) => (n + 3) & ~3;
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
