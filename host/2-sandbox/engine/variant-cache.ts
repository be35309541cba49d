// The engine's bounded cache of module variants: a module instrumented and compiled for a memory
// cap other than its manifest's own. A client picks the cap per call, so without a bound it could
// make the host build and hold a copy of a module's code per cap (ABI-ALLOC-009).
import { MAX_MODULE_VARIANT_BYTES, MAX_MODULE_VARIANTS } from '../../../abi/index.js';

/** The cache's bounds; the ABI's unless a test says otherwise. */
export interface VariantCacheLimits {
  readonly maxVariants: number;
  readonly maxBytes: number;
}

/** What building a variant gives the cache. */
export interface VariantBuild<V> {
  /** The variant, once compiled; a build that fails is not kept. */
  readonly value: Promise<V>;
  /** What the variant is charged against the byte bound: its instrumented size. */
  readonly bytes: number;
  /** Called once when the cache gives the variant up, so whatever else holds it lets go too. */
  readonly evicted?: () => void;
}

/** A call's hold on a variant: the cache does not give it up before release(). */
export interface VariantLease<V> {
  readonly value: Promise<V>;
  /** The variant itself when it was already compiled, so the call need not wait a turn for it. */
  readonly ready: V | undefined;
  /** Ends the hold; later calls are no-ops. */
  release(): void;
}

/** What the cache holds and has done. */
export interface VariantStats {
  readonly keys: readonly string[];
  /** Their instrumented bytes. */
  readonly bytes: number;
  /** Variants built so far, and given up so far. */
  readonly built: number;
  readonly evicted: number;
}

interface Entry {
  readonly value: Promise<unknown>;
  ready?: unknown;
  readonly bytes: number;
  readonly evicted: (() => void) | undefined;
  users: number;
}

/**
 * At most `maxVariants` variants and `maxBytes` instrumented bytes, least recently used given up
 * first. A variant a call holds is never given up: the cache may pass its bounds by the variants
 * of the calls running now, and comes back within them as those calls end.
 */
export class VariantCache {
  /** In order of last use, oldest first. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  #built = 0;
  #evicted = 0;

  constructor(readonly limits: VariantCacheLimits = { maxVariants: MAX_MODULE_VARIANTS, maxBytes: MAX_MODULE_VARIANT_BYTES }) {}

  /**
   * Holds `key`'s variant, building it with `build` when the cache has none; `build` may throw
   * (the module cannot be instrumented for the cap), and then nothing is kept.
   */
  acquire<V>(key: string, build: () => VariantBuild<V>): VariantLease<V> {
    let entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.delete(key);
    } else {
      const made = build();
      const fresh: Entry = { value: made.value, bytes: made.bytes, evicted: made.evicted, users: 0 };
      made.value.then(
        (v) => (fresh.ready = v),
        () => this.#remove(key, fresh),
      );
      this.#built += 1;
      this.#bytes += made.bytes;
      entry = fresh;
    }
    this.#entries.set(key, entry);
    entry.users += 1;
    const held = entry;
    let released = false;
    this.#trim();
    return {
      value: held.value as Promise<V>,
      ready: held.ready as V | undefined,
      release: () => {
        if (released) return;
        released = true;
        held.users -= 1;
        this.#trim();
      },
    };
  }

  /** Whether the cache holds `key`'s variant now. */
  has(key: string): boolean {
    return this.#entries.has(key);
  }

  stats(): VariantStats {
    return { keys: [...this.#entries.keys()], bytes: this.#bytes, built: this.#built, evicted: this.#evicted };
  }

  /** Gives up unheld variants, oldest first, until the cache is within its bounds. */
  #trim(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.limits.maxVariants && this.#bytes <= this.limits.maxBytes) return;
      if (entry.users === 0) this.#remove(key, entry);
    }
  }

  #remove(key: string, entry: Entry): void {
    if (this.#entries.get(key) !== entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    this.#evicted += 1;
    entry.evicted?.();
  }
}
