// Conformance checks: CPU. A guest that never stops must be stopped by fuel or the deadline,
// whatever shape of code it hides its loop in: plain loops, recursion, tail calls, a start
// function, SIMD, bulk memory of huge lengths, long straight-line bodies behind call chains, a
// blocking atomic wait. Fuel must follow the cost model exactly and be the same for the same
// call; budgets that grow with the data must grow as the manifest says and stop at the policy's
// ceilings; input and output past their bounds are refused.
import { isHelixError, MIB, type ResponseEnvelope } from '../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check, type CheckContext, type EngineAdapter, type PackSpec } from '../check.js';
import { checkDefaultPolicy } from '../runner.js';
import { runCli } from '../kit/c-cpu-proc.js';
import { extismWat } from '../kit/extism-wat.js';
import { abiPrelude, watString } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';
import { gzipSync } from 'node:zlib';
import path from 'node:path';

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

const FUEL = 5_000_000;
const OK = '{"status":"ok","output":{}}';
const SPIN = '(loop $l (br $l))';

interface BodyOptions {
  /** Locals of the entry function, declared first. */
  readonly locals?: string;
  /** Module fields (functions, a start, data). */
  readonly extra?: string;
  readonly pages?: number;
}

/** A helix/v1 module whose execute runs `body` (leaving nothing) and answers {} as its output. */
function helixRun(body: string, o: BodyOptions = {}): string {
  return `(module ${abiPrelude({ pages: o.pages ?? 1 })}
  (data (i32.const 16) "${watString(OK)}")
  ${o.extra ?? ''}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64) ${o.locals ?? ''}
    ${body}
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const ${OK.length}))))`;
}

/** An extism/v1 plugin whose run runs `body` (leaving nothing) and sets {} as its output. */
function extismRun(body: string, o: BodyOptions = {}): string {
  return extismWat(`${o.locals ?? ''} ${body} (call $output_set (call $emit (i32.const 0) (i32.const 2)) (i64.const 2)) (i32.const 0)`, {
    data: '{}',
    pages: o.pages ?? 1,
    extra: o.extra ?? '',
  });
}

interface PackOptions extends BodyOptions {
  readonly limits?: Record<string, unknown>;
  readonly timeoutMs?: number;
  readonly manifest?: Record<string, unknown>;
  readonly inputSchema?: unknown;
}

/** The same body as a toolpack for the engine: helix/v1 on helix, extism/v1 on extism. */
function pack(engine: EngineAdapter, id: string, body: string, o: PackOptions = {}): PackSpec {
  const manifest = { timeoutMs: o.timeoutMs ?? 60_000, limits: { ...DEFAULT_LIMITS, ...o.limits }, ...o.manifest };
  const common = o.inputSchema === undefined ? {} : { inputSchema: o.inputSchema };
  return engine.name === 'extism'
    ? { id, module: extismRun(body, o), manifest: { abi: 'extism/v1', entrypoint: 'run', ...manifest }, ...common }
    : { id, module: helixRun(body, o), manifest, ...common };
}

const details = (r: ResponseEnvelope): Record<string, unknown> => (r.error?.details ?? {}) as Record<string, unknown>;

/** The call ends with S-TOOL-FUEL-EXHAUSTED under `limit`, having used at least the limit and at most `overshoot` more. */
function expectExhausted(r: ResponseEnvelope, limit: number, overshoot = 1000): void {
  expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
  const d = details(r);
  expect(d.fuel_limit === limit, `details.fuel_limit is ${String(d.fuel_limit)}, not the budget ${limit}`);
  expect(r.metrics.fuel_used >= limit, `fuel_used ${r.metrics.fuel_used} is below the budget ${limit}`);
  expect(r.metrics.fuel_used <= limit + overshoot, `fuel_used ${r.metrics.fuel_used} passes the budget ${limit} by more than ${overshoot}`);
}

