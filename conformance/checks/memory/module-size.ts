// Memory checks of what a module's bytes make the host hold: a module past MAX_MODULE_BYTES is
// refused before it is decoded, and a huge data segment aimed past its memory never runs
// (ABI-ALLOC-005, ABI-ALLOC-007, ABI-EXTISM-001).
import { statSync } from 'node:fs';
import path from 'node:path';
import { MAX_MODULE_BYTES } from '../../../abi/index.js';
import { expect, expectOutcome, type Check } from '../../check.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { wat2wasm } from '../../kit/wat.js';
import { leb } from './shared.js';

/** The checks of this file, in the report's order. */
export const moduleSizeChecks: readonly Check[] = [
  {
    id: 'memory.module-size-ceiling',
    title: 'A module over 32 MiB is refused before it is decoded; a huge data segment past its memory never runs',
    category: 'memory',
    abi: ['ABI-ALLOC-005', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected: `a valid module padded past MAX_MODULE_BYTES (${MAX_MODULE_BYTES}) by a custom section is refused at load (P-PRECOND-MANIFEST-INVALID, ABI-ALLOC-005 naming its size and the bound) within seconds, as the only violation`,
    async packs(engine) {
      const small = await wat2wasm(engine.guests.bare());
      const payload = MAX_MODULE_BYTES - small.length;
      const custom = [0, ...leb(payload + 2), 1, 0x78];
      const huge = new Uint8Array(small.length + custom.length + payload);
      huge.set(small);
      huge.set(custom, small.length);
      return [{ id: 'memory.huge', module: huge, manifest: { ...engine.manifest } }];
    },
    async run(ctx) {
      await ctx.toolpacksDir();
      const before = process.memoryUsage().rss;
      const t0 = performance.now();
      const lines = await refusedWith(ctx);
      const ms = performance.now() - t0;
      ctx.observe('refusal_ms', Math.round(ms));
      const size = statSync(path.join(await ctx.toolpacksDir(), 'memory.huge', 'tool.wasm')).size;
      ctx.observe('module_bytes', size);
      expectLine(
        lines,
        'naming the size and the bound',
        /memory_huge/,
        new RegExp(`${size} bytes, more than the bound of ${MAX_MODULE_BYTES} bytes`),
      );
      ctx.observe('rss_growth_mib', Math.round((process.memoryUsage().rss - before) / 2 ** 20));
      expect(lines.length === 1, `expected one violation, got ${lines.length}`);
      expect(ms < 10_000, `the refusal took ${Math.round(ms)} ms`);
    },
  },
  {
    id: 'memory.huge-data-segment',
    title: 'A 4 MiB data segment aimed past a 1-page memory never runs and the host keeps serving',
    category: 'memory',
    abi: ['ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected:
      'extism/v1: the loader refuses the plugin (ABI-EXTISM-001: it cannot be instantiated), so Extism never instantiates it in its worker; helix/v1 (no load-time instantiation in its ABI): each call ends terminal_error S-TOOL-INSTANTIATE naming the out-of-bounds segment, fuel_used 0, and the host serves the next call',
    packs: (engine) => {
      const segment = `(data (i32.const 0) "${'A'.repeat(4 * 2 ** 20)}")`;
      return [engine.pack('memory.segment', engine.guests.bare('', { extra: segment }))];
    },
    async run(ctx) {
      if (ctx.engine.loadInstantiates) {
        const lines = await refusedWith(ctx);
        expectLine(lines, 'for the segment past memory', /memory_segment/, /ABI-EXTISM-001/, /cannot be instantiated/);
        return;
      }
      for (const n of [1, 2]) {
        const r = await ctx.call('memory.segment', { n });
        expectOutcome(r, 'terminal_error', 'S-TOOL-INSTANTIATE');
        expect(/data segment/i.test(r.error?.message ?? ''), `the error does not name the data segment: ${r.error?.message}`);
        expect(r.metrics.fuel_used === 0, `guest code ran: fuel_used ${r.metrics.fuel_used}`);
        ctx.observe(`call_${n}`, { message: r.error?.message, details: r.error?.details });
      }
    },
  },
];
