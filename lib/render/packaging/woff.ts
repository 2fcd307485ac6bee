import { brotliDecompressSync, inflateSync } from "node:zlib";

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

// ---- WOFF 2.0 ------------------------------------------------------------------------------------

/** The tags a WOFF2 table directory names by index (the specification's "known table tags"). */
const KNOWN_TAGS = (
  "cmap head hhea hmtx maxp name OS/2 post cvt  fpgm glyf loca prep CFF  VORG EBDT EBLC gasp hdmx kern LTSH PCLT VDMX vhea vmtx BASE GDEF " +
  "GPOS GSUB EBSC JSTF MATH CBDT CBLC COLR CPAL SVG  sbix acnt avar bdat bloc bsln cvar fdsc feat fmtx fvar gvar hsty just lcar mort morx " +
  "opbd prop trak Zapf Silf Glat Gloc Feat Sill"
)
  .match(/.{4}\s?/g)!
  .map((tag) => tag.slice(0, 4));

/** Reads WOFF2's variable-length integers from `data`, from `at` on. */
class Reader {
  constructor(
    readonly data: Buffer,
    public at = 0,
  ) {}
  u8(): number {
    if (this.at >= this.data.length) throw new Error("corrupt WOFF2 file: a stream ends early");
    return this.data[this.at++]!;
  }
  u16(): number {
    return (this.u8() << 8) | this.u8();
  }
  i16(): number {
    return (this.u16() << 16) >> 16;
  }
  u32(): number {
    return ((this.u16() << 16) | this.u16()) >>> 0;
  }
  bytes(n: number): Buffer {
    if (this.at + n > this.data.length) throw new Error("corrupt WOFF2 file: a stream ends early");
    this.at += n;
    return this.data.subarray(this.at - n, this.at);
  }
  /** UIntBase128: 7 bits a byte, at most 5 bytes, no leading zero byte. */
  base128(): number {
    let value = 0;
    for (let i = 0; i < 5; i++) {
      const byte = this.u8();
      if (i === 0 && byte === 0x80) throw new Error("corrupt WOFF2 file: a number with a leading zero");
      value = value * 128 + (byte & 0x7f);
      if (value > 0xffffffff) throw new Error("corrupt WOFF2 file: a number past 32 bits");
      if (!(byte & 0x80)) return value;
    }
    throw new Error("corrupt WOFF2 file: a number longer than 5 bytes");
  }
  /** 255UInt16. */
  u255(): number {
    const code = this.u8();
    if (code === 253) return this.u16();
    if (code === 255) return 253 + this.u8();
    if (code === 254) return 506 + this.u8();
    return code;
  }
}

/**
 * Converts a WOFF 2.0 font to the sfnt it was made from, rebuilding the glyf and loca tables from
 * their WOFF2 transform as the specification (and Google's reference decoder) does, glyph for glyph.
 * Some of the fonts we ship come from npm only as WOFF2 (see fonts.ts); fontconfig reads sfnt.
 */
