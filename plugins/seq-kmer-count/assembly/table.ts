// The k-mer counts: an open-addressing hash table (linear probing) of 2-bit packed k-mers
// (k <= 31 fits a u64) with u32 counts, in two arrays outside the managed heap. It doubles
// from 64 Ki slots up to MAX_SLOTS, kept at most three quarters full; one more distinct k-mer
// than that is refused, never dropped or merged, so a count is always exact.

const INITIAL_BITS: i32 = 16;
/** log2 of the largest table: 1 Mi slots, 12 MiB (8 MiB keys, 4 MiB counts). */
export const MAX_BITS: i32 = 20;
/** Most distinct k-mers held: three quarters of the largest table. */
export const MAX_DISTINCT: i32 = (1 << MAX_BITS) / 4 * 3;

// Keys are stored plus one, so 0 marks an empty slot (a 31-mer is below 2^62).
let keys: usize = 0;
let counts: usize = 0;
// For k <= DIRECT_MAX_K: a count per possible k-mer, indexed by its 2-bit code, instead of the
// hash table (a load and a store per k-mer, against a hash, a probe loop and a compare).
// 4^9 counts are 1 MiB; every 9-mer fits the hash table too, so the results are the same.
let direct: usize = 0;
let directSlots: usize = 0;
/** Largest k counted in a direct array. */
export const DIRECT_MAX_K: i32 = 9;
let bits: i32 = 0;
let mask: u64 = 0;
/** Distinct k-mers in the table. */
export let distinct: i32 = 0;

// Fibonacci hashing: the top `bits` bits of the key times 2^64 / phi.
// @ts-ignore: decorator
@inline function slotOf(key: u64, shift: u64): usize {
  return <usize>((key * 0x9e3779b97f4a7c15) >> shift);
}

function allocate(tableBits: i32): void {
  const slots = <usize>1 << tableBits;
  keys = heap.alloc(slots << 3);
  counts = heap.alloc(slots << 2);
  memory.fill(keys, 0, slots << 3);
  memory.fill(counts, 0, slots << 2);
  bits = tableBits;
  mask = (<u64>1 << tableBits) - 1;
}

/** Starts an empty table for k-mers of length `k`. */
export function resetTable(k: i32): void {
  distinct = 0;
  if (k <= DIRECT_MAX_K) {
    directSlots = <usize>1 << (<usize>k << 1);
    direct = heap.alloc(directSlots << 2);
    memory.fill(direct, 0, directSlots << 2);
    return;
  }
  direct = 0;
  allocate(INITIAL_BITS);
}

/** Adds one occurrence of `kmer`; false when it is new and the table is full (MAX_DISTINCT). */
export function addKmer(kmer: u64): bool {
  if (direct != 0) {
    const at = direct + (<usize>kmer << 2);
    store<u32>(at, load<u32>(at) + 1);
    return true;
  }
  const key = kmer + 1;
  const shift = <u64>(64 - bits);
  let slot = slotOf(key, shift);
  while (true) {
    const at = keys + (slot << 3);
    const stored = load<u64>(at);
    if (stored == key) {
      const countAt = counts + (slot << 2);
      store<u32>(countAt, load<u32>(countAt) + 1);
      return true;
    }
    if (stored == 0) break;
    slot = <usize>((<u64>slot + 1) & mask);
  }
  if (distinct >= MAX_DISTINCT) return false;
  store<u64>(keys + (slot << 3), key);
  store<u32>(counts + (slot << 2), 1);
  distinct++;
  if (distinct > (1 << bits) / 4 * 3 && bits < MAX_BITS) grow();
  return true;
}

