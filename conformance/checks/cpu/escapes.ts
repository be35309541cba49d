// CPU checks: code that never stops, in the shapes that try to escape fuel (a plain loop, recursion,
// tail calls, a start function, SIMD): each is stopped by fuel, at the budget, the same for the
// same call (ABI-FUEL-001, ABI-FUEL-004).
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { countedLoop, details, expectExhausted, FUEL, pack, SIMD_STEP, SIMD_UNIT, SPIN } from './shared.js';

/** The checks of this file, in the report's order. */
export const escapeChecks: readonly Check[] = [
  {
    id: 'cpu.infinite-loop',
    title: 'An infinite loop is stopped by fuel',
    category: 'cpu',
    abi: ['ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `terminal_error S-TOOL-FUEL-EXHAUSTED, with metrics.fuel_used at least the budget (${FUEL}) and the same for the same call`,
    packs: (engine) => [
      engine.pack('cpu.spin', engine.guests.bare(SPIN), { timeoutMs: 60_000, limits: { ...DEFAULT_LIMITS, fuel: FUEL } }),
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
];
