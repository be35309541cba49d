// Conformance checks: host decisions a guest tries to catch. Guests that use WebAssembly exception
// handling (try/catch_all) around a capability call the host refused or aborted, around fuel
// running out or a stack overflow, or their deadline; that call capability_call from where none
// may be made (start, alloc, dealloc, helix_panic, alloc while an answer is placed); or that throw
// their own exceptions. The first decision is the outcome, nothing after it is served, journaled or
// audited, and the host serves on.
import { statSync } from 'node:fs';
import { hostStore } from '../../host/5-host/host.js';
import { expect, expectOutcome, type Check } from '../check.js';
import {
  ANSWER_BAD_POINTER,
  ANSWER_THROW,
  BAD_OFFSET_PLUGIN,
  BAD_POINTER_CAUGHT,
  callingFrom,
  CATCHING_RECURSION,
  CATCHING_SPIN,
  CATCHING_SPIN_PLUGIN,
  CLOCK_REQUEST,
  KERNEL_ERROR_CAUGHT,
  PANIC_TEXT,
  PANIC_WITH_CALL,
  REENTRANT_ALLOC,
  START_CALL_CAUGHT,
  stormGuest,
  stormPlugin,
  throwingGuest,
  throwingPlugin,
} from '../kit/io-guests.js';
import { capabilityAuditOf, expectDetails, expectGuestFault, IO_LIMITS, ioPack, journalOf, runOf } from '../kit/io-support.js';

const BOTH = ['helix', 'extism'] as const;
const CLOCK = { abiVersion: 1, allow: ['clock.now_unix'] };
const PHASES = ['start', 'alloc', 'execute', 'dealloc'] as const;

