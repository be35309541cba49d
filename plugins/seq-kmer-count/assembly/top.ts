// The N most frequent k-mers of the compacted table, ties broken by k-mer (lexicographic,
// which is numeric order of the 2-bit codes): a heap of N entry indexes with the worst of
// the best so far at its root, so one pass over n entries costs O(n log N).

import { countAt, keyAt } from "./table";

let heapAt: usize = 0;
let size: i32 = 0;

// True when entry a ranks before entry b: more occurrences, or as many and a smaller k-mer.
// @ts-ignore: decorator
@inline function better(a: i32, b: i32): bool {
  const ca = countAt(a);
  const cb = countAt(b);
  return ca > cb || (ca == cb && keyAt(a) < keyAt(b));
}

// @ts-ignore: decorator
@inline function at(i: i32): i32 {
  return load<i32>(heapAt + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function put(i: i32, entry: i32): void {
  store<i32>(heapAt + (<usize>i << 2), entry);
}

// Moves the entry at `i` down until both children rank before it (root = worst).
function siftDown(i: i32): void {
  const entry = at(i);
  while (true) {
    const left = 2 * i + 1;
    if (left >= size) break;
    let child = left;
    if (left + 1 < size && better(at(child), at(left + 1))) child = left + 1;
    if (!better(entry, at(child))) break;
    put(i, at(child));
    i = child;
  }
  put(i, entry);
}

function siftUp(i: i32): void {
  const entry = at(i);
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!better(at(parent), entry)) break;
    put(i, at(parent));
    i = parent;
  }
  put(i, entry);
}

/**
 * Indexes of the best `limit` of the `n` compacted entries, best first, in a buffer of
 * `min(limit, n)` i32s (the caller frees it with heap.free).
 */
export function topEntries(n: i32, limit: i32): usize {
  const capacity = min(limit, n);
  heapAt = heap.alloc(<usize>max(capacity, 1) << 2);
  size = 0;
  if (capacity == 0) return heapAt;
  for (let entry = 0; entry < n; entry++) {
    if (size < capacity) {
      put(size, entry);
      size++;
      siftUp(size - 1);
    } else if (better(entry, at(0))) {
      put(0, entry);
      siftDown(0);
    }
  }
  // Taking the root (the worst) each time fills the buffer from the back: best first.
  const count = size;
  const sorted = heap.alloc(<usize>capacity << 2);
  for (let i = count - 1; i >= 0; i--) {
    store<i32>(sorted + (<usize>i << 2), at(0));
    size--;
    if (size > 0) {
      put(0, at(size));
      siftDown(0);
    }
  }
  heap.free(heapAt);
  return sorted;
}
