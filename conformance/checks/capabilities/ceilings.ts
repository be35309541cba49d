// Capability checks of what stops a storm of calls (ABI-CAP-003, ABI-CAP-006): the call ceiling,
// and the fuel each call costs, so a storm under a large ceiling runs out of fuel.
import { expect, expectOutcome, type Check, type EngineAdapter } from '../../check.js';
import { rawAnswers, rawInput, SCRIPT_LIMITS } from '../../kit/caps-kit.js';
import { CLOCK_CALL, raw, script } from './shared.js';

/** The engine's storm of clock calls under a ceiling of 5. */
const stormer = (engine: EngineAdapter): ReturnType<EngineAdapter['caller']['storm']> =>
  engine.caller.storm('cap.storm', ['clock.now_unix'], 5);

/** The checks of this file, in the report's order. */
export const ceilingChecks: readonly Check[] = [
  {
    id: 'capabilities.call-ceiling-storm',
    title: 'A guest looping capability calls without end is stopped at maxCapabilityCalls with R-CAP-CALL-LIMIT',
    category: 'capabilities',
    abi: ['ABI-CAP-003'],
    engines: ['helix', 'extism'],
    expected:
      'with maxCapabilityCalls 5 the run ends terminal_error R-CAP-CALL-LIMIT (details.max_capability_calls 5) within 5 s; the journal holds 5 served calls and one abort, nothing after',
    packs: (engine) => [stormer(engine).pack],
    async run(ctx) {
      const host = await ctx.host();
      const t0 = performance.now();
      const r = await ctx.call('cap.storm', stormer(ctx.engine).input(CLOCK_CALL));
      const ms = performance.now() - t0;
      expectOutcome(r, 'terminal_error', 'R-CAP-CALL-LIMIT');
      expect(r.error!.details.max_capability_calls === 5, `details: ${JSON.stringify(r.error!.details)}`);
      expect(ms < 5000, `the storm took ${Math.round(ms)} ms to stop`);
      const journal = host.runs.journal(r.run_id!);
      expect(
        journal.length === 6 && journal.slice(0, 5).every((e) => e.outcome === 'ok') && journal[5]!.outcome === 'abort',
        `journal: ${JSON.stringify(journal.map((e) => e.outcome))}`,
      );
      ctx.observe(
        'journal_outcomes',
        journal.map((e) => e.outcome),
      );
      ctx.observe('stopped_after_ms', Math.round(ms));
    },
  },
  {
    id: 'capabilities.fuel-per-call',
    title: 'Capability calls cost 1000 fuel plus one per 64 bytes, so a storm under a large call ceiling runs out of fuel',
    category: 'capabilities',
    abi: ['ABI-CAP-006'],
    engines: ['helix'],
    expected:
      "each journal entry's fuel is 1000 + ceil((request bytes + answer bytes) / 64), computed from the exact bytes the guest sent and received; five calls cost at least 4000 more fuel than one; a storm with maxCapabilityCalls 100000 and fuel 3000000 ends S-TOOL-FUEL-EXHAUSTED after at most 3000 calls",
    packs: () => [
      raw('cap.raw', ['clock.now_unix', 'kv.get']),
      script('cap.fuel_storm', {
        limits: { ...SCRIPT_LIMITS, fuel: 3_000_000, maxCapabilityCalls: 100_000 },
        timeoutMs: 30_000,
        capabilities: { abiVersion: 1, allow: ['clock.now_unix'] },
      }),
    ],
    async run(ctx) {
      const host = await ctx.host();
      const clock = { request: { abi_version: 1, name: 'clock.now_unix', args: {} } };
      const big = { request: { abi_version: 1, name: 'kv.get', args: { key: 'q'.repeat(250) } } };
      const one = await ctx.call('cap.raw', rawInput([clock]));
      const five = await ctx.call('cap.raw', rawInput([clock, clock, clock, clock, big]));
      const answers = rawAnswers(five);
      const journal = host.runs.journal(five.run_id!);
      const requests = [clock, clock, clock, clock, big].map((c) => Buffer.from(JSON.stringify(c.request)));
      for (const [i, e] of journal.entries()) {
        const want = 1000 + Math.ceil((requests[i]!.length + answers[i]!.bytes.length) / 64);
        expect(e.fuel === want, `entry ${i} was charged ${e.fuel}, not ${want}`);
      }
      const delta = five.metrics.fuel_used - one.metrics.fuel_used;
      expect(delta >= 4000, `five calls cost only ${delta} fuel more than one`);
      ctx.observe('fuel', { one: one.metrics.fuel_used, five: five.metrics.fuel_used, entries: journal.map((e) => e.fuel) });
      const storm = await ctx.call('cap.fuel_storm', { storm: 'clock.now_unix' });
      expectOutcome(storm, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      const served = host.runs.journal(storm.run_id!).length;
      expect(served <= 3000, `the storm made ${served} calls under 3000000 fuel`);
      ctx.observe('storm_calls_before_fuel_ran_out', served);
    },
  },
];
