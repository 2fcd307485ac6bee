/** The tables of the sfnt font whose directory starts at `at` in `file` (0 for a font; a collection's offsets for its faces). */
export function tablesOf(file: Buffer, at: number) {
  return Array.from({ length: file.readUInt16BE(at + 4) }, (_, t) => {
    const record = at + 12 + t * 16;
    const offset = file.readUInt32BE(record + 8);
    return { tag: file.toString("latin1", record, record + 4), data: file.subarray(offset, offset + file.readUInt32BE(record + 12)) };
  });
}
