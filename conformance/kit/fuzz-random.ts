// A small seeded random source for the fuzz generators (conformance/kit/fuzz-*.ts). The
// generators take a Rand rather than fast-check arbitraries, so the conformance suite (which
// ships without devDependencies) replays exactly the cases a seed names, and the property tests
// (test/fuzz-*.test.ts) draw seeds with fast-check, which prints the seed of a failing case.

/** A seeded source of random choices. */
export interface Rand {
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** One of the items. */
  pick<T>(items: readonly T[]): T;
  /** A few of the items (each kept with probability p), in order. */
  some<T>(items: readonly T[], p?: number): T[];
  /** A string of `length` characters drawn from `alphabet`. */
  chars(alphabet: string, length: number): string;
}

/** mulberry32 over a 32-bit seed: the same seed gives the same choices on every machine. */
export function rand(seed: number): Rand {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r: Rand = {
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    some: (items, p = 0.5) => items.filter(() => next() < p),
    chars: (alphabet, length) => Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  };
  return r;
}

/** The seeds of a fixed sample: `count` seeds derived from `base`, the same on every run. */
export function sampleSeeds(base: number, count: number): number[] {
  const r = rand(base);
  return Array.from({ length: count }, () => r.int(0, 0x7fffffff));
}
