// Memory checks of the decoder's limits: counts a module declares past the engine's (types,
// functions, globals, exports, locals) are refused at the count, before any entry is read, and so
// is a module whose instrumented form would pass them (ABI-ALLOC-006, ABI-MODULE-001).
import type { Check } from '../../check.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { HEADER, leb, MANY_GLOBALS, section } from './shared.js';

/** The checks of this file, in the report's order. */
export const decodeLimitChecks: readonly Check[] = [
  {
    id: 'memory.decode-count-limits',
    title:
      "Declared counts past the engine's limits (types, functions, globals, exports, locals) are refused at the count, before any entry",
    category: 'memory',
    abi: ['ABI-ALLOC-006', 'ABI-MODULE-001', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID: ABI-MODULE-001 naming "1000001 types, more than the engine\'s limit of 1000000", the same for functions (1000001), globals (1000001) and exports (100001), a function declaring 50001 locals, and a module within every limit whose 100,001 mutable globals would give its instrumented form more than 100,000 exports; the count modules are a few bytes, the refusal takes milliseconds and the host grows by little',
    packs: (engine) => {
      const manifest = { ...engine.manifest };
      const voidType = section(1, [1, 0x60, 0, 0]);
      const oneFunc = section(3, [1, 0]);
      const body = [1, ...leb(50_001), 0x7f, 0x0b];
      return [
        { id: 'memory.types', module: new Uint8Array([...HEADER, ...section(1, leb(1_000_001))]), manifest },
        { id: 'memory.functions', module: new Uint8Array([...HEADER, ...voidType, ...section(3, leb(1_000_001))]), manifest },
        { id: 'memory.globals', module: new Uint8Array([...HEADER, ...section(6, leb(1_000_001))]), manifest },
        { id: 'memory.exports', module: new Uint8Array([...HEADER, ...section(7, leb(100_001))]), manifest },
        {
          id: 'memory.locals',
          module: new Uint8Array([...HEADER, ...voidType, ...oneFunc, ...section(10, [1, ...leb(body.length), ...body])]),
          manifest,
        },
        // A module that meets the ABI and V8's limits, but whose instrumented form would not: one added export per mutable global.
        {
          id: 'memory.instrumented_exports',
          module: engine.guests.bare('', { extra: MANY_GLOBALS }),
          manifest,
        },
      ];
    },
    async run(ctx) {
      const before = process.memoryUsage().rss;
      const t0 = performance.now();
      const lines = await refusedWith(ctx);
      ctx.observe('refusal_ms', Math.round(performance.now() - t0));
      ctx.observe('rss_growth_mib', Math.round((process.memoryUsage().rss - before) / 2 ** 20));
      expectLine(lines, 'for the types', /memory_types/, /ABI-MODULE-001/, /1000001 types, more than the engine's limit of 1000000/);
      expectLine(
        lines,
        'for the functions',
        /memory_functions/,
        /ABI-MODULE-001/,
        /1000001 functions, more than the engine's limit of 1000000/,
      );
      expectLine(lines, 'for the globals', /memory_globals/, /ABI-MODULE-001/, /1000001 globals, more than the engine's limit of 1000000/);
      expectLine(lines, 'for the exports', /memory_exports/, /ABI-MODULE-001/, /100001 exports, more than the engine's limit of 100000/);
      expectLine(lines, 'for the locals', /memory_locals/, /ABI-MODULE-001/, /local/, /50000/);
      expectLine(
        lines,
        'for the exports the instrumenter would add',
        /memory_instrumented_exports/,
        /ABI-MODULE-001/,
        /mutable globals/,
        /more than the engine's limit of 100000 exports/,
      );
    },
  },
];
