// Decisions checks of what a guest can never catch: its own uncaught exception, a stack overflow,
// fuel running out and its deadline; and, on extism/v1, a kernel function's error, which is no
// decision and may be caught (ABI-FINAL-004..006, ABI-TRAP-001).
import { expect, expectOutcome, type Check } from '../../check.js';
import { KERNEL_ERROR_CAUGHT } from '../../kit/io-guests.js';
import { expectGuestFault, IO_LIMITS, ioPack, journalOf } from '../../kit/io-support.js';
import { BOTH, CLOCK } from './shared.js';

/** The checks of this file, in the report's order. */
export const uncatchableChecks: readonly Check[] = [
  {
    id: 'decisions.uncaught-own-exception',
    title:
      'An exception the guest throws with its own tag, caught by nothing, is a terminal S-TOOL-TRAP naming the phase, never a lost worker',
    category: 'decisions',
    abi: ['ABI-FINAL-005', 'ABI-FINAL-006', 'ABI-TRAP-001'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-TRAP with details.uncaught_exception true, details.trap "uncaught WebAssembly exception" and details.phase start / alloc / execute / dealloc (helix/v1), "execute" for an extism/v1 start or entry function; the message says nothing caught it',
    packs: (engine) => engine.phases.map((phase) => ioPack(engine, `d.throw_${phase}`, engine.guests.throwing(phase))),
    async run(ctx) {
      for (const phase of ctx.engine.phases) {
        const r = await ctx.call(`d.throw_${phase}`, {});
        await expectGuestFault(ctx, r, 'S-TOOL-TRAP', {
          uncaught_exception: true,
          trap: 'uncaught WebAssembly exception',
          phase: ctx.engine.reportedPhase(phase),
        });
        expect(r.error!.message.includes('nothing caught'), `the message does not say nothing caught it: ${r.error!.message}`);
        ctx.observe(phase, r.error!.message);
      }
    },
  },
  {
    id: 'decisions.uncatchable-faults',
    title: 'A stack overflow or fuel running out inside try/catch_all cannot be caught',
    category: 'decisions',
    abi: ['ABI-FINAL-004', 'ABI-TRAP-001'],
    engines: BOTH,
    expected:
      'S-TOOL-STACK-OVERFLOW for recursion inside try/catch_all (helix/v1); S-TOOL-FUEL-EXHAUSTED with details.fuel_limit 1,000,000 for a spin inside try/catch_all',
    packs: (engine) => [
      // The kit's catching recursion is a helix/v1 guest; extism/v1 runs the spin alone.
      ...(engine.guests.catchingRecursion === undefined ? [] : [ioPack(engine, 'd.recursion', engine.guests.catchingRecursion)]),
      ioPack(engine, 'd.spin', engine.guests.catchingSpin, { limits: { ...IO_LIMITS, fuel: 1_000_000 } }),
    ],
    async run(ctx) {
      if (ctx.engine.guests.catchingRecursion !== undefined)
        await expectGuestFault(ctx, await ctx.call('d.recursion', {}), 'S-TOOL-STACK-OVERFLOW');
      const spin = await ctx.call('d.spin', {});
      await expectGuestFault(ctx, spin, 'S-TOOL-FUEL-EXHAUSTED', { fuel_limit: 1_000_000 });
      ctx.observe('fuel_used', spin.metrics.fuel_used);
    },
  },
  {
    id: 'decisions.catch-the-deadline',
    title: 'A guest spinning inside try/catch_all with fuel to spare is stopped at its deadline',
    category: 'decisions',
    abi: ['ABI-FINAL-001', 'ABI-FINAL-004'],
    engines: BOTH,
    expected:
      'retryable_error R-TIMEOUT-001 at a 300 ms deadline with a 10^15 fuel budget, after 250 ms and within 5 s (timed after a warm-up call that starts the workers); the host serves on',
    packs: (engine) => [
      ioPack(engine, 'd.slow_spin', engine.guests.catchingSpin, {
        timeoutMs: 300,
        limits: { ...IO_LIMITS, fuel: 1e15 },
      }),
      ioPack(engine, 'd.warm', engine.guests.storm(0)),
    ],
    async run(ctx) {
      // Warm: the first call of an engine may start its workers.
      await ctx.call('d.warm', { warm: true });
      const t0 = performance.now();
      const r = await ctx.call('d.slow_spin', {});
      const ms = performance.now() - t0;
      expectOutcome(r, 'retryable_error', 'R-TIMEOUT-001');
      expect(ms >= 250 && ms < 5000, `the 300 ms deadline took ${Math.round(ms)} ms`);
      ctx.observe('ms', Math.round(ms));
    },
  },
  {
    id: 'decisions.kernel-error-is-not-a-decision',
    title: "An Extism kernel function's error may be caught; a helix_capability_call decision after it may not",
    category: 'decisions',
    abi: ['ABI-FINAL-006'],
    engines: ['extism'],
    expected:
      "success with {} for a plugin that catches output_set's error on a missing block; R-CAP-CALL-LIMIT for one that then catches the ceiling of 1 and outputs {}",
    packs: (engine) => [
      ioPack(engine, 'd.kernel_caught', KERNEL_ERROR_CAUGHT),
      ioPack(engine, 'd.two_calls', engine.guests.storm(2), { capabilities: CLOCK, limits: { ...IO_LIMITS, maxCapabilityCalls: 1 } }),
    ],
    async run(ctx) {
      const ok = await ctx.call('d.kernel_caught', {});
      expectOutcome(ok, 'success');
      expect(JSON.stringify(ok.output) === '{}', `output ${JSON.stringify(ok.output)}`);
      const r = await ctx.call('d.two_calls', {});
      expect(r.error?.code === 'R-CAP-CALL-LIMIT', `the caught ceiling answered ${r.status} ${r.error?.code}`);
      expect((await journalOf(ctx, r)).length === 2, 'the journal does not hold the served call and the abort');
    },
  },
];
