// Tests of the table ceiling and the shared memory cap: how shareRoom splits the room, how
// instrumentModule rewrites every defined table's maximum, refuses initial sizes over the
// ceiling, and makes table.grow fail inside the guest once all tables hold the ceiling.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TABLE_ELEMENTS } from '../../../abi/constants.js';
import { decodeModule, instrumentModule, TableCeilingError } from './index.js';
import { shareRoom } from './module-bounds.js';
import { instantiate, metered, wat } from '../../../test/helpers/wasm.js';

const tables = (bytes: Uint8Array) => decodeModule(bytes).tables.map((t) => [t.initial, t.maximum]);

/** A module with `decls` as its tables and a `grow(table, delta)` export for table 0..n-1. */
function growable(decls: string[]): string {
  const arms = decls.map(
    (_, i) => `(if (i32.eq (local.get 0) (i32.const ${i})) (then (return (table.grow ${i} (ref.null func) (local.get 1)))))`,
  );
  return `(module ${decls.map((d) => `(table ${d} funcref)`).join(' ')}
    (func (export "grow") (param i32 i32) (result i32) ${arms.join(' ')} (i32.const -2)))`;
}

/** Grows table `t` by halving steps from 2^20 until no step fits; returns the elements added. */
function growAll(exports: WebAssembly.Exports, t: number): number {
  let added = 0;
  for (let delta = 1 << 20; delta >= 1; ) {
    const r = metered(exports, 'grow', [t, delta]);
    if (r.error) throw r.error;
    if (r.result === -1) delta >>= 1;
    else added += delta;
  }
  return added;
}

describe('shareRoom', () => {
  it('shareRoom gives one entry the whole room, or what it declared when that is less', () => {
    expect(shareRoom([{ initial: 2, maximum: null, limit: Infinity }], 10)).toEqual([10]);
    expect(shareRoom([{ initial: 2, maximum: 5, limit: Infinity }], 10)).toEqual([5]);
    expect(shareRoom([{ initial: 2, maximum: null, limit: 6 }], 10)).toEqual([6]);
  });

  it('shareRoom splits the room evenly, and what one entry does not want goes to the others', () => {
    expect(
      shareRoom(
        [0, 0, 0].map(() => ({ initial: 0, maximum: null, limit: Infinity })),
        10,
      ),
    ).toEqual([3, 3, 4]);
    expect(
      shareRoom(
        [
          { initial: 0, maximum: null, limit: Infinity },
          { initial: 1, maximum: 2, limit: Infinity },
          { initial: 0, maximum: null, limit: Infinity },
        ],
        11,
      ),
    ).toEqual([4, 2, 5]);
  });

  it('shareRoom keeps a maximum below its initial size, so the engine still refuses that module', () => {
    expect(shareRoom([{ initial: 5, maximum: 3, limit: Infinity }], 10)).toEqual([3]);
  });

  it('shareRoom never hands out more than the total and never less than each initial size (property)', () => {
    const entry = fc.record({
      initial: fc.nat(50),
      maximum: fc.option(fc.nat(200), { nil: null }),
      limit: fc.integer({ min: 0, max: 300 }),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), fc.nat(400), (raw, slack) => {
        const entries = raw.map((e) => ({
          ...e,
          maximum: e.maximum === null ? null : Math.max(e.maximum, e.initial),
          limit: Math.max(e.limit, e.initial),
        }));
        const total = entries.reduce((sum, e) => sum + e.initial, 0) + slack;
        const maxima = shareRoom(entries, total);
        expect(maxima.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(total);
        maxima.forEach((max, i) => {
          const e = entries[i]!;
          expect(max).toBeGreaterThanOrEqual(e.initial);
          expect(max).toBeLessThanOrEqual(Math.min(e.maximum ?? Infinity, e.limit));
        });
      }),
    );
  });
});

