// Memory checks of what the engine keeps between calls: compiled variants for the memory caps
// requests ask, and instances kept for recycling, each bounded however a client varies its caps
// (ABI-ALLOC-008..011).
import { MAX_MODULE_VARIANT_BYTES, MAX_MODULE_VARIANTS } from '../../../abi/index.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { census, growProbe, ownKeys, PAGES_PER_MB } from './shared.js';

/** The checks of this file, in the report's order. */
export const variantChecks: readonly Check[] = [
  {
    id: 'memory.variants-bounded',
    title: 'Calls under 40 distinct memory caps leave at most MAX_MODULE_VARIANTS variants, and workers hold only those',
    category: 'memory',
    abi: ['ABI-ALLOC-009', 'ABI-ALLOC-010', 'ABI-ALLOC-011'],
    engines: ['helix', 'extism'],
    expected: `each call under memory_mb_limit 1..40 grows to exactly its cap (16 pages a MiB); afterwards the engine keeps at most ${MAX_MODULE_VARIANTS} variants and ${MAX_MODULE_VARIANT_BYTES} bytes, every idle worker holds only those and the tools' own, and a cap given up and asked for again is rebuilt with the same result and fuel_used`,
    packs: (engine) => [growProbe(engine, 'memory.caps', { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 1024 } })],
    async run(ctx) {
      const fuel = new Map<number, number>();
      for (let mb = 1; mb <= 40; mb++) {
        const r = await ctx.call('memory.caps', { mb }, { request: { constraints: { memory_mb_limit: mb } } });
        const out = expectSuccess(r);
        expect(out.value === mb * PAGES_PER_MB, `under ${mb} MiB the guest grew to ${JSON.stringify(out.value)} pages`);
        fuel.set(mb, r.metrics.fuel_used);
      }
      const host = await ctx.host();
      const stats = await census(ctx);
      const workers = ctx.engine.workers(stats);
      ctx.observe('variants', {
        kept: stats.variants.keys.length,
        bytes: stats.variants.bytes,
        built: stats.variants.built,
        evicted: stats.variants.evicted,
        retired: stats.retired,
      });
      ctx.observe(
        'workers',
        workers.map((w) => ({ modules: w.modules.length, instances: w.instances.length })),
      );
      expect(stats.variants.keys.length <= MAX_MODULE_VARIANTS, `the engine keeps ${stats.variants.keys.length} variants`);
      expect(stats.variants.bytes <= MAX_MODULE_VARIANT_BYTES, `the engine keeps ${stats.variants.bytes} bytes of variants`);
      expect(stats.variants.evicted >= 40 - MAX_MODULE_VARIANTS, `only ${stats.variants.evicted} variants were given up after 40 caps`);
      const held = new Set([...ownKeys(host), ...stats.variants.keys]);
      for (const [i, w] of workers.entries()) {
        const stray = w.modules.filter((k) => !held.has(k));
        expect(stray.length === 0, `worker ${i} holds ${stray.length} variants the engine gave up`);
      }
      for (const mb of [1, 2, 3]) {
        const r = await ctx.call('memory.caps', { mb, again: true }, { request: { constraints: { memory_mb_limit: mb } } });
        const out = expectSuccess(r);
        expect(
          out.value === mb * PAGES_PER_MB && r.metrics.fuel_used === fuel.get(mb),
          `the rebuilt variant for ${mb} MiB answered ${JSON.stringify(out.value)} with fuel ${r.metrics.fuel_used} (was ${fuel.get(mb)})`,
        );
      }
    },
  },
  {
    id: 'memory.kept-instances',
    title: 'A client varying memory_mb_limit on every call cannot make a worker keep an instance per cap',
    category: 'memory',
    abi: ['ABI-ALLOC-008'],
    engines: ['helix', 'extism'],
    expected:
      'after 24 calls of a 64-page echo module under distinct caps (4 to 27 MiB), every idle worker keeps at most one recyclable instance of the module, and each call answered its own input',
    packs: (engine) => [
      engine.pack('memory.echo64', engine.guests.echo({ pages: 64 }), { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 1024 } }),
    ],
    async run(ctx) {
      for (let i = 0; i < 24; i++) {
        const r = await ctx.call('memory.echo64', { i }, { request: { constraints: { memory_mb_limit: 4 + i } } });
        const out = expectSuccess(r);
        expect(out.i === i, `call ${i} answered ${JSON.stringify(out)}`);
      }
      const stats = await census(ctx);
      const workers = ctx.engine.workers(stats);
      const host = await ctx.host();
      const digest = host.tools().find((t) => t.id === 'memory.echo64')!.moduleDigest!;
      const kept = workers.map((w) => w.instances.filter((k) => k.startsWith(`${digest}:`)).length);
      ctx.observe('instances_per_worker', kept);
      expect(workers.length > 0, 'no idle worker answered the census');
      expect(
        kept.every((n) => n <= 1),
        `a worker keeps ${Math.max(...kept)} instances of the module`,
      );
    },
  },
];