export function woff2ToSfnt(woff2: Buffer): Buffer {
  if (woff2.length < 48 || woff2.readUInt32BE(0) !== 0x774f4632) throw new Error("not a WOFF 2.0 file");
  const flavor = woff2.readUInt32BE(4);
  if (flavor === 0x74746366) throw new Error("WOFF2 font collections are not supported");
  const numTables = woff2.readUInt16BE(12);
  const compressedSize = woff2.readUInt32BE(20);
  const directory = new Reader(woff2, 48);
  const entries = Array.from({ length: numTables }, () => {
    const flags = directory.u8();
    const known = flags & 0x3f;
    const tag = known === 63 ? directory.bytes(4).toString("latin1") : KNOWN_TAGS[known]!;
    const version = flags >> 6;
    const length = directory.base128();
    // glyf and loca are transformed unless their version is 3; other tables only when it is not 0.
    const transformed = tag === "glyf" || tag === "loca" ? version !== 3 : version !== 0;
    if (transformed && tag !== "glyf" && tag !== "loca") throw new Error(`WOFF2 transform of ${tag} is not supported`);
    return { tag, length, stored: transformed ? directory.base128() : length, transformed };
  });
  // The tables' stored lengths add up to what the compressed stream holds: never inflate more.
  const expected = entries.reduce((sum, entry) => sum + entry.stored, 0);
  let data: Buffer;
  try {
    data = brotliDecompressSync(woff2.subarray(directory.at, directory.at + compressedSize), { maxOutputLength: Math.max(expected, 1) });
  } catch (error) {
    throw new Error(`corrupt WOFF2 file: its data does not decompress to its ${expected} bytes of tables`, { cause: error });
  }
  if (data.length !== expected) throw new Error(`corrupt WOFF2 file: its data decompresses to ${data.length} bytes, not its ${expected} bytes of tables`);
  const tables: Table[] = [];
  let at = 0;
  let glyf: { data: Buffer; loca: Buffer } | undefined;
  for (const entry of entries) {
    const stored = data.subarray(at, at + entry.stored);
    at += entry.stored;
    if (entry.tag === "glyf" && entry.transformed) glyf = rebuildGlyf(stored);
    else if (!(entry.tag === "loca" && entry.transformed)) tables.push(tableOf(tagNumber(entry.tag), stored));
  }
  // glyf and loca are transformed together (the one is rebuilt with the other) or not at all.
  if (Boolean(glyf) !== Boolean(entries.find((e) => e.tag === "loca")?.transformed)) {
    throw new Error("corrupt WOFF2 file: glyf and loca are not transformed together");
  }
  if (glyf) {
    tables.push(tableOf(tagNumber("glyf"), glyf.data), tableOf(tagNumber("loca"), glyf.loca));
  }
  return sfnt(flavor, tables);
}

const tagNumber = (tag: string) => Buffer.from(tag, "latin1").readUInt32BE(0);

// Simple glyphs' point flags (the TrueType glyf table).
const ON_CURVE = 0x01;
const X_SHORT = 0x02;
const Y_SHORT = 0x04;
const REPEAT = 0x08;
const X_SAME_OR_POSITIVE = 0x10;
const Y_SAME_OR_POSITIVE = 0x20;
const OVERLAP_SIMPLE = 0x40;
// Composite glyphs' component flags.
const ARGS_ARE_WORDS = 0x0001;
const HAVE_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const HAVE_XY_SCALE = 0x0040;
const HAVE_TWO_BY_TWO = 0x0080;
const HAVE_INSTRUCTIONS = 0x0100;

