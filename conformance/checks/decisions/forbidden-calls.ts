// Decisions checks of capability calls from where none may be made (a start function, alloc or
// dealloc the host called, alloc while an answer is placed, helix_panic): each ends the call,
// caught or not, and reaches neither the journal nor the audit trail (ABI-FINAL-003, ABI-FINAL-004).
import { expect, type Check } from '../../check.js';
import {
  ANSWER_BAD_POINTER,
  ANSWER_THROW,
  callingFrom,
  CLOCK_REQUEST,
  PANIC_TEXT,
  REENTRANT_ALLOC,
  START_CALL_CAUGHT,
} from '../../kit/io-guests.js';
import { capabilityAuditOf, expectGuestFault, ioPack, journalOf } from '../../kit/io-support.js';
import { CLOCK } from './shared.js';

/** The checks of this file, in the report's order. */
export const forbiddenCallChecks: readonly Check[] = [
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
    packs: (engine) => [ioPack(engine, 'd.panic_call', engine.guests.storm(1, { trap: true }), { capabilities: CLOCK })],
    async run(ctx) {
      const r = await ctx.call('d.panic_call', {});
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase: 'execute', panic: PANIC_TEXT });
      expect((await journalOf(ctx, r)).length === 1, "helix_panic's capability call was journaled");
      expect((await capabilityAuditOf(ctx, r)).length === 1, "helix_panic's capability call was audited");
      ctx.show({ label: 'the request every catching guest sends', lang: 'json', text: CLOCK_REQUEST });
    },
  },
];
