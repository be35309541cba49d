// The store's API is synchronous (LMDB transactions, opening and closing), so its waits are too.

/** Blocks the calling thread for `ms` milliseconds. */
export function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
