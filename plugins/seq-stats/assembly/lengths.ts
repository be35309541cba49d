// Every record length, kept compactly so quartiles and N50 can be computed at the end: a
// count per length below 65,536 (any number of short records in a fixed 512 KiB), and a
// list of the longer lengths, sorted at the end. A long record is at least 64 KiB of
// sequence, so the list's bound (MAX_LONG_RECORDS) is never the binding limit in practice.

/** Lengths below this are counted in the histogram. */
export const SHORT_LIMIT: i32 = 65536;
/** Most records of SHORT_LIMIT bases or more (512 Ki; a 4 MiB list). */
export const MAX_LONG_RECORDS: i32 = 512 * 1024;

// Histogram of short lengths (u64 counts) and the list of long lengths (u64), outside the
// managed heap so the collector never scans them.
let counts: usize = 0;
let longs: usize = 0;
let longCount: i32 = 0;
let longCapacity: i32 = 0;
let shortCount: i64 = 0;

/** Starts empty. */
export function resetLengths(): void {
  if (counts == 0) counts = heap.alloc(<usize>SHORT_LIMIT << 3);
  memory.fill(counts, 0, <usize>SHORT_LIMIT << 3);
  longCount = 0;
  shortCount = 0;
}

/** Adds one record length; false when the long list is full. */
export function addLength(length: i64): bool {
  if (length < SHORT_LIMIT) {
    const at = counts + (<usize>length << 3);
    store<u64>(at, load<u64>(at) + 1);
    shortCount++;
    return true;
  }
  if (longCount == longCapacity) {
    if (longCapacity == MAX_LONG_RECORDS) return false;
    const capacity = longCapacity == 0 ? 1024 : min(longCapacity * 2, MAX_LONG_RECORDS);
    longs = longs == 0 ? heap.alloc(<usize>capacity << 3) : heap.realloc(longs, <usize>capacity << 3);
    longCapacity = capacity;
  }
  store<u64>(longs + (<usize>longCount << 3), <u64>length);
  longCount++;
  return true;
}

/** Sorts the long lengths (heapsort: in place, no recursion). Call once, after the last add. */
export function sortLengths(): void {
  const n = longCount;
  for (let start = (n >> 1) - 1; start >= 0; start--) siftDown(start, n);
  for (let end = n - 1; end > 0; end--) {
    swap(0, end);
    siftDown(0, end);
  }
}

/** The k-th smallest length (0-based), after sortLengths. */
export function kth(k: i64): i64 {
  if (k >= shortCount) return <i64>load<u64>(longs + (<usize>(k - shortCount) << 3));
  let seen: i64 = 0;
  for (let length = 0; length < SHORT_LIMIT; length++) {
    seen += <i64>load<u64>(counts + (<usize>length << 3));
    if (seen > k) return length;
  }
  return 0;
}

/**
 * N50 as seqkit 2.3.0 computes it: going from the longest record down, the length at which
 * the lengths summed so far reach half of `sum` (2 * summed >= sum). After sortLengths.
 */
export function n50(sum: i64): i64 {
  let summed: i64 = 0;
  for (let i = longCount - 1; i >= 0; i--) {
    const length = <i64>load<u64>(longs + (<usize>i << 3));
    summed += length;
    if (summed * 2 >= sum) return length;
  }
  for (let length = SHORT_LIMIT - 1; length >= 0; length--) {
    const count = <i64>load<u64>(counts + (<usize>length << 3));
    if (count == 0) continue;
    summed += <i64>length * count;
    if (summed * 2 >= sum) return length;
  }
  return 0;
}

function siftDown(start: i32, end: i32): void {
  let root = start;
  while (true) {
    let child = 2 * root + 1;
    if (child >= end) return;
    if (child + 1 < end && at(child + 1) > at(child)) child++;
    if (at(root) >= at(child)) return;
    swap(root, child);
    root = child;
  }
}

// @inline keeps the heapsort's inner loop free of calls.
@inline function at(i: i32): u64 {
  return load<u64>(longs + (<usize>i << 3));
}

@inline function swap(i: i32, j: i32): void {
  const a = longs + (<usize>i << 3);
  const b = longs + (<usize>j << 3);
  const t = load<u64>(a);
  store<u64>(a, load<u64>(b));
  store<u64>(b, t);
}