/** The glyf and loca tables from WOFF2's transformed glyf table (version 0). */
function rebuildGlyf(table: Buffer): { data: Buffer; loca: Buffer } {
  const header = new Reader(table);
  header.u16(); // reserved
  const options = header.u16();
  const numGlyphs = header.u16();
  const indexFormat = header.u16();
  const sizes = Array.from({ length: 7 }, () => header.u32());
  const streams: Reader[] = [];
  let at = header.at;
  for (const size of sizes) {
    if (at + size > table.length) throw new Error("corrupt WOFF2 file: a glyf stream past its table");
    streams.push(new Reader(table.subarray(at, at + size)));
    at += size;
  }
  const [contours, pointCounts, flags, glyphs, composites, boxes, instructions] = streams as [Reader, Reader, Reader, Reader, Reader, Reader, Reader];
  // One bit a glyph: the bounding boxes' bitmap in 32-bit words, the overlap bitmap in bytes.
  const boxBitmap = boxes.bytes(4 * Math.floor((numGlyphs + 31) / 32));
  const overlapBitmap = options & 1 ? new Reader(table, at).bytes((numGlyphs + 7) >> 3) : undefined;
  const bit = (bitmap: Buffer | undefined, i: number) => Boolean(bitmap && bitmap[i >> 3]! & (0x80 >> (i & 7)));

  const out: Buffer[] = [];
  const offsets: number[] = [];
  let size = 0;
  for (let i = 0; i < numGlyphs; i++) {
    offsets.push(size);
    const n = contours.i16();
    if (n === 0) {
      if (bit(boxBitmap, i)) throw new Error("corrupt WOFF2 file: an empty glyph with a bounding box");
      continue;
    }
    let glyph: Buffer;
    if (n === -1) {
      if (!bit(boxBitmap, i)) throw new Error("corrupt WOFF2 file: a composite glyph without its bounding box");
      const start = composites.at;
      let more = true;
      let instructed = false;
      while (more) {
        const flag = composites.u16();
        more = Boolean(flag & MORE_COMPONENTS);
        instructed ||= Boolean(flag & HAVE_INSTRUCTIONS);
        composites.bytes(2 + (flag & ARGS_ARE_WORDS ? 4 : 2) + (flag & HAVE_TWO_BY_TWO ? 8 : flag & HAVE_XY_SCALE ? 4 : flag & HAVE_SCALE ? 2 : 0));
      }
      const components = composites.data.subarray(start, composites.at);
      const program = instructed ? instructions.bytes(glyphs.u255()) : undefined;
      glyph = Buffer.alloc(10 + components.length + (program ? 2 + program.length : 0));
      glyph.writeInt16BE(-1, 0);
      boxes.bytes(8).copy(glyph, 2);
      components.copy(glyph, 10);
      if (program) {
        glyph.writeUInt16BE(program.length, 10 + components.length);
        program.copy(glyph, 12 + components.length);
      }
    } else if (n > 0) {
      glyph = simpleGlyph(n, pointCounts, flags, glyphs, instructions, bit(boxBitmap, i) ? boxes.bytes(8) : undefined, bit(overlapBitmap, i));
    } else throw new Error(`corrupt WOFF2 file: glyph ${i} has ${n} contours`);
    out.push(glyph, Buffer.alloc(padded(glyph.length) - glyph.length));
    size += padded(glyph.length);
  }
  offsets.push(size);
  const loca = Buffer.alloc(offsets.length * (indexFormat ? 4 : 2));
  for (const [i, offset] of offsets.entries()) {
    if (indexFormat) loca.writeUInt32BE(offset, i * 4);
    else loca.writeUInt16BE(offset / 2, i * 2);
  }
  return { data: Buffer.concat(out), loca };
}

