// Decisions checks: a guest that catches a decision the host made (the call ceiling, a bad
// pointer) with try/catch_all and carries on still ends with that decision, with nothing after it
// served, journaled or audited (ABI-FINAL-001, ABI-FINAL-002, ABI-FINAL-004, ABI-FINAL-006).
import { statSync } from 'node:fs';
import { expect, expectOutcome, type Check } from '../../check.js';
import { capabilityAuditOf, expectDetails, expectGuestFault, IO_LIMITS, ioPack, journalOf, runOf } from '../../kit/io-support.js';
import { BOTH, CLOCK } from './shared.js';

/** The checks of this file, in the report's order. */
export const caughtDecisionChecks: readonly Check[] = [
  {
    id: 'decisions.catch-call-ceiling',
    title:
      'A guest that catches the call ceiling and calls 100,000 times more ends at the ceiling, with nothing after it served, journaled or audited',
    category: 'decisions',
    abi: ['ABI-FINAL-001', 'ABI-FINAL-002', 'ABI-FINAL-006', 'ABI-CAP-003'],
    engines: BOTH,
    expected:
      'retryable_error R-CAP-CALL-LIMIT with details.max_capability_calls N (20 helix, 10 extism); the journal holds N ok entries and one abort, the audit N + 1 capability records (one aborted); the run is recorded failed with R-CAP-CALL-LIMIT; the store grows by less than 1 MiB; fuel_used is below the budget',
    packs: (engine) => {
      const ceiling = engine.stormCeiling;
      return [
        ioPack(engine, 'd.storm', engine.guests.storm(100_000), {
          timeoutMs: 60_000,
          capabilities: CLOCK,
          limits: { ...IO_LIMITS, fuel: 10_000_000_000, maxCapabilityCalls: ceiling },
        }),
      ];
    },
    async run(ctx) {
      const ceiling = ctx.engine.stormCeiling;
      const host = await ctx.host();
      const before = statSync(host.storePath).size;
      const r = await ctx.call('d.storm', {});
      expectOutcome(r, r.status, 'R-CAP-CALL-LIMIT');
      expect(r.status !== 'success', 'the storm succeeded');
      expectDetails(r, { max_capability_calls: ceiling });
      const journal = await journalOf(ctx, r);
      expect(journal.length === ceiling + 1, `the journal holds ${journal.length} entries, not ${ceiling + 1}`);
      expect(
        journal.slice(0, ceiling).every((e) => e.outcome === 'ok') && journal[ceiling]!.outcome === 'abort',
        `journal outcomes ${journal.map((e) => e.outcome).join(',')}`,
      );
      const audit = await capabilityAuditOf(ctx, r);
      expect(
        audit.length === ceiling + 1 && audit.filter((a) => a.decision === 'aborted').length === 1,
        `the audit holds ${audit.length} records (${audit.map((a) => a.decision).join(',')})`,
      );
      const run = await runOf(ctx, r);
      const recorded = (run?.result as { error?: { code?: string } } | null | undefined)?.error?.code;
      expect(run?.status === 'failed' && recorded === 'R-CAP-CALL-LIMIT', `the run is recorded ${run?.status} ${recorded}`);
      const grown = statSync(host.storePath).size - before;
      expect(grown < 1 << 20, `the store grew by ${grown} bytes`);
      expect(r.metrics.fuel_used < 10_000_000_000, `fuel_used ${r.metrics.fuel_used} reached the budget`);
      ctx.observe('journal_entries', journal.length);
      ctx.observe('audit_records', audit.length);
      ctx.observe('store_growth_bytes', grown);
    },
  },
  {
    id: 'decisions.ceiling-then-trap-or-spin',
    title:
      'After catching the call ceiling, a guest that traps, spins, or spins inside try/catch_all still ends with the ceiling, at the fuel it had used',
    category: 'decisions',
    abi: ['ABI-FINAL-001', 'ABI-FINAL-004', 'ABI-FINAL-006'],
    engines: BOTH,
    expected:
      'R-CAP-CALL-LIMIT (max_capability_calls 5) for each, no panic detail (helix_panic is not called after a decision), 6 journal entries, fuel_used below 1,000,000 of a 10^15 budget, each within 5 s',
    packs: (engine) => {
      const manifest = { timeoutMs: 20_000, capabilities: CLOCK, limits: { ...IO_LIMITS, fuel: 1e15, maxCapabilityCalls: 5 } };
      return [
        ioPack(engine, 'd.then_trap', engine.guests.storm(200, { trap: true }), manifest),
        ioPack(engine, 'd.then_spin', engine.guests.storm(200, { after: '(loop $forever (br $forever))' }), manifest),
        ioPack(
          engine,
          'd.then_catching_spin',
          engine.guests.storm(200, { after: '(try (do (loop $forever (br $forever))) (catch_all))' }),
          manifest,
        ),
      ];
    },
    async run(ctx) {
      await ctx.host();
      for (const tool of ['d.then_trap', 'd.then_spin', 'd.then_catching_spin']) {
        const t0 = performance.now();
        const r = await ctx.call(tool, {});
        const ms = performance.now() - t0;
        expect(r.error?.code === 'R-CAP-CALL-LIMIT', `${tool}: ${r.status} ${r.error?.code}: ${r.error?.message}`);
        expectDetails(r, { max_capability_calls: 5 });
        expect(r.error!.details.panic === undefined, `${tool}: helix_panic was called after the decision`);
        expect((await journalOf(ctx, r)).length === 6, `${tool}: the journal does not hold 5 calls and the abort`);
        expect(r.metrics.fuel_used < 1_000_000, `${tool}: fuel_used ${r.metrics.fuel_used}: the guest ran on after the decision`);
        expect(ms < 5000, `${tool}: took ${Math.round(ms)} ms`);
        ctx.observe(tool, { fuel_used: r.metrics.fuel_used, ms: Math.round(ms) });
      }
    },
  },
  {
    id: 'decisions.catch-bad-pointer',
    title: 'A guest that catches S-TOOL-BAD-POINTER from its capability call and answers ok still ends with the fault',
    category: 'decisions',
    abi: ['ABI-FINAL-001', 'ABI-FINAL-006', 'ABI-CALL-004'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-BAD-POINTER naming the import (capability_call with ptr 0x7ffffff0, len 64; helix_capability_call for an offset naming no block); nothing journaled',
    packs: (engine) => [ioPack(engine, 'd.bad_pointer', engine.guests.badPointer.module, { capabilities: CLOCK })],
    async run(ctx) {
      const r = await ctx.call('d.bad_pointer', {});
      await expectGuestFault(ctx, r, 'S-TOOL-BAD-POINTER', ctx.engine.guests.badPointer.details);
      expect((await journalOf(ctx, r)).length === 0, 'a call with a bad pointer was journaled');
      ctx.observe('error', r.error);
    },
  },
];
