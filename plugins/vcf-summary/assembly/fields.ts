// The leading fields of one tab-separated line, gathered from the reader's line parts (a line
// may arrive in several parts, split anywhere): the first `wanted` fields are copied into a
// growable buffer outside the managed heap, the rest of the line only has its tabs counted, so
// a line with thousands of sample columns costs a scan, not a copy. Module state and plain
// functions rather than a class: this runs once per line, and calls on managed objects pay
// for the collector's shadow stack.

const TAB: u8 = 0x09;
const TABS: u64 = 0x0909090909090909;
const LOW_BITS: u64 = 0x0101010101010101;
const HIGH_BITS: u64 = 0x8080808080808080;
/** Fields remembered by position (the #CHROM line's nine names). */
export const MAX_FIELDS: i32 = 9;
// Byte offsets in the buffer where each kept field starts (tabs are not kept).
const STARTS: usize = memory.data((MAX_FIELDS + 1) << 2, 4);

/** Bytes kept of the line: the wanted fields, without the tabs between them. */
export let lineLength: i32 = 0;
/** Tabs in the whole line: the line has `lineTabs + 1` columns. */
export let lineTabs: i32 = 0;
/** True when the wanted fields did not fit in the maximum. */
export let lineOverflow: bool = false;
/** The kept bytes. */
export let linePointer: usize = 0;
let capacity: i32 = 0;
let maxBytes: i32 = 0;
let wanted: i32 = 0;

// Index of the first tab in [start, end), or end; eight bytes per step.
function findTab(start: usize, end: usize): usize {
  let at = start;
  while (at + 8 <= end) {
    const word = load<u64>(at) ^ TABS;
    const found = (word - LOW_BITS) & ~word & HIGH_BITS;
    if (found != 0) return at + <usize>(ctz(found) >> 3);
    at += 8;
  }
  while (at < end && load<u8>(at) != TAB) at++;
  return at;
}

// Number of tabs in [start, end); eight bytes per step.
function countTabs(start: usize, end: usize): i32 {
  let count = 0;
  let at = start;
  while (at + 8 <= end) {
    const word = load<u64>(at) ^ TABS;
    // Exact per-byte zero test (no borrow between bytes): high bit set where the byte was a tab.
    const zero = ~(((word & ~HIGH_BITS) + ~HIGH_BITS) | word | ~HIGH_BITS);
    count += <i32>popcnt(zero);
    at += 8;
  }
  while (at < end) {
    count += <i32>(load<u8>(at) == TAB);
    at++;
  }
  return count;
}

/** Sets the most bytes a line's kept fields may take. */
export function limitLine(bytes: i32): void {
  maxBytes = bytes;
}

/** Starts a line whose first `fields` fields (at most MAX_FIELDS) are to be kept. */
export function resetLine(fields: i32): void {
  lineLength = 0;
  lineTabs = 0;
  lineOverflow = false;
  wanted = fields;
  store<i32>(STARTS, 0);
}

/** Keeps the first `fields` fields instead, from now on (the line's first byte decides it). */
export function wantFields(fields: i32): void {
  wanted = fields;
}

/** Adds the next part of the line. */
export function addPart(part: usize, length: i32): void {
  let at = part;
  const end = part + <usize>length;
  while (at < end && lineTabs < wanted) {
    const tab = findTab(at, end);
    append(at, <i32>(tab - at));
    if (tab == end) return;
    lineTabs++;
    store<i32>(STARTS + (<usize>lineTabs << 2), lineLength);
    at = tab + 1;
  }
  lineTabs += countTabs(at, end);
}

/** Start of kept field `index` (0-based). */
// @ts-ignore: decorator
@inline export function fieldStart(index: i32): usize {
  return linePointer + <usize>load<i32>(STARTS + (<usize>index << 2));
}

/** Length in bytes of kept field `index`. */
export function fieldLength(index: i32): i32 {
  const start = load<i32>(STARTS + (<usize>index << 2));
  // A field ends where the next one starts, the last one kept at the end of the kept bytes.
  const end = index + 1 <= min(lineTabs, wanted) ? load<i32>(STARTS + (<usize>(index + 1) << 2)) : lineLength;
  return end - start;
}

/** Kept field `index` as a string. */
export function field(index: i32): string {
  return String.UTF8.decodeUnsafe(fieldStart(index), <usize>fieldLength(index));
}

// Copies bytes into the buffer, growing it by doubling up to maxBytes; past that only
// `lineOverflow` is set (the caller reports it).
function append(source: usize, length: i32): void {
  if (length == 0 || lineOverflow) return;
  const needed = lineLength + length;
  if (needed > maxBytes) {
    lineOverflow = true;
    return;
  }
  if (needed > capacity) {
    let grown = max(capacity * 2, 4096);
    while (grown < needed) grown *= 2;
    grown = min(grown, maxBytes);
    linePointer = linePointer == 0 ? heap.alloc(<usize>grown) : heap.realloc(linePointer, <usize>grown);
    capacity = grown;
  }
  memory.copy(linePointer + <usize>lineLength, source, <usize>length);
  lineLength = needed;
}
