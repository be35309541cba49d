// An instance's post-start state (its memory and exported mutable globals), taken once and put
// back before each later call, so a recycled instance is the same as a fresh one (ABI-CALL-001),
// and the instances a worker keeps for that (ABI-ALLOC-008). Both sandboxes use it: helix/v1
// (sandbox.ts) and extism/v1 (extism-sandbox.ts).

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
export function restoreSnapshot(
  snapshot: Snapshot,
  instance: WebAssembly.Instance,
  memory: WebAssembly.Memory,
  names: readonly string[],
): boolean {
  if (memory.buffer.byteLength !== snapshot.memory.length) return false;
  new Uint8Array(memory.buffer).set(snapshot.memory);
  const exports = instance.exports;
  names.forEach((name, i) => {
    (exports[name] as WebAssembly.Global).value = snapshot.globals[i];
  });
  return true;
}

/** A kept instance as both sandboxes hold it. */
export interface Restorable {
  readonly instance: WebAssembly.Instance;
  readonly memory: WebAssembly.Memory;
  readonly globalExports: readonly string[];
  snapshot?: Snapshot;
  /** Whether a call has run since the snapshot was taken or last put back. */
  dirty: boolean;
}

/** Puts a used instance back in its post-start state; false when that is impossible. */
export function restore(slot: Restorable): boolean {
  if (slot.snapshot === undefined) return false;
  if (!slot.dirty) return true;
  if (!restoreSnapshot(slot.snapshot, slot.instance, slot.memory, slot.globalExports)) return false;
  slot.dirty = false;
  return true;
}

/** The recyclable instances of one worker: at most one per module, whatever the memory caps its calls ran under. */
export class KeptInstances<S> {
  readonly #slots = new Map<string, S>();

  /** Takes the instance kept under `key` out; it is kept again only after a clean call. */
  take(key: string): S | undefined {
    const slot = this.#slots.get(key);
    this.#slots.delete(key);
    return slot;
  }

  /**
   * Keeps `slot` under `key` (`digest:cap`, see protocol.ts) and drops the instance kept for the
   * same module under another cap: a client varying memory_mb_limit must not make a worker keep
   * an instance and its memory snapshot per cap (ABI-ALLOC-008).
   */
  keep(key: string, slot: S): void {
    const module = (k: string) => k.slice(0, k.lastIndexOf(':'));
    for (const other of this.#slots.keys()) if (module(other) === module(key)) this.#slots.delete(other);
    this.#slots.set(key, slot);
  }

  /** Drops the instance kept under `key`, if any: the engine gave its module up (ABI-ALLOC-010). */
  forget(key: string): void {
    this.#slots.delete(key);
  }

  /** Keys of the instances kept. */
  keys(): string[] {
    return [...this.#slots.keys()];
  }
}
