import { createHash } from "node:crypto";
import { diffArrays } from "diff";

// What changed between two captures of a page (the diff page monitors will run), in a way that survives
// reflow. A plain pixel diff calls everything below an inserted line changed, because it moved
// (measured on two 1280x5000 captures: 18% of the page). Here the rows are aligned first: each
// pixel row is hashed, the two lists of hashes are diffed (jsdiff's Myers diff), and only the rows
// the alignment could not match are compared, pixel by pixel, with a tolerance for anti-aliasing
// and sub-pixel noise. An inserted band is reported as that band; the page below it, moved but
// unchanged, is not.

/** An RGBA image: `width` x `height` pixels, 4 bytes each, row by row. */
export interface RawImage {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
}

/** A rectangle of the new capture, in its pixels. */
interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface VisualDiff {
  /** Changed pixels as a share of the new capture's area, in percent. */
  readonly changedPercent: number;
  /** The changed regions, in the new capture's pixels, top to bottom. */
  readonly boxes: readonly Box[];
}

/** A colour channel differing by more than this is a change; less is the noise of anti-aliasing and encoding. */
const CHANNEL_TOLERANCE = 32;
/** Changed rows this close together are one region. */
const ROW_GAP = 8;
/**
 * The alignment gives up past this many edits (a page that changed all over): its rows are then
 * compared where they stand, as a plain diff would.
 */
const MAX_EDITS = 4_000;

/** Each row's hash (FNV-1a over its pixels, 32 bits). */
function rowHashes(image: RawImage): number[] {
  // A view of the pixels as 32-bit words; a buffer that does not start on a word is copied first.
  const bytes = image.data.byteOffset % 4 === 0 ? image.data : Buffer.from(image.data);
  const pixels = new Uint32Array(bytes.buffer, bytes.byteOffset, image.width * image.height);
  const hashes = new Array<number>(image.height);
  for (let y = 0; y < image.height; y++) {
    let hash = 0x811c9dc5;
    for (let i = y * image.width, end = i + image.width; i < end; i++) hash = Math.imul(hash ^ pixels[i]!, 0x01000193);
    hashes[y] = hash >>> 0;
  }
  return hashes;
}

/** Whether pixel `i` of `a` and pixel `j` of `b` differ past the tolerance. */
function differs(a: Buffer, i: number, b: Buffer, j: number): boolean {
  return (
    Math.abs(a[i]! - b[j]!) > CHANNEL_TOLERANCE ||
    Math.abs(a[i + 1]! - b[j + 1]!) > CHANNEL_TOLERANCE ||
    Math.abs(a[i + 2]! - b[j + 2]!) > CHANNEL_TOLERANCE ||
    Math.abs(a[i + 3]! - b[j + 3]!) > CHANNEL_TOLERANCE
  );
}

/** The columns of row `rowB` of `b` that differ from row `rowA` of `a` read `dx` pixels along. */
function columnsAt(a: RawImage, rowA: number, b: RawImage, rowB: number, dx: number): { count: number; first: number; last: number } {
  let count = 0;
  let first = -1;
  let last = -1;
  for (let x = 0; x < b.width; x++) {
    const ax = Math.min(a.width - 1, Math.max(0, x + dx));
    if (!differs(a.data, (rowA * a.width + ax) * 4, b.data, (rowB * b.width + x) * 4)) continue;
    count++;
    if (first < 0) first = x;
    last = x;
  }
  return { count, first, last };
}

/**
 * The columns of row `rowB` of `b` that differ from row `rowA` of `a`. A row drawn a pixel along
 * (text laid out a sub-pixel further, in either direction) is read as it lies: the least changed
 * of the row as it stands and its neighbours a pixel left, right, above and below.
 */
function changedColumns(a: RawImage, rowA: number, b: RawImage, rowB: number): { count: number; first: number; last: number } {
  let best = columnsAt(a, rowA, b, rowB, 0);
  for (const [dy, dx] of [
    [0, -1],
    [0, 1],
    [-1, 0],
    [1, 0],
  ] as const) {
    if (best.count === 0) break;
    if (rowA + dy < 0 || rowA + dy >= a.height) continue;
    const moved = columnsAt(a, rowA + dy, b, rowB, dx);
    if (moved.count < best.count) best = moved;
  }
  return best;
}

/** Whether row `y` of `image` is the row above or below it again, within the tolerance. */
const repeats = (image: RawImage, y: number) =>
  (y > 0 && columnsAt(image, y - 1, image, y, 0).count === 0) || (y + 1 < image.height && columnsAt(image, y + 1, image, y, 0).count === 0);

/** One changed row of the new capture: its changed columns and how many pixels changed. */
interface ChangedRow {
  readonly y: number;
  readonly first: number;
  readonly last: number;
  readonly count: number;
}

/**
 * The rows the alignment could not match: pairs of a removed row of `a` and an added row of `b`
 * (compared pixel by pixel), added rows with nothing to pair (changed whole), and removed rows
 * with nothing to pair (a row where something was taken out).
 */
