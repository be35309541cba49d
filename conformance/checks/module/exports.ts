// Conformance checks of module shape: exports. Missing or mistyped ABI exports and names under the
// reserved prefix are refused at load, every violation at once; extra exports are ignored, and a
// trapping guest's helix_panic explains the trap without holding the call.
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { abiPrelude, echoModule } from '../../kit/guest-wat.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';

/** The checks of this file, in the report's order. */
export const exportChecks: readonly Check[] = [
  {
    id: 'module.missing-and-mistyped-exports',
    title: 'Missing memory, mistyped alloc and dealloc, absent entrypoint: every violation reported at once',
    category: 'module',
    abi: ['ABI-EXPORT-001', 'ABI-EXPORT-002', 'ABI-EXPORT-003', 'ABI-EXPORT-004', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID listing, in one refusal, ABI-EXPORT-001 (no memory export), -002 (alloc (i64) -> (i64)), -003 (dealloc missing), -004 (execute (i32) -> (i32)) and -004 for a manifest entrypoint the module lacks',
    packs: (engine) => [
      {
        id: 'module.shapeless',
        module: `(module (memory 1) (export "mem" (memory 0))
  (func (export "alloc") (param i64) (result i64) (i64.const 0))
  (func (export "execute") (param i32) (result i32) (i32.const 0)))`,
      },
      {
        id: 'module.no_entry',
        module: engine.guests.bare(),
        manifest: { entrypoint: 'main' },
      },
      {
        id: 'module.memory_is_function',
        module: `(module (memory 1)
  (func (export "memory"))
  (global $bump (mut i32) (i32.const 4096))
  (func (export "alloc") (param i32) (result i32) (i32.const 0))
  (func (export "dealloc") (param i32 i32))
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the missing memory export', /module_shapeless/, /ABI-EXPORT-001/);
      expectLine(lines, 'for the mistyped alloc', /module_shapeless/, /ABI-EXPORT-002/, /\(i64\) -> \(i64\)/);
      expectLine(lines, 'for the missing dealloc', /module_shapeless/, /ABI-EXPORT-003/, /dealloc/);
      expectLine(lines, 'for the mistyped execute', /module_shapeless/, /ABI-EXPORT-004/, /\(i32\) -> \(i32\)/);
      expectLine(lines, 'for the entrypoint the module lacks', /module_no_entry/, /entrypoint: ABI-EXPORT-004/, /"main"/);
      expectLine(lines, 'for "memory" exported as a function', /module_memory_is_function/, /ABI-EXPORT-001/);
      ctx.observe('violation_count', lines.length);
    },
  },
  {
    id: 'module.reserved-and-panic-exports',
    title: 'Exports under the reserved __helix_ prefix and a mistyped helix_panic are refused, on both ABIs',
    category: 'module',
    abi: ['ABI-EXPORT-006', 'ABI-EXPORT-007'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID naming ABI-EXPORT-007 for an export named __helix_fuel (a name the instrumenter uses) and, on helix/v1, ABI-EXPORT-006 for helix_panic exported as (i32) -> (i32)',
    packs: (engine) => [
      engine.pack(
        'module.reserved',
        engine.guests.bare('', { extra: '(global (export "__helix_fuel") (mut i64) (i64.const 0)) (func (export "__helix_start"))' }),
      ),
      // helix_panic is an export of helix/v1 alone (ABI-EXPORT-006).
      ...(engine.panicExport
        ? [
            engine.pack(
              'module.bad_panic',
              engine.guests.bare('', { extra: '(func (export "helix_panic") (param i32) (result i32) (i32.const 0))' }),
            ),
          ]
        : []),
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for __helix_fuel', /ABI-EXPORT-007/, /"__helix_fuel"/);
      expectLine(lines, 'for __helix_start', /ABI-EXPORT-007/, /"__helix_start"/);
      if (ctx.engine.panicExport) expectLine(lines, 'for the mistyped helix_panic', /module_bad_panic/, /ABI-EXPORT-006/, /helix_panic/);
    },
  },
  {
    id: 'module.extra-exports-and-panic',
    title:
      "Extra exports are ignored; a trapping guest's helix_panic message lands in the error, and a looping helix_panic cannot hold the call",
    category: 'module',
    abi: ['ABI-EXPORT-005', 'ABI-EXPORT-006'],
    engines: ['helix'],
    expected:
      'the module with extra exports (functions, a global, a table) loads and serves; a trap is S-TOOL-TRAP with details.panic the exported message, a 5000-byte message cut to at most 1024 bytes; a helix_panic that loops forever still ends the call with S-TOOL-TRAP promptly (small fuel allowance), without a panic message',
    packs: () => [
      {
        id: 'module.panicky',
        module: `(module ${abiPrelude()}
  (data (i32.const 64) "the guest gave up: bad input")
  (table (export "tbl") 2 funcref)
  (global (export "answer") i32 (i32.const 42))
  (func (export "extra_entry") (result i32) (i32.const 7))
  (func (export "helix_panic") (result i64) (i64.or (i64.shl (i64.const 64) (i64.const 32)) (i64.const 28)))
  (func (export "execute") (param i32 i32) (result i64) unreachable))`,
      },
      {
        id: 'module.panic_loops',
        module: `(module ${abiPrelude()}
  (func (export "helix_panic") (result i64) (loop $l (br $l)) (i64.const 0))
  (func (export "execute") (param i32 i32) (result i64) unreachable))`,
        manifest: { limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000 }, timeoutMs: 20_000 },
      },
      {
        id: 'module.panic_long',
        module: `(module ${abiPrelude()}
  (data (i32.const 8192) "${'x'.repeat(5000)}")
  (func (export "helix_panic") (result i64) (i64.or (i64.shl (i64.const 8192) (i64.const 32)) (i64.const 5000)))
  (func (export "execute") (param i32 i32) (result i64) unreachable))`,
      },
      {
        id: 'module.extras_ok',
        module: echoModule(
          '(func (export "not_called") (result i32) unreachable) (global (export "flag") i32 (i32.const 1)) (table (export "fns") 1 funcref)',
        ),
      },
    ],
    async run(ctx) {
      const ok = await ctx.call('module.extras_ok', { hello: 'extra exports' });
      const out = expectSuccess(ok);
      expect(out.hello === 'extra exports', `the echo with extra exports answered ${JSON.stringify(out)}`);
      const r = await ctx.call('module.panicky', {});
      expectOutcome(r, 'terminal_error', 'S-TOOL-TRAP');
      expect(r.error?.details?.panic === 'the guest gave up: bad input', `details.panic is ${JSON.stringify(r.error?.details?.panic)}`);
      ctx.observe('panic_details', r.error?.details);
      const long = await ctx.call('module.panic_long', {});
      expectOutcome(long, 'terminal_error', 'S-TOOL-TRAP');
      const text = long.error?.details?.panic;
      expect(
        typeof text === 'string' && text.length > 0 && text.length <= 1024,
        `a 5000-byte panic message gave details.panic of ${typeof text === 'string' ? text.length : JSON.stringify(text)} characters, not at most 1024`,
      );
      ctx.observe('long_panic_chars', (text as string).length);
      const t0 = performance.now();
      const loops = await ctx.call('module.panic_loops', {});
      const ms = performance.now() - t0;
      expectOutcome(loops, 'terminal_error', 'S-TOOL-TRAP');
      expect(
        loops.error?.details?.panic === undefined,
        `a looping helix_panic produced a message: ${JSON.stringify(loops.error?.details?.panic)}`,
      );
      expect(ms < 10_000, `the call with a looping helix_panic took ${Math.round(ms)} ms`);
      ctx.observe('looping_panic_ms', Math.round(ms));
    },
  },
];
