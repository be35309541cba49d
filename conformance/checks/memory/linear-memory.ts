// Memory checks of linear memory: initial pages past the cap, alone or together, a request cap
// below what a module starts with, growth stopped at the smallest cap, and several memories made
// to share the cap (ABI-MEMORY-002, ABI-MEMORY-003, ABI-ALLOC-004, ABI-ALLOC-007).
import { decodeModule, instrumentModule } from '../../../host/2-sandbox/wasm/index.js';
import { expect, expectOutcome, expectSuccess, type Check, type EngineAdapter } from '../../check.js';
import { abiPrelude } from '../../kit/guest-wat.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';
import { checkDefaultPolicy } from '../../runner.js';
import { growProbe, PAGES_PER_MB } from './shared.js';

/** Three memories of one page, none with a maximum. */
const threeMemories = (engine: EngineAdapter): string => engine.guests.bare('', { extra: '(memory $b 1) (memory $c 1)' });

/** The checks of this file, in the report's order. */
export const linearMemoryChecks: readonly Check[] = [
  {
    id: 'memory.initial-over-cap',
    title: 'Memories whose initial pages pass the cap, alone or together, are refused at load',
    category: 'memory',
    abi: ['ABI-MEMORY-003', 'ABI-ALLOC-004', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID at limits.maxMemoryPages: ABI-MEMORY-003 for memory 0 of 17 pages under a cap of 16; for memory 1 of 10 pages (20 with memory 0) under a cap of 16; and for 2000 pages under a manifest cap of 65536 that the policy ceiling (1024) lowers',
    packs: (engine) => {
      const cap16 = { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 16 } };
      return [
        engine.pack('memory.big_start', engine.guests.bare('', { pages: 17 }), cap16),
        engine.pack('memory.two_tens', engine.guests.bare('', { pages: 10, extra: '(memory $second 10)' }), cap16),
        engine.pack('memory.over_policy', engine.guests.bare('', { pages: 2000 }), {
          limits: { ...DEFAULT_LIMITS, maxMemoryPages: 65536 },
        }),
      ];
    },
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(
        lines,
        'for 17 pages under 16',
        /memory_big_start/,
        /limits\.maxMemoryPages: ABI-MEMORY-003/,
        /memory 0 starts at 17 pages/,
        /cap of 16 pages/,
      );
      expectLine(
        lines,
        'for two memories of 10 under 16',
        /memory_two_tens/,
        /ABI-MEMORY-003/,
        /memory 1 starts at 10 pages \(20 with the memories before it\)/,
        /cap of 16 pages/,
      );
      expectLine(
        lines,
        'for 2000 pages under the policy ceiling',
        /memory_over_policy/,
        /ABI-MEMORY-003/,
        /2000 pages/,
        /cap of 1024 pages/,
      );
    },
  },
  {
    id: 'memory.request-cap-below-initial',
    title: "A request whose memory_mb_limit is below the module's initial memory is an invalid request, not a trap",
    category: 'memory',
    abi: ['ABI-MEMORY-003', 'ABI-ALLOC-004'],
    engines: ['helix', 'extism'],
    expected:
      'with 32 initial pages (2 MiB) under a manifest cap of 64, memory_mb_limit 1 gives invalid_request I-REQ-ENVELOPE naming /constraints/memory_mb_limit, running no guest code; memory_mb_limit 2 succeeds',
    packs: (engine) => [growProbe(engine, 'memory.starts_big', { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 64 } }, 32)],
    async run(ctx) {
      const small = await ctx.call('memory.starts_big', {}, { request: { constraints: { memory_mb_limit: 1 } } });
      expectOutcome(small, 'invalid_request', 'I-REQ-ENVELOPE');
      expect(
        JSON.stringify(small.error).includes('/constraints/memory_mb_limit'),
        `the refusal does not name /constraints/memory_mb_limit: ${JSON.stringify(small.error)}`,
      );
      expect(small.metrics.fuel_used === 0, `guest code ran: fuel_used ${small.metrics.fuel_used}`);
      ctx.observe('refusal', small.error);
      const fits = expectSuccess(await ctx.call('memory.starts_big', {}, { request: { constraints: { memory_mb_limit: 2 } } }));
      expect(fits.value === 2 * PAGES_PER_MB, `under 2 MiB the guest grew to ${JSON.stringify(fits.value)} pages, not 32`);
    },
  },
  {
    id: 'memory.grow-past-cap',
    title:
      'A guest that grows memory without end stops at the smallest of manifest, policy and request caps; a trap after it names the pages',
    category: 'memory',
    abi: ['ABI-MEMORY-002', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected:
      'under a policy ceiling of 32 pages, modules declaring a maximum of 65536 pages grow to exactly the cap: 24 pages under a manifest cap of 24, 32 (the policy) under a manifest cap of 64, 16 under memory_mb_limit 1, with metrics.memory_peak_pages the same; a guest that traps once growth fails ends S-TOOL-TRAP with details.memory_pages = details.max_memory_pages = 32',
    policy: (_engine, env) => ({ ...checkDefaultPolicy(env), ceilings: { maxMemoryPages: 32 } }),
    packs: (engine) => {
      const limits = { ...DEFAULT_LIMITS, maxMemoryPages: 64 };
      const growThenTrap = '(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable';
      return [
        growProbe(engine, 'memory.grow', { limits }),
        growProbe(engine, 'memory.grow24', { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 24 } }),
        engine.pack('memory.grow_trap', engine.guests.bare(growThenTrap, { maxPages: 65536 }), { limits }),
      ];
    },
    async run(ctx) {
      const grows = async (tool: string, pages: number, request?: Record<string, unknown>): Promise<number> => {
        const r = await ctx.call(tool, { tool, pages }, request === undefined ? {} : { request });
        const out = expectSuccess(r);
        expect(
          out.value === pages,
          `${tool}${request === undefined ? '' : ` with ${JSON.stringify(request)}`} grew to ${JSON.stringify(out.value)} pages, not ${pages}`,
        );
        expect(r.metrics.memory_peak_pages === pages, `${tool}: memory_peak_pages is ${r.metrics.memory_peak_pages}, not ${pages}`);
        return r.metrics.memory_peak_pages;
      };
      const peaks = {
        manifest_24: await grows('memory.grow24', 24),
        policy_32: await grows('memory.grow', 32),
        request_1mb: await grows('memory.grow', 16, { constraints: { memory_mb_limit: 1 } }),
      };
      const trap = await ctx.call('memory.grow_trap', {});
      expectOutcome(trap, 'terminal_error', 'S-TOOL-TRAP');
      const d = trap.error?.details ?? {};
      expect(
        d.memory_pages === 32 && d.max_memory_pages === 32,
        `trap details memory_pages ${JSON.stringify(d.memory_pages)}, max_memory_pages ${JSON.stringify(d.max_memory_pages)}`,
      );
      ctx.observe('peak_pages', { ...peaks, trap: trap.metrics.memory_peak_pages });
      ctx.observe('trap_details', d);
    },
  },
  {
    id: 'memory.several-memories',
    title: "Several memories without maxima: the rewrite makes them share the cap; Node 20's V8 refuses the module at load",
    category: 'memory',
    abi: ['ABI-ALLOC-004', 'ABI-MEMORY-002', 'ABI-MODULE-001'],
    engines: ['helix', 'extism'],
    expected:
      'three memories of 1 page, none with a maximum, under a cap of 16: the instrumented module gives them maxima that add up to 16 (a lone memory could take the whole cap), and the host refuses the module at load with ABI-MODULE-001 (the engine refuses a second memory) rather than serving it',
    packs: (engine) => [engine.pack('memory.three', threeMemories(engine), { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 16 } })],
    async run(ctx) {
      const source = threeMemories(ctx.engine);
      const rewritten = decodeModule(instrumentModule(await wat2wasm(source), { maxMemoryPages: 16 }).bytes).memories.filter(
        (m) => !m.imported,
      );
      const maxima = rewritten.map((m) => m.maximum);
      ctx.observe('rewritten_maxima', maxima);
      expect(
        maxima.every((m) => typeof m === 'number'),
        `a memory was left without a maximum: ${JSON.stringify(maxima)}`,
      );
      const sum = maxima.reduce<number>((a, m) => a + (m ?? 0), 0);
      expect(sum === 16, `the rewritten maxima add up to ${sum}, not the cap of 16`);
      // The instrumenter's rewrite of a lone memory, the same for every ABI: a helix/v1 module's.
      const lone = decodeModule(
        instrumentModule(await wat2wasm(`(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`), {
          maxMemoryPages: 16,
        }).bytes,
      ).memories[0]!;
      expect(lone.maximum === 16, `a lone memory's maximum is ${lone.maximum}, not the whole cap 16`);
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the several memories', /memory_three/, /ABI-MODULE-001/);
    },
  },
];
