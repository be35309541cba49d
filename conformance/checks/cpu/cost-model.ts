// CPU checks of the cost model: bulk memory and table operations charged by the bytes or elements
// they move, before they run, and a long straight-line body behind a call chain overshooting the
// budget by at most one body (ABI-FUEL-002, ABI-FUEL-003, ABI-FUEL-004).
import { MIB } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { details, expectExhausted, FUEL, pack } from './shared.js';

/** The checks of this file, in the report's order. */
export const costModelChecks: readonly Check[] = [
  {
    id: 'cpu.bulk-memory-scales',
    title: 'memory.fill and memory.copy cost one more unit per 64 bytes: fuel scales with the bytes moved',
    category: 'cpu',
    abi: ['ABI-FUEL-003'],
    engines: ['helix', 'extism'],
    expected: 'a fill (and a copy) of 1 MiB costs exactly (1 MiB - 64 KiB) / 64 = 15,360 units more than the same instruction over 64 KiB',
    packs: (engine) => {
      const o = { pages: 20, limits: { maxMemoryPages: 32 } };
      const fill = (n: number): string => `(memory.fill (i32.const 65536) (i32.const 65) (i32.const ${n}))`;
      const copy = (n: number): string => `(memory.copy (i32.const 65536) (i32.const 131072) (i32.const ${n}))`;
      return [
        pack(engine, 'cpu.fill_64k', fill(65536), o),
        pack(engine, 'cpu.fill_1m', fill(MIB), o),
        pack(engine, 'cpu.copy_64k', copy(65536), o),
        pack(engine, 'cpu.copy_1m', copy(MIB), o),
      ];
    },
    async run(ctx) {
      const want = (MIB - 65536) / 64;
      for (const op of ['fill', 'copy']) {
        const small = await ctx.call(`cpu.${op}_64k`, { n: 1 });
        const big = await ctx.call(`cpu.${op}_1m`, { n: 1 });
        expectSuccess(small);
        expectSuccess(big);
        const extra = big.metrics.fuel_used - small.metrics.fuel_used;
        ctx.observe(`${op}_fuel`, { '64KiB': small.metrics.fuel_used, '1MiB': big.metrics.fuel_used, extra });
        expect(extra === want, `memory.${op} of 1 MiB cost ${extra} more units than of 64 KiB, not ${want}`);
      }
    },
  },
  {
    id: 'cpu.table-and-init-costs',
    title:
      'table.grow and table.fill cost one unit per element and memory.init one per 64 bytes; a table.grow of two billion elements runs out of fuel first',
    category: 'cpu',
    abi: ['ABI-FUEL-003'],
    engines: ['helix', 'extism'],
    expected: `growing or filling 10,000 more table elements costs exactly 10,000 units more; memory.init of 6,400 bytes of a passive segment exactly 100 more than of 0; table.grow of 2,147,483,647 elements ends S-TOOL-FUEL-EXHAUSTED at ${FUEL}`,
    packs: (engine) => {
      const table = '(table $t 10000 externref)';
      const seg = `(data $seg "${'a'.repeat(6400)}")`;
      const grow = (n: number): string => `(drop (table.grow $t (ref.null extern) (i32.const ${n})))`;
      const fill = (n: number): string => `(table.fill $t (i32.const 0) (ref.null extern) (i32.const ${n}))`;
      const init = (n: number): string => `(memory.init $seg (i32.const 8192) (i32.const 0) (i32.const ${n}))`;
      return [
        pack(engine, 'cpu.tgrow_0', grow(0), { extra: table }),
        pack(engine, 'cpu.tgrow_10000', grow(10_000), { extra: table }),
        pack(engine, 'cpu.tfill_0', fill(0), { extra: table }),
        pack(engine, 'cpu.tfill_10000', fill(10_000), { extra: table }),
        pack(engine, 'cpu.init_0', init(0), { extra: seg }),
        pack(engine, 'cpu.init_6400', init(6400), { extra: seg }),
        pack(engine, 'cpu.tgrow_huge', grow(2_147_483_647), { extra: table, limits: { fuel: FUEL } }),
      ];
    },
    async run(ctx) {
      const costs: Record<string, number> = {};
      for (const [small, big, want] of [
        ['cpu.tgrow_0', 'cpu.tgrow_10000', 10_000],
        ['cpu.tfill_0', 'cpu.tfill_10000', 10_000],
        ['cpu.init_0', 'cpu.init_6400', 100],
      ] as const) {
        const a = await ctx.call(small, { n: 1 });
        const b = await ctx.call(big, { n: 1 });
        expectSuccess(a);
        expectSuccess(b);
        const extra = b.metrics.fuel_used - a.metrics.fuel_used;
        costs[big] = extra;
        expect(extra === want, `${big} cost ${extra} units more than ${small}, not ${want}`);
      }
      ctx.observe('extra_units', costs);
      const huge = await ctx.call('cpu.tgrow_huge', { n: 1 });
      expectOutcome(huge, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(details(huge).fuel_limit === FUEL, `the huge table.grow ran under ${String(details(huge).fuel_limit)}`);
    },
  },
  {
    id: 'cpu.bulk-memory-huge-length',
    title: 'memory.fill, memory.copy and memory.grow of huge lengths are charged before they run: fuel runs out, not the bounds check',
    category: 'cpu',
    abi: ['ABI-FUEL-003', 'ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `each ends terminal_error S-TOOL-FUEL-EXHAUSTED at its budget of ${FUEL} (a fill or copy of 4 GiB would cost 67,108,863 units, a grow of 65,535 pages 67,107,840), never S-TOOL-TRAP (out of bounds) nor a grow that just fails`,
    packs: (engine) => [
      pack(engine, 'cpu.fill_huge', '(memory.fill (i32.const 4096) (i32.const 65) (i32.const -1))', { limits: { fuel: FUEL } }),
      pack(engine, 'cpu.copy_huge', '(memory.copy (i32.const 4096) (i32.const 0) (i32.const -1))', { limits: { fuel: FUEL } }),
      pack(engine, 'cpu.grow_huge', '(drop (memory.grow (i32.const 65535)))', { limits: { fuel: FUEL } }),
    ],
    async run(ctx) {
      for (const tool of ['cpu.fill_huge', 'cpu.copy_huge', 'cpu.grow_huge']) {
        const r = await ctx.call(tool, { n: 1 });
        ctx.observe(tool, { status: r.status, code: r.error?.code, fuel_used: r.metrics.fuel_used });
        expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
        expect(details(r).fuel_limit === FUEL, `${tool}: details.fuel_limit is ${String(details(r).fuel_limit)}`);
      }
    },
  },
  {
    id: 'cpu.straight-line-call-chain',
    title: 'A loop over a 50-deep call chain ending in 8,000 units of straight-line code overshoots the budget by at most one body',
    category: 'cpu',
    abi: ['ABI-FUEL-004', 'ABI-FUEL-002'],
    engines: ['helix', 'extism'],
    expected: `terminal_error S-TOOL-FUEL-EXHAUSTED with details.fuel_limit ${FUEL} and fuel_used at most one straight-line body (8,000 units) past it`,
    packs: (engine) => {
      const heavy = `(func $heavy (local $x i32) ${'(local.set $x (i32.add (local.get $x) (i32.const 1)))'.repeat(2000)})`;
      const chain = Array.from({ length: 50 }, (_, i) => `(func $c${i} (call ${i === 49 ? '$heavy' : `$c${i + 1}`}))`).join('\n');
      return [pack(engine, 'cpu.chain', '(loop $l (call $c0) (br $l))', { extra: `${heavy}\n${chain}`, limits: { fuel: FUEL } })];
    },
    async run(ctx) {
      const r = await ctx.call('cpu.chain', { n: 1 });
      expectExhausted(r, FUEL, 8_100);
      ctx.observe('overshoot', r.metrics.fuel_used - FUEL);
    },
  },
];