/** A counted loop of `n` iterations costing exactly 9 units each (ABI-FUEL-002), with a free nop and drop. */
const countedLoop = (n: number, extraBody = ''): string => `
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (nop) (drop (i32.const 7))
      ${extraBody}
      (br_if $l (i32.lt_u (local.get $i) (i32.const ${n}))))`;
const LOOP_UNIT = 9;
const SIMD_STEP = '(local.set $v (i32x4.add (local.get $v) (v128.const i32x4 1 2 3 4)))';
const SIMD_UNIT = LOOP_UNIT + 4;

/** An input schema with two artifact fields and an inline string. */
const ARTIFACT_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    data: { type: 'string', 'x-helix-artifact': true },
    extra: { type: 'string', 'x-helix-artifact': true },
    pad: { type: 'string' },
    n: { type: 'integer' },
  },
};

const BASE = 1_000_000;
const RATE = 2_000_000;

/** Artifacts of 1 MiB, 3 MiB and a gzip of 1 MiB of one byte, imported into the check's store. */
async function importArtifacts(ctx: CheckContext): Promise<{ one: string; three: string; gz: string; gzSize: number }> {
  const host = await ctx.host();
  const one = (await host.artifacts.importInline(Buffer.alloc(MIB, 0x41), { label: 'one MiB' })).id;
  const three = (await host.artifacts.importInline(Buffer.alloc(3 * MIB, 0x43), { label: 'three MiB' })).id;
  const gzRecord = await host.artifacts.importInline(gzipSync(Buffer.alloc(MIB, 0x47)), { label: 'gzip' });
  expect(gzRecord.compression === 'gzip', `the gzip artifact was stored as ${String(gzRecord.compression)}`);
  return { one, three, gz: gzRecord.id, gzSize: gzRecord.size };
}

