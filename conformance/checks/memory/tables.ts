// Memory checks of tables: tables declared past MAX_TABLE_ELEMENTS, alone or together, are refused
// at load, and tables grown by the guest stop at the ceiling in all, a declared maximum kept
// (ABI-ALLOC-001..003, ABI-ALLOC-007).
import { MAX_TABLE_ELEMENTS } from '../../../abi/index.js';
import { decodeModule, instrumentModule } from '../../../host/2-sandbox/wasm/index.js';
import { expect, expectSuccess, type Check, type EngineAdapter } from '../../check.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';
import { growTables } from './shared.js';

/** Grows three funcref tables (no maximum, a maximum of 10, no maximum) until refused and answers their total size. */
const tableGrower = (engine: EngineAdapter): string =>
  engine.guests.number(growTables(3), {
    locals: '(local $d i32) (local $sum i32)',
    extra: '(table 0 funcref) (table 0 10 funcref) (table 0 funcref)',
  });

/** The checks of this file, in the report's order. */
export const tableChecks: readonly Check[] = [
  {
    id: 'memory.declared-tables',
    title: 'Tables declared past MAX_TABLE_ELEMENTS, alone or together, are refused at load, naming the table',
    category: 'memory',
    abi: ['ABI-ALLOC-002', 'ABI-ALLOC-001', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected: `P-PRECOND-MANIFEST-INVALID: ABI-ALLOC-002 "table 0 starts at 10000000 elements, above the ceiling of ${MAX_TABLE_ELEMENTS}" for three tables of 10 million, and "table 1 starts at 600000 elements (1200000 with the tables before it)" for two of 600,000; peak host memory stays far below the 800 MB the tables would take`,
    packs: (engine) => {
      const tables = (n: number, size: number): string => Array.from({ length: n }, () => `(table ${size} funcref)`).join(' ');
      const mod = (extra: string): string => engine.guests.bare('', { extra });
      const manifest = { ...engine.manifest };
      return [
        { id: 'memory.tables3', module: mod(tables(3, 10_000_000)), manifest },
        { id: 'memory.tables_pair', module: mod(tables(2, 600_000)), manifest },
      ];
    },
    async run(ctx) {
      const before = process.memoryUsage().rss;
      const lines = await refusedWith(ctx);
      const grown = process.memoryUsage().rss - before;
      ctx.observe('rss_growth_mib', Math.round(grown / 2 ** 20));
      expectLine(
        lines,
        'for three tables of 10 million',
        /memory_tables3/,
        /module: ABI-ALLOC-002/,
        /table 0 starts at 10000000 elements/,
        new RegExp(`ceiling of ${MAX_TABLE_ELEMENTS}`),
      );
      expectLine(
        lines,
        'for the pair',
        /memory_tables_pair/,
        /ABI-ALLOC-002/,
        /table 1 starts at 600000 elements \(1200000 with the tables before it\)/,
      );
      expect(grown < 400 * 2 ** 20, `host memory grew by ${Math.round(grown / 2 ** 20)} MiB while refusing the tables`);
    },
  },
  {
    id: 'memory.table-grow-ceiling',
    title: 'Tables declared without maxima grow to MAX_TABLE_ELEMENTS in all and no further; a declared maximum is kept',
    category: 'memory',
    abi: ['ABI-ALLOC-001', 'ABI-ALLOC-003', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected: `the guest grows three funcref tables (no maximum, a maximum of 10, no maximum) with table.grow until it returns -1: they hold ${MAX_TABLE_ELEMENTS} elements together, the call succeeds and the host serves the next call`,
    packs: (engine) => [
      engine.pack('memory.tables_grow', tableGrower(engine), { limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000 }, timeoutMs: 30_000 }),
    ],
    async run(ctx) {
      const r = await ctx.call('memory.tables_grow', {});
      const out = expectSuccess(r);
      expect(out.value === MAX_TABLE_ELEMENTS, `the tables hold ${JSON.stringify(out.value)} elements together, not ${MAX_TABLE_ELEMENTS}`);
      ctx.observe('elements', out.value);
      // The same rewrite the host applied: table 1 keeps its declared maximum of 10.
      const maxima = decodeModule(instrumentModule(await wat2wasm(tableGrower(ctx.engine)), { maxMemoryPages: 16 }).bytes).tables.map(
        (t) => t.maximum,
      );
      ctx.observe('rewritten_table_maxima', maxima);
      expect(maxima[1] === 10, `table 1 declared a maximum of 10, the rewrite gave ${JSON.stringify(maxima[1])}`);
    },
  },
];