describe('instrumentModule table ceiling', () => {
  it('instrumentModule gives every defined table a maximum, those declared without one included, adding up to the ceiling (ABI-ALLOC-003)', async () => {
    const out = instrumentModule(await wat('(module (table 10 funcref) (table 5 20 externref) (table 0 funcref))'), {
      maxTableElements: 100,
      maxMemoryPages: 1,
    });
    expect(tables(out.bytes)).toEqual([
      [10, 45],
      [5, 20],
      [0, 35],
    ]);
    expect(WebAssembly.validate(out.bytes)).toBe(true);
    expect(out.info.tables.map((t) => t.maximum)).toEqual([null, 20, null]);
  });

  it('instrumentModule caps a lone table at MAX_TABLE_ELEMENTS by default (ABI-ALLOC-001)', async () => {
    const out = instrumentModule(await wat('(module (table 3 funcref) (table 0 100 externref))'), { maxMemoryPages: 1 });
    expect(tables(out.bytes)).toEqual([
      [3, MAX_TABLE_ELEMENTS - 100],
      [0, 100],
    ]);
  });

  it('instrumentModule leaves the element segments, imported tables and tables with an initializer in place', async () => {
    const text = `(module (import "env" "t" (table 2 funcref)) (table $own 1 funcref) (func $f) (elem (table $own) (i32.const 0) func $f))`;
    const out = instrumentModule(await wat(text), { maxTableElements: 50, maxMemoryPages: 1 });
    expect(tables(out.bytes)).toEqual([
      [2, null],
      [1, 50],
    ]);
    const exports = await instantiate(out.bytes, { env: { t: new WebAssembly.Table({ element: 'anyfunc', initial: 2 }) } });
    expect(exports).toHaveProperty('__helix_fuel');
  });

  for (const [what, count] of [
    ['three', 3],
    ['six', 6],
  ] as const) {
    it(`instrumentModule refuses ${what} tables of 10 million elements, naming table 0, its size and the ceiling (ABI-ALLOC-002)`, async () => {
      const bytes = await wat(`(module ${'(table 10000000 funcref) '.repeat(count)})`);
      expect(() => instrumentModule(bytes, { maxMemoryPages: 16 })).toThrowError(TableCeilingError);
      expect(() => instrumentModule(bytes, { maxMemoryPages: 16 })).toThrowError(
        `table 0 starts at 10000000 elements, above the ceiling of ${MAX_TABLE_ELEMENTS} elements`,
      );
    });
  }

  it('instrumentModule refuses tables that pass the ceiling only together, naming the table that passes it and the total (ABI-ALLOC-002)', async () => {
    const bytes = await wat('(module (table 600000 funcref) (table 1 externref) (table 600000 funcref))');
    expect(() => instrumentModule(bytes, { maxMemoryPages: 1 })).toThrowError(
      expect.objectContaining({ name: 'TableCeilingError', tableIndex: 2, initial: 600000, total: 1200001, ceiling: MAX_TABLE_ELEMENTS }),
    );
    expect(() => instrumentModule(bytes, { maxMemoryPages: 1, maxTableElements: 1200001 })).not.toThrow();
  });

  it('instrumentModule rejects a ceiling that is not a non-negative integer, naming the option', async () => {
    expect(() =>
      instrumentModule(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), { maxMemoryPages: 1, maxTableElements: -1 }),
    ).toThrowError(/options\.maxTableElements/);
  });

  it('instrumentModule makes table.grow return -1 inside the guest once the tables hold the ceiling together (ABI-ALLOC-003)', async () => {
    const out = instrumentModule(await wat(growable(['0', '0', '4 10'])), { maxTableElements: 1000, maxMemoryPages: 1 });
    const exports = await instantiate(out.bytes);
    const added = [0, 1, 2].map((t) => growAll(exports, t));
    expect(added).toEqual([495, 495, 6]);
    expect(added.reduce((a, b) => a + b, 0) + 4).toBe(1000);
    expect(metered(exports, 'grow', [0, 1]).result).toBe(-1);
  });

  it('instrumentModule stops table.grow at MAX_TABLE_ELEMENTS in all, where the engine alone allows 10 million per table (ABI-ALLOC-001)', async () => {
    const out = instrumentModule(await wat(growable(['0', '0'])), { maxMemoryPages: 1 });
    const exports = await instantiate(out.bytes);
    const before = process.memoryUsage().rss;
    const added = [0, 1].map((t) => growAll(exports, t));
    const after = process.memoryUsage().rss;
    console.log(
      `two grown tables: ${added.join(' + ')} elements; rss ${(before / 2 ** 20).toFixed(0)} -> ${(after / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(added[0]! + added[1]!).toBe(MAX_TABLE_ELEMENTS);
  });
});