export const cpuChecks: readonly Check[] = [
  {
    id: 'cpu.infinite-loop',
    title: 'An infinite loop is stopped by fuel',
    category: 'cpu',
    abi: ['ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `terminal_error S-TOOL-FUEL-EXHAUSTED, with metrics.fuel_used at least the budget (${FUEL}) and the same for the same call`,
    packs: (engine) => [
      engine.name === 'extism'
        ? {
            id: 'cpu.spin',
            module: extismWat('(loop $l (br $l)) (i32.const 0)'),
            manifest: { abi: 'extism/v1', entrypoint: 'run', timeoutMs: 60_000, limits: { ...DEFAULT_LIMITS, fuel: FUEL } },
          }
        : {
            id: 'cpu.spin',
            module: `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (loop $l (br $l)) (i64.const 0)))`,
            manifest: { timeoutMs: 60_000, limits: { ...DEFAULT_LIMITS, fuel: FUEL } },
          },
    ],
    async run(ctx) {
      const first = await ctx.call('cpu.spin', { n: 1 });
      expectOutcome(first, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(first.metrics.fuel_used >= FUEL, `fuel_used ${first.metrics.fuel_used} is below the budget ${FUEL}`);
      const second = await ctx.call('cpu.spin', { n: 2 });
      expectOutcome(second, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(
        second.metrics.fuel_used === first.metrics.fuel_used,
        `fuel_used differs between identical loops: ${first.metrics.fuel_used} and ${second.metrics.fuel_used}`,
      );
      ctx.observe('fuel_used', first.metrics.fuel_used);
    },
  },
  {
    id: 'cpu.recursion',
    title: 'Unbounded recursion is stopped: by fuel at a function entry when the budget is small, by a stack-overflow fault when it is not',
    category: 'cpu',
    abi: ['ABI-FUEL-004', 'ABI-TRAP-001'],
    engines: ['helix', 'extism'],
    expected:
      'with a budget of 40,000 units: terminal_error S-TOOL-FUEL-EXHAUSTED before the stack overflows (the counter is checked at the entry of every function that calls); with the default budget: terminal_error S-TOOL-STACK-OVERFLOW (or S-TOOL-FUEL-EXHAUSTED), never a host crash, and the host serves on',
    packs: (engine) => {
      const extra = '(func $r (param $d i32) (result i32) (call $r (i32.add (local.get $d) (i32.const 1))))';
      return [
        pack(engine, 'cpu.recurse_small', '(drop (call $r (i32.const 0)))', { extra, limits: { fuel: 40_000 } }),
        pack(engine, 'cpu.recurse_deep', '(drop (call $r (i32.const 0)))', { extra, limits: { fuel: 2_000_000_000 } }),
      ];
    },
    async run(ctx) {
      const small = await ctx.call('cpu.recurse_small', { n: 1 });
      expectExhausted(small, 40_000);
      const deep = await ctx.call('cpu.recurse_deep', { n: 1 });
      expect(deep.status === 'terminal_error', `deep recursion ended ${deep.status}, not terminal_error`);
      expect(
        deep.error?.code === 'S-TOOL-STACK-OVERFLOW' || deep.error?.code === 'S-TOOL-FUEL-EXHAUSTED',
        `deep recursion ended ${deep.error?.code}: ${deep.error?.message}`,
      );
      ctx.observe('small_budget', { code: small.error?.code, fuel_used: small.metrics.fuel_used });
      ctx.observe('large_budget', {
        code: deep.error?.code,
        message: deep.error?.message,
        phase: details(deep).phase,
        fuel_used: deep.metrics.fuel_used,
      });
    },
  },
  {
    id: 'cpu.tail-call-loop',
    title: 'A return_call loop, which never grows the stack and has no loop instruction, is stopped by fuel',
    category: 'cpu',
    abi: ['ABI-FUEL-001', 'ABI-FUEL-004'],
    engines: ['helix', 'extism'],
    expected: `terminal_error S-TOOL-FUEL-EXHAUSTED at the budget (${FUEL}), fuel_used within 1,000 units past it`,
    packs: (engine) => [
      pack(engine, 'cpu.tail', '(drop (call $t (i32.const 0)))', {
        extra: '(func $t (param $n i32) (result i32) (return_call $t (i32.add (local.get $n) (i32.const 1))))',
        limits: { fuel: FUEL },
      }),
    ],
    async run(ctx) {
      const r = await ctx.call('cpu.tail', { n: 1 });
      expectExhausted(r, FUEL);
      ctx.observe('fuel_used', r.metrics.fuel_used);
      ctx.observe('duration_ms', r.metrics.duration_ms);
    },
  },
  {
    id: 'cpu.start-function-spin',
    title: 'A start function that never returns is metered and stopped by fuel before any call',
    category: 'cpu',
    abi: ['ABI-CALL-002', 'ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `the host loads the module (its start does not run at load) and every call ends terminal_error S-TOOL-FUEL-EXHAUSTED at the budget (${FUEL}), the start function's fuel counted; the host serves on`,
    packs: (engine) => [pack(engine, 'cpu.start_spin', '', { extra: `(func $s ${SPIN}) (start $s)`, limits: { fuel: FUEL } })],
    async run(ctx) {
      const r = await ctx.call('cpu.start_spin', { n: 1 });
      expectExhausted(r, FUEL);
      const again = await ctx.call('cpu.start_spin', { n: 2 });
      expectExhausted(again, FUEL);
      ctx.observe('phase', details(r).phase);
      ctx.observe('fuel_used', r.metrics.fuel_used);
    },
  },
  {
    id: 'cpu.simd-loop',
    title: 'A SIMD loop is metered at one unit per v128 instruction and stopped by fuel when endless',
    category: 'cpu',
    abi: ['ABI-FUEL-001', 'ABI-FUEL-002'],
    engines: ['helix', 'extism'],
    expected: `an endless i32x4 loop ends S-TOOL-FUEL-EXHAUSTED at ${FUEL}; bounded loops of 1,000 and 2,000 iterations (${SIMD_UNIT} units each, v128.const and i32x4.add one unit each) succeed and differ by exactly ${SIMD_UNIT * 1000} units`,
    packs: (engine) => [
      pack(engine, 'cpu.simd_spin', `(loop $l ${SIMD_STEP} (br $l))`, { locals: '(local $v v128)', limits: { fuel: FUEL } }),
      pack(engine, 'cpu.simd_1000', countedLoop(1000, SIMD_STEP), { locals: '(local $i i32) (local $v v128)' }),
      pack(engine, 'cpu.simd_2000', countedLoop(2000, SIMD_STEP), { locals: '(local $i i32) (local $v v128)' }),
    ],
    async run(ctx) {
      expectExhausted(await ctx.call('cpu.simd_spin', { n: 1 }), FUEL);
      const a = await ctx.call('cpu.simd_1000', { n: 1 });
      const b = await ctx.call('cpu.simd_2000', { n: 1 });
      expectSuccess(a);
      expectSuccess(b);
      const step = b.metrics.fuel_used - a.metrics.fuel_used;
      ctx.observe('fuel_1000', a.metrics.fuel_used);
      ctx.observe('fuel_2000', b.metrics.fuel_used);
      expect(step === SIMD_UNIT * 1000, `1,000 more SIMD iterations cost ${step} units, not ${SIMD_UNIT * 1000}`);
    },
  },
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
  {
    id: 'cpu.atomic-wait',
    title:
      'memory.atomic.wait32 on shared memory with no timeout, which fuel cannot interrupt, is ended by the deadline (or refused at load)',
    category: 'cpu',
    abi: ['ABI-DEADLINE-001'],
    engines: ['helix', 'extism'],
    expected:
      'either the host refuses the shared-memory module at load with P-PRECOND-MANIFEST-INVALID, or the call ends R-TIMEOUT-001 (retryable_error, a pure tool) within its 500 ms deadline plus a generous 5 s, the worker replaced, and the host serves on',
    packs: (engine) => {
      const wait = '(drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))';
      const manifest = { timeoutMs: 500, limits: { ...DEFAULT_LIMITS } };
      if (engine.name === 'extism') {
        return [
          {
            id: 'cpu.atomic_wait',
            module: `(module
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1 1 shared)
  (func (export "run") (result i32) ${wait} (i32.const 0)))`,
            manifest: { abi: 'extism/v1', entrypoint: 'run', ...manifest },
          },
        ];
      }
      return [
        {
          id: 'cpu.atomic_wait',
          module: `(module
  (memory (export "memory") 1 16 shared)
  (global $bump (mut i32) (i32.const 4096))
  (func (export "alloc") (param $n i32) (result i32) (global.get $bump))
  (func (export "dealloc") (param i32 i32))
  (func (export "execute") (param i32 i32) (result i64) ${wait} (i64.const 0)))`,
          manifest,
        },
      ];
    },
    async run(ctx) {
      try {
        await ctx.host();
      } catch (e) {
        if (!isHelixError(e)) throw e;
        ctx.note(`the loader refused the shared-memory module: ${e.code}: ${e.message} ${show(e.details, 500)}`);
        expect(e.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${e.code}, not P-PRECOND-MANIFEST-INVALID`);
        return;
      }
      const t0 = performance.now();
      const r = await ctx.call('cpu.atomic_wait', { n: 1 });
      const took = performance.now() - t0;
      ctx.observe('outcome', { status: r.status, code: r.error?.code, details: r.error?.details, took_ms: Math.round(took) });
      expectOutcome(r, 'retryable_error', 'R-TIMEOUT-001');
      expect(took < 500 + 5000, `the call took ${Math.round(took)} ms against a 500 ms deadline`);
    },
  },
  {
    id: 'cpu.deadline-huge-fuel',
    title: 'A loop with a budget of ten billion units is ended by the deadline; the request may lower the deadline, never raise it',
    category: 'cpu',
    abi: ['ABI-DEADLINE-001'],
    engines: ['helix', 'extism'],
    expected:
      'R-TIMEOUT-001 retryable_error (pure tool) with details.timeout_ms 400 (the manifest timeoutMs), at 150 when the request asks timeout_ms 150, still 400 when it asks 60,000; a deadline_unix_ms 300 ms ahead ends it too; each within its deadline plus 5 s',
    packs: (engine) => [pack(engine, 'cpu.long', SPIN, { timeoutMs: 400, limits: { fuel: 10_000_000_000 } })],
    async run(ctx) {
      const timed = async (n: number, constraints: Record<string, unknown>, bound: number): Promise<ResponseEnvelope> => {
        const t0 = performance.now();
        const r = await ctx.call('cpu.long', { n }, { request: { constraints } });
        const took = performance.now() - t0;
        expectOutcome(r, 'retryable_error', 'R-TIMEOUT-001');
        expect(took >= bound * 0.8, `timed out after ${Math.round(took)} ms, before its ${bound} ms deadline`);
        expect(took < bound + 5000, `took ${Math.round(took)} ms against a ${bound} ms deadline`);
        ctx.observe(`n${n}`, { constraints, took_ms: Math.round(took), timeout_ms: details(r).timeout_ms, fuel_used: r.metrics.fuel_used });
        return r;
      };
      const base = await timed(1, {}, 400);
      expect(details(base).timeout_ms === 400, `details.timeout_ms ${String(details(base).timeout_ms)}, not 400`);
      const lowered = await timed(2, { timeout_ms: 150 }, 150);
      expect(details(lowered).timeout_ms === 150, `a request timeout_ms of 150 ran under ${String(details(lowered).timeout_ms)}`);
      const raised = await timed(3, { timeout_ms: 60_000 }, 400);
      expect(
        details(raised).timeout_ms === 400,
        `a request timeout_ms of 60,000 raised the deadline to ${String(details(raised).timeout_ms)}`,
      );
      await timed(4, { deadline_unix_ms: Date.now() + 300 }, 300);
    },
  },
  {
    id: 'cpu.fuel-deterministic',
    title: 'Fuel follows the cost model to the unit and is identical for identical calls, on a fresh or a recycled instance',
    category: 'cpu',
    abi: ['ABI-FUEL-001', 'ABI-FUEL-002'],
    engines: ['helix', 'extism'],
    expected: `five calls of a 1,000-iteration loop (inputs of equal length) and the same module under another id report the same fuel_used; 1,000 more iterations of a body of ${LOOP_UNIT} charged instructions plus a free nop and drop cost exactly ${LOOP_UNIT * 1000} units`,
    packs: (engine) => [
      pack(engine, 'cpu.loop_1000', countedLoop(1000), { locals: '(local $i i32)' }),
      pack(engine, 'cpu.loop_1000_again', countedLoop(1000), { locals: '(local $i i32)' }),
      pack(engine, 'cpu.loop_2000', countedLoop(2000), { locals: '(local $i i32)' }),
    ],
    async run(ctx) {
      const fuels: number[] = [];
      for (const salt of ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']) fuels.push(expectFuel(await ctx.call('cpu.loop_1000', { salt })));
      const other = expectFuel(await ctx.call('cpu.loop_1000_again', { salt: 'ffff' }));
      const longer = expectFuel(await ctx.call('cpu.loop_2000', { salt: 'gggg' }));
      ctx.observe('fuel', { loop_1000: fuels, loop_1000_again: other, loop_2000: longer });
      expect(
        fuels.every((f) => f === fuels[0]),
        `identical calls used different fuel: ${fuels.join(', ')}`,
      );
      expect(other === fuels[0], `the same module under another id used ${other}, not ${fuels[0]}`);
      expect(longer - fuels[0]! === LOOP_UNIT * 1000, `1,000 more iterations cost ${longer - fuels[0]!} units, not ${LOOP_UNIT * 1000}`);
    },
  },
  {
    id: 'cpu.policy-fuel-ceiling',
    title: "A manifest asking for a trillion units of fuel runs under the policy's ceiling",
    category: 'cpu',
    abi: ['ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected:
      'the endless loop ends S-TOOL-FUEL-EXHAUSTED with details.fuel_limit 3,000,000 (the policy ceilings.fuel), not the manifest 1,000,000,000,000',
    policy: (_engine, env) => ({ ...checkDefaultPolicy(env), ceilings: { fuel: 3_000_000 } }),
    packs: (engine) => [pack(engine, 'cpu.greedy', SPIN, { limits: { fuel: 1_000_000_000_000 } })],
    async run(ctx) {
      const r = await ctx.call('cpu.greedy', { n: 1 });
      expectExhausted(r, 3_000_000);
      ctx.observe('fuel_limit', details(r).fuel_limit);
    },
  },
  {
    id: 'cpu.budget-per-input-mib',
    title: 'Fuel grows with the input artifacts as the manifest states: per MiB, each reference, gzip eight times, inline params nothing',
    category: 'cpu',
    abi: ['ABI-BUDGET-001', 'ABI-BUDGET-002', 'ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `an endless loop with limits.fuel ${BASE} and perInputMiB.fuel ${RATE} runs out at ${BASE} without artifacts (and with 60 KB of inline params), ${BASE + RATE} with 1 MiB, ${BASE + 3 * RATE} with 3 MiB, ${BASE + 4 * RATE} with both referenced, and base + rate x 8 x stored size of a gzip artifact, rounded up`,
    packs: (engine) => [
      pack(engine, 'cpu.scaled', SPIN, {
        limits: { fuel: BASE, perInputMiB: { fuel: RATE } },
        inputSchema: ARTIFACT_INPUT,
        timeoutMs: 60_000,
      }),
    ],
    async run(ctx) {
      const a = await importArtifacts(ctx);
      const cases: [string, Record<string, unknown>, number][] = [
        ['no artifacts', { n: 1 }, BASE],
        ['60 KB inline', { pad: 'p'.repeat(60_000) }, BASE],
        ['1 MiB', { data: a.one }, BASE + RATE],
        ['3 MiB', { data: a.three }, BASE + 3 * RATE],
        ['1 MiB + 3 MiB', { data: a.one, extra: a.three }, BASE + 4 * RATE],
        ['the same 1 MiB twice', { data: a.one, extra: a.one }, BASE + 2 * RATE],
        ['gzip', { data: a.gz }, BASE + Math.ceil((RATE * 8 * a.gzSize) / MIB)],
      ];
      const seen: Record<string, unknown> = {};
      for (const [what, input, want] of cases) {
        const r = await ctx.call('cpu.scaled', input);
        seen[what] = details(r).fuel_limit;
        expectOutcome(r, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
        expect(details(r).fuel_limit === want, `${what}: ran under ${String(details(r).fuel_limit)} units, not ${want}`);
      }
      ctx.observe('fuel_limit', seen);
      ctx.observe('gzip_stored_bytes', a.gzSize);
    },
  },
  {
    id: 'cpu.budget-ceiling',
    title: "A call whose input needs more fuel than the policy's growing ceiling allows is refused before it runs or is recorded",
    category: 'cpu',
    abi: ['ABI-BUDGET-003', 'ABI-BUDGET-004'],
    engines: ['helix', 'extism'],
    expected:
      'terminal_error A-AUTH-BUDGET-CEILING, run_id null, no run in the store, fuel_used 0; details figure fuel, input_bytes 3 MiB, needed 7,000,000, ceiling 5,000,000 (ceilings.fuel 2,000,000 + 1,000,000 per MiB), policy_field ceilings.perInputMiB.fuel; the same tool without data runs',
    policy: (_engine, env) => ({ ...checkDefaultPolicy(env), ceilings: { fuel: 2_000_000, perInputMiB: { fuel: 1_000_000 } } }),
    packs: (engine) => [
      pack(engine, 'cpu.needy', '', { limits: { fuel: BASE, perInputMiB: { fuel: RATE } }, inputSchema: ARTIFACT_INPUT }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const three = (await host.artifacts.importInline(Buffer.alloc(3 * MIB, 0x43))).id;
      const r = await ctx.call('cpu.needy', { data: three });
      expectOutcome(r, 'terminal_error', 'A-AUTH-BUDGET-CEILING');
      const d = details(r);
      ctx.observe('refusal', { message: r.error?.message, details: d, hint: r.error?.hint });
      expect(r.run_id === null, `the refused call has run id ${String(r.run_id)}`);
      expect(r.metrics.fuel_used === 0, `the refused call used ${r.metrics.fuel_used} fuel`);
      const want: Record<string, unknown> = {
        figure: 'fuel',
        input_bytes: 3 * MIB,
        needed: 7_000_000,
        base: BASE,
        per_input_mib: RATE,
        ceiling: 5_000_000,
        ceiling_base: 2_000_000,
        ceiling_per_input_mib: 1_000_000,
        policy_field: 'ceilings.perInputMiB.fuel',
      };
      for (const [k, v] of Object.entries(want))
        expect(JSON.stringify(d[k]) === JSON.stringify(v), `details.${k} is ${JSON.stringify(d[k])}, not ${JSON.stringify(v)}`);
      expect(typeof d.policy === 'string' && d.policy !== '', 'details.policy does not name the policy');
      expect(
        /7,000,000/.test(r.error!.message) && /5,000,000/.test(r.error!.message),
        `the message does not state the figure and the ceiling: ${r.error!.message}`,
      );
      const runs = host.runs.list({ toolId: 'cpu.needy' });
      expect(runs.length === 0, `the refused call left ${runs.length} run(s) in the store`);
      expectSuccess(await ctx.call('cpu.needy', { n: 1 }));
      expect(host.runs.list({ toolId: 'cpu.needy' }).length === 1, 'the call without data was not recorded as one run');
    },
  },
  {
    id: 'cpu.budget-request-lowers',
    title: 'A grown deadline is lowered by the request, never raised; `helix tools --json` shows the base figures and rates',
    category: 'cpu',
    abi: ['ABI-BUDGET-005', 'ABI-BUDGET-001', 'ABI-DEADLINE-001'],
    engines: ['helix'],
    expected:
      'an endless loop with timeoutMs 200 and perInputMiB.timeoutMs 900 ends R-TIMEOUT-001 with details.timeout_ms 1,100 on 1 MiB, 700 when the request asks 700, 1,100 when it asks 60,000; `helix tools --json` (child process) lists the tool with limits.perInputMiB {timeoutMs: 900} and a built-in with perInputMiB null',
    packs: (engine) => [
      pack(engine, 'cpu.slow', SPIN, {
        timeoutMs: 200,
        limits: { fuel: 1e10, perInputMiB: { timeoutMs: 900 } },
        inputSchema: ARTIFACT_INPUT,
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const one = (await host.artifacts.importInline(Buffer.alloc(MIB, 0x41))).id;
      const grown = await ctx.call('cpu.slow', { data: one });
      expectOutcome(grown, 'retryable_error', 'R-TIMEOUT-001');
      const lowered = await ctx.call('cpu.slow', { data: one }, { request: { constraints: { timeout_ms: 700 } } });
      const raised = await ctx.call('cpu.slow', { data: one }, { request: { constraints: { timeout_ms: 60_000 } } });
      ctx.observe('timeout_ms', {
        grown: details(grown).timeout_ms,
        lowered: details(lowered).timeout_ms,
        raised: details(raised).timeout_ms,
      });
      expect(details(grown).timeout_ms === 1100, `on 1 MiB the deadline was ${String(details(grown).timeout_ms)}, not 200 + 900`);
      expect(details(lowered).timeout_ms === 700, `the request's 700 ms gave ${String(details(lowered).timeout_ms)}`);
      expect(
        details(raised).timeout_ms === 1100,
        `the request's 60,000 ms gave ${String(details(raised).timeout_ms)}, above the grown 1,100`,
      );
      const cli = await runCli(
        ctx,
        ['tools', '--json', '--plugins', await ctx.pluginsDir(), '--policy', path.join(ctx.env.dir, 'policy.yaml')],
        path.join(ctx.env.dir, 'cli-home'),
      );
      expect(cli.code === 0, `helix tools --json exited ${cli.code}: ${cli.stderr.slice(-500)}`);
      const rows = JSON.parse(cli.stdout) as Array<{ id: string; limits?: Record<string, unknown> }>;
      const slow = rows.find((t) => t.id === 'cpu.slow');
      const builtin = rows.find((t) => t.id === 'helix.artifact_list');
      ctx.observe('tools_json', { 'cpu.slow': slow?.limits, 'helix.artifact_list': builtin?.limits });
      expect(
        JSON.stringify(slow?.limits?.perInputMiB) === JSON.stringify({ timeoutMs: 900 }),
        `helix tools --json shows perInputMiB ${JSON.stringify(slow?.limits?.perInputMiB)}`,
      );
      expect(
        builtin !== undefined && builtin.limits?.perInputMiB === null,
        `a built-in shows perInputMiB ${JSON.stringify(builtin?.limits?.perInputMiB)}, not null`,
      );
    },
  },
  {
    id: 'cpu.input-output-bounds',
    title:
      'Input past the smaller of the manifest and policy bound is refused before dispatch; output past maxOutputBytes before it is decoded',
    category: 'cpu',
    abi: ['ABI-LIMIT-001'],
    engines: ['helix', 'extism'],
    expected:
      'with manifest maxInputBytes 4,096 and policy ceilings.maxInputBytes 1,024: 1,500 bytes of input are invalid_request I-REQ-INPUT-SIZE with no run and no fuel, 600 bytes run; a module answering 100,000 bytes under maxOutputBytes 65,536 ends terminal_error S-TOOL-OUTPUT-TOO-LARGE',
    policy: (_engine, env) => ({ ...checkDefaultPolicy(env), ceilings: { maxInputBytes: 1024 } }),
    packs: (engine) => {
      const big =
        engine.name === 'extism'
          ? {
              id: 'cpu.big_output',
              module: extismWat('(call $output_set (call $alloc (i64.const 100000)) (i64.const 100000)) (i32.const 0)'),
              manifest: { abi: 'extism/v1', entrypoint: 'run', limits: { ...DEFAULT_LIMITS, maxInputBytes: 1024 } },
            }
          : {
              id: 'cpu.big_output',
              module: `(module ${abiPrelude({ pages: 4 })} (func (export "execute") (param i32 i32) (result i64) (i64.or (i64.shl (i64.const 65536) (i64.const 32)) (i64.const 100000))))`,
              manifest: { limits: { ...DEFAULT_LIMITS, maxInputBytes: 1024 } },
            };
      return [pack(engine, 'cpu.small_input', '', { limits: { maxInputBytes: 4096 } }), big];
    },
    async run(ctx) {
      const over = await ctx.call('cpu.small_input', { pad: 'x'.repeat(1500) });
      expectOutcome(over, 'invalid_request', 'I-REQ-INPUT-SIZE');
      expect(
        over.run_id === null && over.metrics.fuel_used === 0,
        `the refused input ran: run ${String(over.run_id)}, fuel ${over.metrics.fuel_used}`,
      );
      ctx.observe('over', { message: over.error?.message, details: over.error?.details });
      expectSuccess(await ctx.call('cpu.small_input', { pad: 'x'.repeat(600) }));
      const out = await ctx.call('cpu.big_output', { n: 1 });
      ctx.observe('big_output', { code: out.error?.code, message: out.error?.message, details: out.error?.details });
      expectOutcome(out, 'terminal_error', 'S-TOOL-OUTPUT-TOO-LARGE');
    },
  },
];

function expectFuel(r: ResponseEnvelope): number {
  expectSuccess(r);
  expect(r.replayed === false, 'the call was replayed, not run');
  return r.metrics.fuel_used;
}
