// io checks of traps: a trap in every phase of a call, a stack overflow and fuel running out in
// alloc each end the call with a precise fault, and the fault says where in the guest it struck
// (ABI-TRAP-001, ABI-TRAP-002).
import { expect, expectSuccess, type Check } from '../../check.js';
import { numberResultModule } from '../../kit/guest-wat.js';
import { expectGuestFault, IO_LIMITS, ioPack } from '../../kit/io-support.js';
import { wat2wasm } from '../../kit/wat.js';
import { BOTH, numberModule } from './shared.js';

/** The checks of this file, in the report's order. */
export const trapChecks: readonly Check[] = [
  {
    id: 'io.trap-in-every-phase',
    title:
      'A trap in start, alloc, execute or dealloc, a stack overflow and fuel running out in alloc each end the call with a precise fault naming the phase',
    category: 'io',
    abi: ['ABI-TRAP-001', 'ABI-CALL-002'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-TRAP with details.phase start / alloc / execute / dealloc; S-TOOL-STACK-OVERFLOW for unbounded recursion; S-TOOL-FUEL-EXHAUSTED for a loop in alloc; a start function that spins 200k iterations is metered: its fuel counts in the call',
    packs: () => {
      const limits = { ...IO_LIMITS, fuel: 20_000_000 };
      return [
        { id: 'io.trap_start', module: numberModule('(i64.const 1)', '(func $s unreachable) (start $s)') },
        { id: 'io.trap_alloc', module: numberResultModule('(i64.const 1)', { allocHook: 'unreachable' }) },
        { id: 'io.trap_execute', module: numberModule('unreachable') },
        { id: 'io.trap_dealloc', module: numberResultModule('(i64.const 1)', { deallocHook: 'unreachable' }) },
        {
          id: 'io.overflow',
          module: numberModule(
            '(i64.extend_i32_u (call $down (i32.const 0)))',
            '(func $down (param $n i32) (result i32) (i32.add (call $down (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))',
          ),
        },
        { id: 'io.spin_alloc', module: numberResultModule('(i64.const 1)', { allocHook: '(loop $l (br $l))' }), manifest: { limits } },
        {
          id: 'io.start_spins',
          module: numberModule(
            '(i64.const 1)',
            '(global $k (mut i32) (i32.const 0)) (func $s (loop $l (global.set $k (i32.add (global.get $k) (i32.const 1))) (br_if $l (i32.lt_u (global.get $k) (i32.const 200000))))) (start $s)',
          ),
          manifest: { limits },
        },
        { id: 'io.no_start', module: numberModule('(i64.const 1)', '(global $k (mut i32) (i32.const 0))'), manifest: { limits } },
      ];
    },
    async run(ctx) {
      for (const phase of ['start', 'alloc', 'execute', 'dealloc']) {
        const r = await ctx.call(`io.trap_${phase}`, { phase });
        await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase });
        expect(
          /unreachable/.test(r.error!.message + JSON.stringify(r.error!.details)),
          `the trap message is not given: ${r.error!.message}`,
        );
        ctx.observe(`trap_${phase}`, r.error);
      }
      const overflow = await ctx.call('io.overflow', {});
      await expectGuestFault(ctx, overflow, 'S-TOOL-STACK-OVERFLOW');
      const spin = await ctx.call('io.spin_alloc', {});
      await expectGuestFault(ctx, spin, 'S-TOOL-FUEL-EXHAUSTED');
      expect(spin.metrics.fuel_used >= 20_000_000, `fuel_used ${spin.metrics.fuel_used} is below the budget`);
      const withStart = await ctx.call('io.start_spins', { again: 1 });
      const without = await ctx.call('io.no_start', {});
      expectSuccess(withStart);
      expectSuccess(without);
      expect(
        withStart.metrics.fuel_used > without.metrics.fuel_used + 200_000,
        `the start function's 200k iterations are not in fuel_used (${withStart.metrics.fuel_used} vs ${without.metrics.fuel_used})`,
      );
      ctx.observe('fuel_with_start', withStart.metrics.fuel_used);
      ctx.observe('fuel_without_start', without.metrics.fuel_used);
    },
  },
  {
    id: 'io.trap-says-where',
    title: 'A trap deep in the guest names the export, the function at the top of its stack, its index and frames',
    category: 'io',
    abi: ['ABI-TRAP-002'],
    engines: BOTH,
    expected:
      'S-TOOL-TRAP, message "The tool trapped in <export>: unreachable, at deep (wasm-function[N])." with details.export the entrypoint, details.function "deep", details.wasm_function N and details.frames innermost first',
    async packs(engine) {
      const wat = engine.guests.running('(call $mid)', { extra: '(func $mid (call $deep)) (func $deep unreachable)' });
      return [ioPack(engine, 'io.deep_trap', await wat2wasm(wat, 'deep.wat', { names: true }), { entrypoint: engine.entry })];
    },
    async run(ctx) {
      const r = await ctx.call('io.deep_trap', {});
      const entry = ctx.engine.entry;
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { export: entry, function: 'deep' });
      const d = r.error!.details as { wasm_function?: unknown; frames?: unknown };
      expect(typeof d.wasm_function === 'number', `details.wasm_function is ${JSON.stringify(d.wasm_function)}`);
      expect(
        r.error!.message === `The tool trapped in ${entry}: unreachable, at deep (wasm-function[${String(d.wasm_function)}]).`,
        `the message is ${JSON.stringify(r.error!.message)}`,
      );
      const frames = d.frames as string[];
      expect(Array.isArray(frames) && frames.length >= 3 && frames.length <= 8, `details.frames is ${JSON.stringify(frames)}`);
      expect(
        frames[0]!.startsWith('deep ') && frames[1]!.startsWith('mid ') && frames.some((f) => f.startsWith(`${entry} `)),
        `frames are not innermost first: ${JSON.stringify(frames)}`,
      );
      ctx.observe('error', r.error);
    },
  },
];
