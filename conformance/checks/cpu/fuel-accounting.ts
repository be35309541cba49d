// CPU checks of fuel accounting: the same call costs the same fuel, to the unit the cost model
// gives, and a manifest's budget runs under the policy's ceiling (ABI-FUEL-001, ABI-FUEL-002).
import { expect, type Check } from '../../check.js';
import { checkDefaultPolicy } from '../../runner.js';
import { countedLoop, details, expectExhausted, expectFuel, LOOP_UNIT, pack, SPIN } from './shared.js';

/** The checks of this file, in the report's order. */
export const fuelAccountingChecks: readonly Check[] = [
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
];