export const decisionChecks: readonly Check[] = [
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
      const ceiling = engine.name === 'extism' ? 10 : 20;
      return [
        ioPack(engine, 'd.storm', engine.name === 'extism' ? stormPlugin(100_000) : stormGuest(100_000), {
          timeoutMs: 60_000,
          capabilities: CLOCK,
          limits: { ...IO_LIMITS, fuel: 10_000_000_000, maxCapabilityCalls: ceiling },
        }),
      ];
    },
    async run(ctx) {
      const ceiling = ctx.engine.name === 'extism' ? 10 : 20;
      const store = hostStore(await ctx.host());
      const before = statSync(store.path).size;
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
      const grown = statSync(store.path).size - before;
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
      if (engine.name === 'extism') {
        return [
          ioPack(engine, 'd.then_trap', stormPlugin(200, 'unreachable'), manifest),
          ioPack(engine, 'd.then_spin', stormPlugin(200, '(loop $forever (br $forever))'), manifest),
          ioPack(engine, 'd.then_catching_spin', stormPlugin(200, '(try (do (loop $forever (br $forever))) (catch_all))'), manifest),
        ];
      }
      return [
        ioPack(engine, 'd.then_trap', stormGuest(200, '(unreachable)', PANIC_WITH_CALL), manifest),
        ioPack(engine, 'd.then_spin', stormGuest(200, '(loop $forever (br $forever))'), manifest),
        ioPack(engine, 'd.then_catching_spin', stormGuest(200, '(try (do (loop $forever (br $forever))) (catch_all))'), manifest),
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
    packs: (engine) => [
      ioPack(engine, 'd.bad_pointer', engine.name === 'extism' ? BAD_OFFSET_PLUGIN : BAD_POINTER_CAUGHT, { capabilities: CLOCK }),
    ],
    async run(ctx) {
      const r = await ctx.call('d.bad_pointer', {});
      await expectGuestFault(
        ctx,
        r,
        'S-TOOL-BAD-POINTER',
        ctx.engine.name === 'extism' ? { import: 'helix_capability_call' } : { import: 'capability_call', ptr: 0x7ffffff0, len: 64 },
      );
      expect((await journalOf(ctx, r)).length === 0, 'a call with a bad pointer was journaled');
      ctx.observe('error', r.error);
    },
  },
  {
    id: 'decisions.call-from-start',
    title: 'A start function that makes a capability call and catches the refusal ends the call',
    category: 'decisions',
    abi: ['ABI-FINAL-003', 'ABI-CALL-002'],
    engines: ['helix'],
    expected: 'terminal_error S-TOOL-TRAP with details.phase "start" and details.import "capability_call"; nothing journaled or audited',
    packs: (engine) => [ioPack(engine, 'd.start_call', START_CALL_CAUGHT, { capabilities: CLOCK })],
    async run(ctx) {
      const r = await ctx.call('d.start_call', {});
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase: 'start', import: 'capability_call' });
      expect((await journalOf(ctx, r)).length === 0, 'the call from start was journaled');
      expect((await capabilityAuditOf(ctx, r)).length === 0, 'the call from start was audited');
    },
  },
  {
    id: 'decisions.call-from-alloc-or-dealloc',
    title: 'alloc or dealloc, called by the host, making a capability call and catching the refusal, ends the call',
    category: 'decisions',
    abi: ['ABI-FINAL-003'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-TRAP with details.phase "alloc" / "dealloc", details.import "capability_call" and no reentrant flag; nothing journaled',
    packs: (engine) => [
      ioPack(engine, 'd.alloc_call', callingFrom('alloc'), { capabilities: CLOCK }),
      ioPack(engine, 'd.dealloc_call', callingFrom('dealloc'), { capabilities: CLOCK }),
    ],
    async run(ctx) {
      for (const where of ['alloc', 'dealloc'] as const) {
        const r = await ctx.call(`d.${where}_call`, {});
        await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase: where, import: 'capability_call' });
        expect(r.error!.details.reentrant === undefined, `${where}: marked reentrant`);
        expect((await journalOf(ctx, r)).length === 0, `${where}: the call was journaled`);
        ctx.observe(where, r.error);
      }
    },
  },
  {
    id: 'decisions.reentrant-alloc',
    title: 'alloc making a capability call while the host places an answer is refused: the host is never re-entered',
    category: 'decisions',
    abi: ['ABI-FINAL-003', 'ABI-FINAL-002'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-TRAP with details.phase "alloc" and details.reentrant true; the journal and the audit hold only the outer call',
    packs: (engine) => [ioPack(engine, 'd.reentrant', REENTRANT_ALLOC, { capabilities: CLOCK })],
    async run(ctx) {
      const r = await ctx.call('d.reentrant', {});
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase: 'alloc', reentrant: true });
      const journal = await journalOf(ctx, r);
      expect(journal.length === 1, `the journal holds ${journal.length} entries, not the outer call alone`);
      expect((await capabilityAuditOf(ctx, r)).length === 1, 'the audit holds more than the outer call');
    },
  },
  {
    id: 'decisions.answer-alloc-faults',
    title: 'alloc returning a bad pointer or throwing while the host places an answer is the outcome, even when execute catches it',
    category: 'decisions',
    abi: ['ABI-FINAL-004', 'ABI-FINAL-001', 'ABI-CALL-004'],
    engines: ['helix'],
    expected:
      'S-TOOL-BAD-POINTER with details.export "alloc" and ptr 0x7ffffff0; S-TOOL-TRAP with details.phase "alloc" and uncaught_exception true',
    packs: (engine) => [
      ioPack(engine, 'd.answer_bad_pointer', ANSWER_BAD_POINTER, { capabilities: CLOCK }),
      ioPack(engine, 'd.answer_throw', ANSWER_THROW, { capabilities: CLOCK }),
    ],
    async run(ctx) {
      const bad = await ctx.call('d.answer_bad_pointer', {});
      await expectGuestFault(ctx, bad, 'S-TOOL-BAD-POINTER', { export: 'alloc', ptr: 0x7ffffff0 });
      const thrown = await ctx.call('d.answer_throw', {});
      await expectGuestFault(ctx, thrown, 'S-TOOL-TRAP', { phase: 'alloc', uncaught_exception: true });
    },
  },
  {
    id: 'decisions.panic-makes-no-call',
    title: 'helix_panic may explain a trap but is served no capability call',
    category: 'decisions',
    abi: ['ABI-FINAL-003'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-TRAP with details.phase "execute" and details.panic "panicked on purpose"; the journal holds only the call made before the trap',
    packs: (engine) => [ioPack(engine, 'd.panic_call', stormGuest(1, '(unreachable)', PANIC_WITH_CALL), { capabilities: CLOCK })],
    async run(ctx) {
      const r = await ctx.call('d.panic_call', {});
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase: 'execute', panic: PANIC_TEXT });
      expect((await journalOf(ctx, r)).length === 1, "helix_panic's capability call was journaled");
      expect((await capabilityAuditOf(ctx, r)).length === 1, "helix_panic's capability call was audited");
      ctx.show({ label: 'the request every catching guest sends', lang: 'json', text: CLOCK_REQUEST });
    },
  },
  {
    id: 'decisions.uncaught-own-exception',
    title:
      'An exception the guest throws with its own tag, caught by nothing, is a terminal S-TOOL-TRAP naming the phase, never a lost worker',
    category: 'decisions',
    abi: ['ABI-FINAL-005', 'ABI-FINAL-006', 'ABI-TRAP-001'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-TRAP with details.uncaught_exception true, details.trap "uncaught WebAssembly exception" and details.phase start / alloc / execute / dealloc (helix/v1), "execute" for an extism/v1 start or entry function; the message says nothing caught it',
    packs: (engine) =>
      engine.name === 'extism'
        ? [ioPack(engine, 'd.throw_start', throwingPlugin('start')), ioPack(engine, 'd.throw_execute', throwingPlugin('execute'))]
        : PHASES.map((phase) => ioPack(engine, `d.throw_${phase}`, throwingGuest(phase))),
    async run(ctx) {
      const phases = ctx.engine.name === 'extism' ? (['start', 'execute'] as const) : PHASES;
      for (const phase of phases) {
        const r = await ctx.call(`d.throw_${phase}`, {});
        await expectGuestFault(ctx, r, 'S-TOOL-TRAP', {
          uncaught_exception: true,
          trap: 'uncaught WebAssembly exception',
          phase: ctx.engine.name === 'extism' ? 'execute' : phase,
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
    packs: (engine) =>
      engine.name === 'extism'
        ? [ioPack(engine, 'd.spin', CATCHING_SPIN_PLUGIN, { limits: { ...IO_LIMITS, fuel: 1_000_000 } })]
        : [
            ioPack(engine, 'd.recursion', CATCHING_RECURSION),
            ioPack(engine, 'd.spin', CATCHING_SPIN, { limits: { ...IO_LIMITS, fuel: 1_000_000 } }),
          ],
    async run(ctx) {
      if (ctx.engine.name === 'helix') await expectGuestFault(ctx, await ctx.call('d.recursion', {}), 'S-TOOL-STACK-OVERFLOW');
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
      ioPack(engine, 'd.slow_spin', engine.name === 'extism' ? CATCHING_SPIN_PLUGIN : CATCHING_SPIN, {
        timeoutMs: 300,
        limits: { ...IO_LIMITS, fuel: 1e15 },
      }),
      ioPack(engine, 'd.warm', engine.name === 'extism' ? KERNEL_ERROR_CAUGHT : stormGuest(0)),
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
      ioPack(engine, 'd.two_calls', stormPlugin(2), { capabilities: CLOCK, limits: { ...IO_LIMITS, maxCapabilityCalls: 1 } }),
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
