// Conformance checks: memory. What a module can make the host allocate (linear memory, tables,
// module bytes, declared counts, compiled variants and kept instances) must stay within the
// ABI's bounds, whether the module declares it up front, grows into it or asks per request.
import { statSync } from 'node:fs';
import path from 'node:path';
import { MAX_MODULE_BYTES, MAX_MODULE_VARIANT_BYTES, MAX_MODULE_VARIANTS, MAX_TABLE_ELEMENTS } from '../../abi/index.js';
import type { EngineStats } from '../../host/2-sandbox/engine/engine.js';
import type { Host } from '../../host/5-host/host.js';
import { decodeModule, instrumentModule } from '../../host/2-sandbox/wasm/index.js';
import { expect, expectOutcome, expectSuccess, type Check, type CheckContext, type EngineAdapter, type PackSpec } from '../check.js';
import { checkDefaultPolicy } from '../runner.js';
import { extismWat } from '../kit/extism-wat.js';
import { abiPrelude, echoModule, numberResultModule } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';
import { wat2wasm } from '../kit/wat.js';

const PAGES_PER_MB = 16;
const EXTISM = { abi: 'extism/v1', entrypoint: 'run' } as const;

/** The refusal's violation lines, observed; fails unless the code is P-PRECOND-MANIFEST-INVALID. */
async function refusedWith(ctx: CheckContext): Promise<string[]> {
  const refusal = await ctx.refusedStart();
  expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID: ${refusal.message}`);
  const v = refusal.details.violations;
  const lines = Array.isArray(v) ? v.map(String) : [];
  ctx.observe(
    'violations',
    lines.map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l)),
  );
  return lines;
}

function expectLine(lines: readonly string[], what: string, ...patterns: RegExp[]): void {
  expect(
    lines.some((l) => patterns.every((p) => p.test(l))),
    `no violation ${what} (${patterns.map(String).join(', ')}) among: ${JSON.stringify(lines).slice(0, 3000)}`,
  );
}

/**
 * An extism/v1 plugin whose `run` computes an i32 with `body` (its own `locals` first) and
 * outputs {"value":N}; `extra` module fields (tables, memories, functions).
 */
function extismNumber(body: string, opts: { locals?: string; extra?: string; pages?: number } = {}): string {
  return extismWat(
    `(local $n i32) (local $len i32) (local $i i32) ${opts.locals ?? ''}
    ${body}
    (local.set $n)
    (local.set $i (local.get $n))
    (loop $count (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (local.set $i (i32.div_u (local.get $i) (i32.const 10))) (br_if $count (local.get $i)))
    (local.set $i (local.get $len))
    (loop $digit (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (i32.const 9) (local.get $i)) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10))) (br_if $digit (local.get $i)))
    (i32.store8 (i32.add (i32.const 9) (local.get $len)) (i32.const 125))
    (local.set $len (i32.add (local.get $len) (i32.const 10)))
    (call $output_set (call $emit (i32.const 0) (local.get $len)) (i64.extend_i32_u (local.get $len)))
    (i32.const 0)`,
    {
      data: '{\\"value\\":',
      ...(opts.extra === undefined ? {} : { extra: opts.extra }),
      ...(opts.pages === undefined ? {} : { pages: opts.pages }),
    },
  );
}

/** Grows memory a page at a time until refused; leaves the page count (i32). */
const GROW_I32 = '(block $b (loop $l (br_if $b (i32.eq (memory.grow (i32.const 1)) (i32.const -1))) (br $l))) (memory.size)';

/** A tool, per engine, that grows its memory until refused and answers {"value": pages}. */
function growProbe(engine: EngineAdapter, id: string, manifest: Record<string, unknown>, pages = 1): PackSpec {
  return engine.name === 'extism'
    ? { id, module: extismNumber(GROW_I32, { pages }), manifest: { ...EXTISM, ...manifest } }
    : { id, module: numberResultModule(`${GROW_I32} (i64.extend_i32_u)`, { pages, maxPages: 65536 }), manifest };
}

/**
 * WAT that grows tables 0..count-1 in halving steps from 2^20 until no step fits, then leaves
 * the sum of their sizes (i32); needs i32 locals $d and $sum.
 */
function growTables(count: number): string {
  const grow = (t: number): string => `
    (local.set $d (i32.const 1048576))
    (block $full${t} (loop $step${t}
      (if (i32.eq (table.grow ${t} (ref.null func) (local.get $d)) (i32.const -1))
        (then (local.set $d (i32.shr_u (local.get $d) (i32.const 1))) (br_if $full${t} (i32.eqz (local.get $d)))))
      (br $step${t})))
    (local.set $sum (i32.add (local.get $sum) (table.size ${t})))`;
  return `${Array.from({ length: count }, (_, t) => grow(t)).join('')} (local.get $sum)`;
}

function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/** 100,000 mutable globals: within V8's limit of globals, but one added export each after instrumentation. */
const MANY_GLOBALS = '(global (mut i32) (i32.const 0))'.repeat(100_000);

const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const section = (id: number, content: readonly number[]): number[] => [id, ...leb(content.length), ...content];

/** The engine's census, after a well-behaved call so a worker is idle to answer it. */
async function census(ctx: CheckContext): Promise<EngineStats> {
  const host = await ctx.host();
  return host.engineStats();
}

/** The keys (digest:cap) of the tools' own variants, which the loader made and keeps. */
function ownKeys(host: Host): Set<string> {
  return new Set(host.tools().flatMap((t) => (t.kind === 'wasm' ? [`${t.moduleDigest}:${t.limits.maxMemoryPages}`] : [])));
}

export const memoryChecks: readonly Check[] = [
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
      if (engine.name === 'extism') {
        return [
          { id: 'memory.big_start', module: extismWat('(i32.const 0)', { pages: 17 }), manifest: { ...EXTISM, ...cap16 } },
          {
            id: 'memory.two_tens',
            module: extismWat('(i32.const 0)', { pages: 10, extra: '(memory $second 10)' }),
            manifest: { ...EXTISM, ...cap16 },
          },
          {
            id: 'memory.over_policy',
            module: extismWat('(i32.const 0)', { pages: 2000 }),
            manifest: { ...EXTISM, limits: { ...DEFAULT_LIMITS, maxMemoryPages: 65536 } },
          },
        ];
      }
      const ok = '(func (export "execute") (param i32 i32) (result i64) (i64.const 0))';
      return [
        { id: 'memory.big_start', module: `(module ${abiPrelude({ pages: 17 })} ${ok})`, manifest: cap16 },
        { id: 'memory.two_tens', module: `(module ${abiPrelude({ pages: 10 })} (memory $second 10) ${ok})`, manifest: cap16 },
        {
          id: 'memory.over_policy',
          module: `(module ${abiPrelude({ pages: 2000 })} ${ok})`,
          manifest: { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 65536 } },
        },
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
      const trapper =
        engine.name === 'extism'
          ? {
              id: 'memory.grow_trap',
              module: extismWat('(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable'),
              manifest: { ...EXTISM, limits },
            }
          : {
              id: 'memory.grow_trap',
              module: `(module ${abiPrelude({ maxPages: 65536 })} (func (export "execute") (param i32 i32) (result i64) (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable))`,
              manifest: { limits },
            };
      return [
        growProbe(engine, 'memory.grow', { limits }),
        growProbe(engine, 'memory.grow24', { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 24 } }),
        trapper,
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
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'memory.three',
            module: extismWat('(i32.const 0)', { extra: '(memory $b 1) (memory $c 1)' }),
            manifest: { ...EXTISM, limits: { ...DEFAULT_LIMITS, maxMemoryPages: 16 } },
          }
        : {
            id: 'memory.three',
            module: `(module ${abiPrelude()} (memory $b 1) (memory $c 1) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
            manifest: { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 16 } },
          },
    ],
    async run(ctx) {
      const source =
        ctx.engine.name === 'extism'
          ? extismWat('(i32.const 0)', { extra: '(memory $b 1) (memory $c 1)' })
          : `(module ${abiPrelude()} (memory $b 1) (memory $c 1) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`;
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
  {
    id: 'memory.module-size-ceiling',
    title: 'A module over 32 MiB is refused before it is decoded; a huge data segment past its memory never runs',
    category: 'memory',
    abi: ['ABI-ALLOC-005', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected: `a valid module padded past MAX_MODULE_BYTES (${MAX_MODULE_BYTES}) by a custom section is refused at load (P-PRECOND-MANIFEST-INVALID, ABI-ALLOC-005 naming its size and the bound) within seconds, as the only violation`,
    async packs(engine) {
      const small = await wat2wasm(engine.name === 'extism' ? extismWat('(i32.const 0)') : echoModule());
      const payload = MAX_MODULE_BYTES - small.length;
      const custom = [0, ...leb(payload + 2), 1, 0x78];
      const huge = new Uint8Array(small.length + custom.length + payload);
      huge.set(small);
      huge.set(custom, small.length);
      return [{ id: 'memory.huge', module: huge, manifest: engine.name === 'extism' ? EXTISM : {} }];
    },
    async run(ctx) {
      await ctx.pluginsDir();
      const before = process.memoryUsage().rss;
      const t0 = performance.now();
      const lines = await refusedWith(ctx);
      const ms = performance.now() - t0;
      ctx.observe('refusal_ms', Math.round(ms));
      const size = statSync(path.join(await ctx.pluginsDir(), 'memory.huge', 'tool.wasm')).size;
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
      return [
        engine.name === 'extism'
          ? { id: 'memory.segment', module: extismWat('(i32.const 0)', { extra: segment }), manifest: EXTISM }
          : {
              id: 'memory.segment',
              module: `(module ${abiPrelude()} ${segment} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
            },
      ];
    },
    async run(ctx) {
      if (ctx.engine.name === 'extism') {
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
  {
    id: 'memory.declared-tables',
    title: 'Tables declared past MAX_TABLE_ELEMENTS, alone or together, are refused at load, naming the table',
    category: 'memory',
    abi: ['ABI-ALLOC-002', 'ABI-ALLOC-001', 'ABI-ALLOC-007'],
    engines: ['helix', 'extism'],
    expected: `P-PRECOND-MANIFEST-INVALID: ABI-ALLOC-002 "table 0 starts at 10000000 elements, above the ceiling of ${MAX_TABLE_ELEMENTS}" for three tables of 10 million, and "table 1 starts at 600000 elements (1200000 with the tables before it)" for two of 600,000; peak host memory stays far below the 800 MB the tables would take`,
    packs: (engine) => {
      const tables = (n: number, size: number): string => Array.from({ length: n }, () => `(table ${size} funcref)`).join(' ');
      const mod = (extra: string): string =>
        engine.name === 'extism'
          ? extismWat('(i32.const 0)', { extra })
          : `(module ${abiPrelude()} ${extra} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`;
      const manifest = engine.name === 'extism' ? EXTISM : {};
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
    packs: (engine) => {
      const tables = '(table 0 funcref) (table 0 10 funcref) (table 0 funcref)';
      const locals = '(local $d i32) (local $sum i32)';
      return [
        engine.name === 'extism'
          ? {
              id: 'memory.tables_grow',
              module: extismNumber(growTables(3), { locals, extra: tables }),
              manifest: { ...EXTISM, limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000 }, timeoutMs: 30_000 },
            }
          : {
              id: 'memory.tables_grow',
              module: numberResultModule(`${growTables(3)} (i64.extend_i32_u)`, { extra: tables, locals }),
              manifest: { limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000 }, timeoutMs: 30_000 },
            },
      ];
    },
    async run(ctx) {
      const r = await ctx.call('memory.tables_grow', {});
      const out = expectSuccess(r);
      expect(out.value === MAX_TABLE_ELEMENTS, `the tables hold ${JSON.stringify(out.value)} elements together, not ${MAX_TABLE_ELEMENTS}`);
      ctx.observe('elements', out.value);
      // The same rewrite the host applied: table 1 keeps its declared maximum of 10.
      const source =
        ctx.engine.name === 'extism'
          ? extismNumber(growTables(3), {
              locals: '(local $d i32) (local $sum i32)',
              extra: '(table 0 funcref) (table 0 10 funcref) (table 0 funcref)',
            })
          : numberResultModule(`${growTables(3)} (i64.extend_i32_u)`, {
              extra: '(table 0 funcref) (table 0 10 funcref) (table 0 funcref)',
              locals: '(local $d i32) (local $sum i32)',
            });
      const maxima = decodeModule(instrumentModule(await wat2wasm(source), { maxMemoryPages: 16 }).bytes).tables.map((t) => t.maximum);
      ctx.observe('rewritten_table_maxima', maxima);
      expect(maxima[1] === 10, `table 1 declared a maximum of 10, the rewrite gave ${JSON.stringify(maxima[1])}`);
    },
  },
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
      const manifest = engine.name === 'extism' ? EXTISM : {};
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
          module:
            engine.name === 'extism'
              ? extismWat('(i32.const 0)', { extra: MANY_GLOBALS })
              : `(module ${abiPrelude()} ${MANY_GLOBALS} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
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
      const workers = ctx.engine.name === 'extism' ? (stats.extism?.workers ?? []) : stats.workers;
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
    packs: (engine) =>
      engine.name === 'extism'
        ? [
            {
              id: 'memory.echo64',
              module: extismNumber('(i32.const 7)', { pages: 64 }),
              manifest: { ...EXTISM, limits: { ...DEFAULT_LIMITS, maxMemoryPages: 1024 } },
            },
          ]
        : [
            {
              id: 'memory.echo64',
              module: echoModule().replace('(memory (export "memory") 1)', '(memory (export "memory") 64)'),
              manifest: { limits: { ...DEFAULT_LIMITS, maxMemoryPages: 1024 } },
            },
          ],
    async run(ctx) {
      for (let i = 0; i < 24; i++) {
        const r = await ctx.call('memory.echo64', { i }, { request: { constraints: { memory_mb_limit: 4 + i } } });
        const out = expectSuccess(r);
        expect(ctx.engine.name === 'extism' ? out.value === 7 : out.i === i, `call ${i} answered ${JSON.stringify(out)}`);
      }
      const stats = await census(ctx);
      const workers = ctx.engine.name === 'extism' ? (stats.extism?.workers ?? []) : stats.workers;
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
