// An instance's post-start state (its memory and exported mutable globals), taken once and put
// back before each later call, so a recycled instance is the same as a fresh one (ABI-CALL-001).
// Both sandboxes use it: helix/v1 (sandbox.ts) and extism/v1 (extism-sandbox.ts).

/** The memory and exported mutable globals of an instance at one moment. */
export interface Snapshot {
  readonly memory: Uint8Array;
  readonly globals: readonly unknown[];
}

/** Copies `memory` and the globals exported as `names`. */
export function takeSnapshot(instance: WebAssembly.Instance, memory: WebAssembly.Memory, names: readonly string[]): Snapshot {
  return { memory: new Uint8Array(memory.buffer).slice(), globals: names.map((g) => (instance.exports[g] as WebAssembly.Global).value) };
}

/**
 * Puts `snapshot` back; false when that is impossible: memory cannot shrink, so a call that grew
 * it leaves an instance no snapshot can restore.
 */
export function restoreSnapshot(snapshot: Snapshot, instance: WebAssembly.Instance, memory: WebAssembly.Memory, names: readonly string[]): boolean {
  if (memory.buffer.byteLength !== snapshot.memory.length) return false;
  new Uint8Array(memory.buffer).set(snapshot.memory);
  const exports = instance.exports;
  names.forEach((name, i) => {
    (exports[name] as WebAssembly.Global).value = snapshot.globals[i];
  });
  return true;
}