// Doubles the table, re-inserting every k-mer with its count.
function grow(): void {
  const oldKeys = keys;
  const oldCounts = counts;
  const oldSlots = <usize>1 << bits;
  allocate(bits + 1);
  const shift = <u64>(64 - bits);
  for (let i: usize = 0; i < oldSlots; i++) {
    const key = load<u64>(oldKeys + (i << 3));
    if (key == 0) continue;
    let slot = slotOf(key, shift);
    while (load<u64>(keys + (slot << 3)) != 0) slot = <usize>((<u64>slot + 1) & mask);
    store<u64>(keys + (slot << 3), key);
    store<u32>(counts + (slot << 2), load<u32>(oldCounts + (i << 2)));
  }
  heap.free(oldKeys);
  heap.free(oldCounts);
}

/**
 * Moves the entries to the front of the arrays (the table is no longer a hash table after
 * this) and returns their number; `keyAt`/`countAt` then read entry i, k-mer without the +1.
 */
export function compact(): i32 {
  if (direct != 0) return compactDirect();
  const slots = <usize>1 << bits;
  let n: usize = 0;
  for (let i: usize = 0; i < slots; i++) {
    const key = load<u64>(keys + (i << 3));
    if (key == 0) continue;
    store<u64>(keys + (n << 3), key - 1);
    store<u32>(counts + (n << 2), load<u32>(counts + (i << 2)));
    n++;
  }
  return <i32>n;
}

// compact() for the direct array: the k-mers counted, in k-mer order, into entry arrays.
function compactDirect(): i32 {
  let n: usize = 0;
  for (let i: usize = 0; i < directSlots; i++) if (load<u32>(direct + (i << 2)) != 0) n++;
  keys = heap.alloc(max(n, 1) << 3);
  counts = heap.alloc(max(n, 1) << 2);
  let at: usize = 0;
  for (let i: usize = 0; i < directSlots; i++) {
    const count = load<u32>(direct + (i << 2));
    if (count == 0) continue;
    store<u64>(keys + (at << 3), <u64>i);
    store<u32>(counts + (at << 2), count);
    at++;
  }
  heap.free(direct);
  direct = 0;
  distinct = <i32>n;
  return <i32>n;
}

/** The k-mer of compacted entry `i`. */
// @ts-ignore: decorator
@inline export function keyAt(i: i32): u64 {
  return load<u64>(keys + (<usize>i << 3));
}

/** The count of compacted entry `i`. */
// @ts-ignore: decorator
@inline export function countAt(i: i32): u32 {
  return load<u32>(counts + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function swap(i: i32, j: i32): void {
  const ki = keys + (<usize>i << 3);
  const kj = keys + (<usize>j << 3);
  const key = load<u64>(ki);
  store<u64>(ki, load<u64>(kj));
  store<u64>(kj, key);
  const ci = counts + (<usize>i << 2);
  const cj = counts + (<usize>j << 2);
  const count = load<u32>(ci);
  store<u32>(ci, load<u32>(cj));
  store<u32>(cj, count);
}

/**
 * Sorts compacted entries [low, high] by k-mer (2-bit codes A<C<G<T, so numeric order is
 * lexicographic order): quicksort with a median-of-three pivot, recursing into the smaller
 * side only (depth at most log2 n), insertion sort below 16 entries.
 */
export function sortByKmer(low: i32, high: i32): void {
  while (high - low >= 16) {
    const middle = low + ((high - low) >> 1);
    if (keyAt(middle) < keyAt(low)) swap(middle, low);
    if (keyAt(high) < keyAt(low)) swap(high, low);
    if (keyAt(high) < keyAt(middle)) swap(high, middle);
    const pivot = keyAt(middle);
    let i = low;
    let j = high;
    while (i <= j) {
      while (keyAt(i) < pivot) i++;
      while (keyAt(j) > pivot) j--;
      if (i <= j) {
        swap(i, j);
        i++;
        j--;
      }
    }
    if (j - low < high - i) {
      sortByKmer(low, j);
      low = i;
    } else {
      sortByKmer(i, high);
      high = j;
    }
  }
  for (let i = low + 1; i <= high; i++) {
    for (let j = i; j > low && keyAt(j) < keyAt(j - 1); j--) swap(j, j - 1);
  }
}
