// Property test of the instrumenter on random programs (conformance/kit/fuzz-programs.ts): loops,
// branches, calls, loads and stores, bulk memory, memory.grow and table.grow over one memory and
// up to three tables, under a random memory cap and table ceiling. The instrumented module
// validates, keeps within the cap and the ceiling (declared maxima and live sizes), behaves
// exactly as the program would with the rewritten maxima (result, trap, memory, table sizes), and
// its fuel is exact: a budget of exactly the fuel used completes with the counter at 0, one unit
// less is seen as exhausted, and the counter is never negative on a run that completes
// (ABI-FUEL-001..004, ABI-MEMORY-002/003, ABI-ALLOC-001..004). `npm run fuzz` runs it longer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeModule, instrumentModule, MemoryCapError, TableCeilingError } from '../host/2-sandbox/wasm/index.js';
import { randomProgram, standaloneModule, type Program } from '../conformance/kit/fuzz-programs.js';
import { rand } from '../conformance/kit/fuzz-random.js';
import { fuzzRuns } from './helpers/json-arbitraries.js';
import { instantiate, metered, PLENTY, wat } from './helpers/wasm.js';

const RUNS = fuzzRuns(200);

interface Outcome {
  result?: unknown;
  trap?: string;
  memory: string;
  pages: number;
  tables: number[];
  used: bigint;
  remaining: bigint;
}

async function run(bytes: Uint8Array, p: Program, budget: bigint | undefined): Promise<Outcome> {
  const exports = await instantiate(bytes);
  const main = (): unknown => (exports.main as (a: number, b: number) => number)(p.args[0], p.args[1]);
  let outcome: { result?: unknown; error?: Error; used: bigint; remaining: bigint };
  if (budget === undefined) {
    try {
      outcome = { result: main(), used: 0n, remaining: 0n };
    } catch (error) {
      outcome = { error: error as Error, used: 0n, remaining: 0n };
    }
  } else outcome = metered(exports, 'main', [...p.args], budget);
  const memory = exports.memory as WebAssembly.Memory;
  return {
    ...(outcome.error === undefined ? { result: outcome.result } : { trap: outcome.error.message }),
    memory: Buffer.from(new Uint8Array(memory.buffer)).toString('base64'),
    pages: memory.buffer.byteLength / 65536,
    tables: p.tables.map((_, i) => (exports[`t${i}`] as WebAssembly.Table).length),
    used: outcome.used,
    remaining: outcome.remaining,
  };
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

describe('instrumentModule on random programs with memory and table growth', () => {
  it('validates, keeps the cap and the ceiling, preserves behaviour and meters exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 0x7fffffff }), async (seed) => {
        const r = rand(seed);
        const p = randomProgram(r, { pages: [1, 4], tables: [0, 3], tableInitial: [0, 10] });
        // Mostly room to grow; sometimes a cap or ceiling below what the module starts with.
        const initial = sum(p.tables.map((t) => t.initial));
        const cap = r.chance(0.1) ? r.int(1, p.pages) : r.int(p.pages, p.pages + 5);
        const ceiling = r.chance(0.1) ? r.int(0, initial) : r.int(initial, initial + 20);
        const original = await wat(standaloneModule(p));
        expect(WebAssembly.validate(original)).toBe(true);

        const opts = { maxMemoryPages: cap, maxTableElements: ceiling };
        if (p.pages > cap) {
          expect(() => instrumentModule(original, opts)).toThrow(MemoryCapError);
          return;
        }
        if (initial > ceiling) {
          expect(() => instrumentModule(original, opts)).toThrow(TableCeilingError);
          return;
        }
        const out = instrumentModule(original, opts);
        expect(WebAssembly.validate(out.bytes)).toBe(true);

        // The rewritten maxima: within the cap and the ceiling, never below the initial size, never above what the module declared.
        const info = decodeModule(out.bytes);
        const memory = info.memories[0]!;
        expect(memory.maximum).not.toBeNull();
        expect(memory.maximum!).toBeLessThanOrEqual(cap);
        expect(memory.maximum!).toBeGreaterThanOrEqual(p.pages);
        if (p.maxPages !== null) expect(memory.maximum!).toBeLessThanOrEqual(p.maxPages);
        const maxima = info.tables.map((t) => t.maximum);
        expect(maxima.every((m) => m !== null)).toBe(true);
        expect(sum(maxima as number[])).toBeLessThanOrEqual(ceiling);
        p.tables.forEach((t, i) => {
          expect(maxima[i]!).toBeGreaterThanOrEqual(t.initial);
          if (t.max !== null) expect(maxima[i]!).toBeLessThanOrEqual(t.max);
        });

        // The same program declaring those maxima itself is the reference.
        const reference = await wat(standaloneModule(p, { maxPages: memory.maximum, tableMax: maxima }));
        const want = await run(reference, p, undefined);
        const got = await run(out.bytes, p, PLENTY);
        expect(got.result).toBe(want.result);
        expect(got.trap).toBe(want.trap);
        expect(got.memory).toBe(want.memory);
        expect(got.tables).toEqual(want.tables);
        expect(got.pages).toBeLessThanOrEqual(cap);
        expect(sum(got.tables)).toBeLessThanOrEqual(ceiling);
        expect(got.used).toBeGreaterThan(0n);
        expect(got.remaining).toBeGreaterThanOrEqual(0n);
        if (got.trap !== undefined) return;

        // Exact metering: identical runs cost the same; exactly the fuel used completes at 0, one less is exhausted.
        const exact = await run(out.bytes, p, got.used);
        expect(exact.trap).toBeUndefined();
        expect(exact.result).toBe(want.result);
        expect(exact.remaining).toBe(0n);
        const short = await run(out.bytes, p, got.used - 1n);
        expect(short.trap !== undefined || short.remaining < 0n).toBe(true);
        if (short.trap !== undefined) expect(short.remaining).toBeLessThan(0n);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});