/** A simple glyph of `n` contours, its points decoded from WOFF2's triplet encoding and written as the TrueType glyf table has them. */
function simpleGlyph(
  n: number,
  pointCounts: Reader,
  flagStream: Reader,
  glyphs: Reader,
  instructions: Reader,
  box: Buffer | undefined,
  overlap: boolean,
): Buffer {
  const ends: number[] = [];
  let total = 0;
  for (let c = 0; c < n; c++) {
    total += pointCounts.u255();
    ends.push(total - 1);
  }
  const xs = new Int32Array(total);
  const ys = new Int32Array(total);
  const on = new Uint8Array(total);
  let x = 0;
  let y = 0;
  for (let p = 0; p < total; p++) {
    const raw = flagStream.u8();
    on[p] = raw & 0x80 ? 0 : 1;
    const [dx, dy] = triplet(raw & 0x7f, glyphs);
    x += dx;
    y += dy;
    xs[p] = x;
    ys[p] = y;
  }
  const program = instructions.bytes(glyphs.u255());
  // Flags with repeats, then x and y deltas, each in its shortest form.
  const flagBytes: number[] = [];
  const xBytes: number[] = [];
  const yBytes: number[] = [];
  const delta = (d: number, bytes: number[], short: number, same: number) => {
    if (d === 0) return same;
    if (d > -256 && d < 256) {
      bytes.push(Math.abs(d));
      return short | (d > 0 ? same : 0);
    }
    bytes.push((d >> 8) & 0xff, d & 0xff);
    return 0;
  };
  let last = -1;
  let repeats = 0;
  for (let p = 0; p < total; p++) {
    let flag = (on[p] ? ON_CURVE : 0) | (overlap && p === 0 ? OVERLAP_SIMPLE : 0);
    flag |= delta(xs[p]! - (p ? xs[p - 1]! : 0), xBytes, X_SHORT, X_SAME_OR_POSITIVE);
    flag |= delta(ys[p]! - (p ? ys[p - 1]! : 0), yBytes, Y_SHORT, Y_SAME_OR_POSITIVE);
    // A run's count is written when it ends, so during a run the last byte is its flag.
    if (flag === last && repeats !== 255) {
      flagBytes[flagBytes.length - 1]! |= REPEAT;
      repeats++;
    } else {
      if (repeats) flagBytes.push(repeats);
      flagBytes.push(flag);
      repeats = 0;
    }
    last = flag;
  }
  if (repeats) flagBytes.push(repeats);
  const glyph = Buffer.alloc(10 + 2 * n + 2 + program.length + flagBytes.length + xBytes.length + yBytes.length);
  glyph.writeInt16BE(n, 0);
  if (box) box.copy(glyph, 2);
  else if (total) {
    const bounds = [xs[0]!, ys[0]!, xs[0]!, ys[0]!];
    for (let p = 1; p < total; p++) {
      bounds[0] = Math.min(bounds[0]!, xs[p]!);
      bounds[1] = Math.min(bounds[1]!, ys[p]!);
      bounds[2] = Math.max(bounds[2]!, xs[p]!);
      bounds[3] = Math.max(bounds[3]!, ys[p]!);
    }
    for (const [i, value] of bounds.entries()) glyph.writeInt16BE(value, 2 + 2 * i);
  }
  let at = 10;
  for (const end of ends) at = glyph.writeUInt16BE(end, at);
  at = glyph.writeUInt16BE(program.length, at);
  at += program.copy(glyph, at);
  for (const bytes of [flagBytes, xBytes, yBytes]) at += Buffer.from(bytes).copy(glyph, at);
  return glyph;
}

/** One point's move from WOFF2's triplet encoding: its flag (without the on-curve bit) says how many of `glyphs`' bytes it takes and how to read them. */
function triplet(flag: number, glyphs: Reader): [dx: number, dy: number] {
  const sign = (bit: number, value: number) => (bit & 1 ? value : -value);
  if (flag < 10) return [0, sign(flag, ((flag & 14) << 7) + glyphs.u8())];
  if (flag < 20) return [sign(flag, (((flag - 10) & 14) << 7) + glyphs.u8()), 0];
  if (flag < 84) {
    const b0 = flag - 20;
    const b1 = glyphs.u8();
    return [sign(flag, 1 + (b0 & 0x30) + (b1 >> 4)), sign(flag >> 1, 1 + ((b0 & 0x0c) << 2) + (b1 & 0x0f))];
  }
  if (flag < 120) {
    const b0 = flag - 84;
    return [sign(flag, 1 + (Math.floor(b0 / 12) << 8) + glyphs.u8()), sign(flag >> 1, 1 + (((b0 % 12) >> 2) << 8) + glyphs.u8())];
  }
  if (flag < 124) {
    const b1 = glyphs.u8();
    const b2 = glyphs.u8();
    return [sign(flag, (b1 << 4) + (b2 >> 4)), sign(flag >> 1, ((b2 & 0x0f) << 8) + glyphs.u8())];
  }
  const b1 = glyphs.u8();
  const b2 = glyphs.u8();
  const b3 = glyphs.u8();
  return [sign(flag, (b1 << 8) + b2), sign(flag >> 1, (b3 << 8) + glyphs.u8())];
}