function changedRows(a: RawImage, b: RawImage): ChangedRow[] {
  const hashesA = rowHashes(a);
  const hashesB = rowHashes(b);
  const rows: ChangedRow[] = [];
  const whole = (y: number) => rows.push({ y, first: 0, last: b.width - 1, count: b.width });
  const compare = (rowA: number, rowB: number) => {
    const changed = changedColumns(a, rowA, b, rowB);
    if (changed.count > 0) rows.push({ y: rowB, ...changed });
  };
  const changes = a.width === b.width ? diffArrays(hashesA, hashesB, { maxEditLength: MAX_EDITS }) : undefined;
  if (!changes) {
    // Another width, or changed all over: row by row where they stand.
    for (let y = 0; y < b.height; y++) {
      if (y < a.height && a.width === b.width) compare(y, y);
      else whole(y);
    }
    return rows;
  }
  let rowA = 0;
  let rowB = 0;
  for (let i = 0; i < changes.length; i++) {
    const change = changes[i]!;
    if (!change.added && !change.removed) {
      rowA += change.count;
      rowB += change.count;
      continue;
    }
    // A removal followed by an addition: the same place, changed. Pair their rows in order.
    const removed = change.removed ? change.count : 0;
    const next = changes[i + 1];
    const added = change.added ? change.count : next?.added && change.removed ? next.count : 0;
    if (change.removed && next?.added) i++;
    const paired = Math.min(removed, added);
    for (let k = 0; k < paired; k++) compare(rowA + k, rowB + k);
    // Rows added or taken out that repeat a row beside them are space that grew or shrank (text laid
    // out a sub-pixel lower rounds a gap a row taller): not a change.
    for (let k = paired; k < added; k++) if (!repeats(b, rowB + k)) whole(rowB + k);
    // Rows taken out with nothing in their place: the row where they were is where the change shows.
    let taken = false;
    for (let k = paired; k < removed; k++) taken ||= !repeats(a, rowA + k);
    if (taken) whole(Math.min(b.height - 1, rowB + added));
    rowA += removed;
    rowB += added;
  }
  return rows;
}

/** Changed rows close together as one box each. */
function boxesOf(rows: readonly ChangedRow[]): Box[] {
  const sorted = [...rows].sort((p, q) => p.y - q.y);
  const boxes: Box[] = [];
  let open: { top: number; bottom: number; left: number; right: number } | null = null;
  for (const row of sorted) {
    if (open && row.y - open.bottom <= ROW_GAP) {
      open.bottom = Math.max(open.bottom, row.y);
      open.left = Math.min(open.left, row.first);
      open.right = Math.max(open.right, row.last);
      continue;
    }
    if (open) boxes.push({ x: open.left, y: open.top, width: open.right - open.left + 1, height: open.bottom - open.top + 1 });
    open = { top: row.y, bottom: row.y, left: row.first, right: row.last };
  }
  if (open) boxes.push({ x: open.left, y: open.top, width: open.right - open.left + 1, height: open.bottom - open.top + 1 });
  return boxes;
}

/** What changed from capture `before` to capture `after`: the changed share of `after` and its changed regions. */
export function visualDiff(before: RawImage, after: RawImage): VisualDiff {
  const rows = changedRows(before, after);
  // A row can be reported twice (a pair and a removal at one place): each counts once.
  const counted = new Map<number, number>();
  for (const row of rows) counted.set(row.y, Math.max(counted.get(row.y) ?? 0, row.count));
  const changed = [...counted.values()].reduce((sum, count) => sum + count, 0);
  const area = after.width * after.height;
  return { changedPercent: area === 0 ? 0 : Math.round((changed / area) * 100 * 1000) / 1000, boxes: boxesOf(rows) };
}

/**
 * The text diff gives up past this many lines added and removed. Its work is (lines of both) x
 * (edits): measured at 20,000 random lines a side, 83 ms at 1,000 edits and 870 ms at 4,000, so a
 * page that prints new random lines on every load costs a check a tenth of a second, not minutes.
 */
export const TEXT_MAX_EDITS = 1_000;

/** What changed between two readings of a page's text. */
export interface TextDiff {
  /** The lines of the new reading the old one lacks, and those of the old one the new lacks, in order. */
  readonly added: string[];
  readonly removed: string[];
  /** The readings differ by more than TEXT_MAX_EDITS lines: compared whole (by their hash), no lines listed. */
  readonly tooLarge?: true;
}

/** Whether two readings are the same text (a hash of each, so that equality costs one pass). */
const sameText = (before: readonly string[], after: readonly string[]) => before.length === after.length && hashOf(before) === hashOf(after);
const hashOf = (lines: readonly string[]) => createHash("sha256").update(JSON.stringify(lines)).digest("hex");

/** The lines of `after` that `before` lacks, and those of `before` that `after` lacks, in order; past TEXT_MAX_EDITS, only whether they differ. */
export function textDiff(before: readonly string[], after: readonly string[]): TextDiff {
  if (sameText(before, after)) return { added: [], removed: [] };
  const changes = diffArrays([...before], [...after], { maxEditLength: TEXT_MAX_EDITS });
  if (!changes) return { added: [], removed: [], tooLarge: true };
  const added: string[] = [];
  const removed: string[] = [];
  for (const change of changes) {
    if (change.added) added.push(...change.value);
    if (change.removed) removed.push(...change.value);
  }
  return { added, removed };
}
