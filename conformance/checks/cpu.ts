// Conformance checks: CPU. A guest that never stops must be stopped by fuel or the deadline,
// whatever shape of code it hides its loop in.
import { expect, expectOutcome, type Check } from '../check.js';
import { extismWat } from '../kit/extism-wat.js';
import { abiPrelude } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';

const FUEL = 5_000_000;

export const cpuChecks: readonly Check[] = [
  {
    id: 'cpu.infinite-loop',
    title: 'An infinite loop is stopped by fuel',
    category: 'cpu',
    abi: ['ABI-FUEL-001'],
    engines: ['helix', 'extism'],
    expected: `terminal_error S-TOOL-FUEL-EXHAUSTED, with metrics.fuel_used at least the budget (${FUEL}) and the same for the same call`,
    packs: (engine) => [
      engine === 'extism'
        ? { id: 'cpu.spin', module: extismWat('(loop $l (br $l)) (i32.const 0)'), manifest: { abi: 'extism/v1', entrypoint: 'run', timeoutMs: 60_000, limits: { ...DEFAULT_LIMITS, fuel: FUEL } } }
        : { id: 'cpu.spin', module: `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (loop $l (br $l)) (i64.const 0)))`, manifest: { timeoutMs: 60_000, limits: { ...DEFAULT_LIMITS, fuel: FUEL } } },
    ],
    async run(ctx) {
      const first = await ctx.call('cpu.spin', { n: 1 });
      expectOutcome(first, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(first.metrics.fuel_used >= FUEL, `fuel_used ${first.metrics.fuel_used} is below the budget ${FUEL}`);
      const second = await ctx.call('cpu.spin', { n: 2 });
      expectOutcome(second, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(second.metrics.fuel_used === first.metrics.fuel_used, `fuel_used differs between identical loops: ${first.metrics.fuel_used} and ${second.metrics.fuel_used}`);
      ctx.observe('fuel_used', first.metrics.fuel_used);
    },
  },
];
