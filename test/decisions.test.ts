// Host decisions are final (ABI-FINAL-001 to ABI-FINAL-005), for helix/v1 guests: real modules
// compiled from WAT that catch what the host throws through capability_call (try/catch_all),
// re-enter it from alloc, or throw their own exceptions, run by the real host, engine, worker
// threads, broker and LMDB store. After each, a well-behaved call in the same host succeeds.
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponseEnvelope } from '../abi/index.js';
import { createBroker } from '../host/4-calls/broker/broker.js';
import { readJournal } from '../host/4-calls/broker/journal.js';
import { RunOutputs } from '../host/4-calls/broker/outputs.js';
import { createEngine } from '../host/2-sandbox/engine/engine.js';
import { hostStore } from '../host/5-host/host.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { readAudit } from '../host/3-store/audit.js';
import {
  ANSWER_BAD_POINTER,
  ANSWER_THROW,
  BAD_POINTER_CAUGHT,
  CATCHING_RECURSION,
  callingFrom,
  CLOCK_REQUEST,
  CATCHING_SPIN,
  PANIC_WITH_CALL,
  REENTRANT_ALLOC,
  START_CALL_CAUGHT,
  stormGuest,
  throwingGuest,
  TRAP_WITH_CALLING_PANIC,
} from './helpers/catching-guests.js';
import { abortThenCancel, RACED_ABORT, startDecisionHost, type DecisionHost } from './helpers/decision-kit.js';
import { echoModule } from './helpers/guest-wat.js';
import type { ToolpackSpec } from './helpers/toolpack.js';

const limits = { maxInputBytes: 65_536, maxOutputBytes: 65_536, fuel: 10_000_000_000, maxMemoryPages: 16, maxCapabilityCalls: 5 };
const clock = { abiVersion: 1, allow: ['clock.now_unix'] };
const tool = (id: string, module: string, extra: Record<string, unknown> = {}): ToolpackSpec => ({
  id,
  module,
  manifest: { limits, capabilities: clock, ...extra },
});
const PHASES = ['start', 'alloc', 'execute', 'dealloc'] as const;

let h: DecisionHost;

beforeAll(async () => {
  h = await startDecisionHost(
    [
      tool('f.storm', stormGuest(100_000), { timeoutMs: 60_000, limits: { ...limits, maxCapabilityCalls: 100 } }),
      tool('f.storm_trap', stormGuest(200, '(unreachable)', PANIC_WITH_CALL)),
      tool('f.storm_spin', stormGuest(200, '(loop $forever (br $forever))'), { limits: { ...limits, fuel: 1e15 } }),
      tool('f.bad_pointer', BAD_POINTER_CAUGHT),
      tool('f.start_call', START_CALL_CAUGHT),
      tool('f.reentrant', REENTRANT_ALLOC),
      tool('f.alloc_call', callingFrom('alloc')),
      tool('f.dealloc_call', callingFrom('dealloc')),
      tool('f.answer_bad_pointer', ANSWER_BAD_POINTER),
      tool('f.answer_throw', ANSWER_THROW),
      tool('f.panic_call', TRAP_WITH_CALLING_PANIC),
      tool('f.recursion', CATCHING_RECURSION),
      tool('f.spin', CATCHING_SPIN, { limits: { ...limits, fuel: 1_000_000 } }),
      ...PHASES.map((phase) => tool(`f.throw_${phase}`, throwingGuest(phase))),
      { id: 'f.echo', module: echoModule() },
    ],
    'f.echo',
    { maxThreads: 2 },
  );
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const call = (toolId: string, input?: Record<string, unknown>) => h.call(toolId, input);
/** After each hostile call, a well-behaved call in the same host succeeds. */
const expectHostServes = async (): Promise<void> => void (await h.expectServes());
const journalOf = (r: ResponseEnvelope) => readJournal(hostStore(h.host), r.run_id!);
const capabilityAudit = (r: ResponseEnvelope) =>
  readAudit(hostStore(h.host)).filter((a) => a.run_id === r.run_id && a.kind === 'capability');

describe('a decision of the broker (ABI-FINAL-001, ABI-FINAL-002)', () => {
  it('ends a guest that catches the call ceiling and calls 100,000 times: 101 calls journaled and audited, and the store does not grow', async () => {
    const before = statSync(hostStore(h.host).path).size;
    const r = await call('f.storm');
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 100 } });
    const journal = journalOf(r);
    expect(journal).toHaveLength(101);
    expect(journal.slice(0, 100).every((e) => e.outcome === 'ok')).toBe(true);
    expect(journal[100]).toMatchObject({ outcome: 'abort', error: { code: 'R-CAP-CALL-LIMIT' } });
    const audit = capabilityAudit(r);
    expect(audit).toHaveLength(101);
    expect(audit.filter((a) => a.decision === 'aborted')).toHaveLength(1);
    // Before the rule, 100,000 journaled and audited calls grew the store by 84 MB.
    expect(statSync(hostStore(h.host).path).size - before).toBeLessThan(1 << 20);
    expect(r.metrics.fuel_used).toBeLessThan(limits.fuel);
    await expectHostServes();
  }, 120_000);

  it('keeps the ceiling as the outcome when the guest catches it and then traps; helix_panic is not called', async () => {
    const r = await call('f.storm_trap');
    expect(r.error).toMatchObject({ code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 5 } });
    expect(r.error?.details).not.toHaveProperty('panic');
    expect(journalOf(r)).toHaveLength(6);
    await expectHostServes();
  });

  it('keeps the ceiling as the outcome when the guest catches it and spins: its fuel is spent at the decision (ABI-FINAL-004)', async () => {
    const r = await call('f.storm_spin');
    expect(r.error?.code).toBe('R-CAP-CALL-LIMIT');
    // fuel_used is what the guest had used when the host decided, far below its budget.
    expect(r.metrics.fuel_used).toBeGreaterThan(5000);
    expect(r.metrics.fuel_used).toBeLessThan(1_000_000);
    expect(journalOf(r)).toHaveLength(6);
    await expectHostServes();
  });
});

describe('the broker on its own (ABI-FINAL-002)', () => {
  it('answers every request after its abort with that abort, and counts, journals and audits none of them', async () => {
    const runId = 'run_final_broker_alone';
    const broker = createBroker({
      store: hostStore(h.host),
      policy: loadPolicy(undefined).policy,
      toolId: 'f.storm',
      allow: ['clock.now_unix'],
      network: [],
      runId,
      deadlineMs: Date.now() + 60_000,
      signal: new AbortController().signal,
      maxCapabilityCalls: 1,
      outputs: new RunOutputs(hostStore(h.host), runId, [], 1 << 20),
    });
    const request = new TextEncoder().encode(CLOCK_REQUEST);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await broker.handle(request));
    expect(answers.map((a) => a.kind)).toEqual(['answer', 'abort', 'abort', 'abort', 'abort']);
    for (const later of answers.slice(2)) expect(later).toEqual(answers[1]);
    const effects = broker.finish();
    expect(effects.journal.map((e) => e.outcome)).toEqual(['ok', 'abort']);
    // The audit records wait for the run's finishing transaction (ABI-STORE-037).
    expect(effects.audit.map((a) => a.record.decision)).toEqual(['allowed', 'aborted']);
  });
});

describe('a decision of the sandbox (ABI-FINAL-001, ABI-FINAL-003, ABI-FINAL-004)', () => {
  it('ends a guest that catches S-TOOL-BAD-POINTER from capability_call and answers ok', async () => {
    const r = await call('f.bad_pointer');
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'S-TOOL-BAD-POINTER', details: { import: 'capability_call', ptr: 0x7ffffff0, len: 64 } });
    expect(journalOf(r)).toHaveLength(0);
    await expectHostServes();
  });

  it('ends a guest whose start function catches the refusal of its capability call', async () => {
    const r = await call('f.start_call');
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { phase: 'start', import: 'capability_call' } });
    expect(journalOf(r)).toHaveLength(0);
    await expectHostServes();
  });

  it.each(['alloc', 'dealloc'] as const)(
    'ends a guest whose %s, called by the host, makes a capability call and catches the refusal',
    async (where) => {
      const r = await call(`f.${where}_call`);
      expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { phase: where, import: 'capability_call' } });
      expect(r.error?.details).not.toHaveProperty('reentrant');
      expect(journalOf(r)).toHaveLength(0);
      await expectHostServes();
    },
  );

  it('refuses a capability call from alloc while the host places an answer: the host is not re-entered', async () => {
    const r = await call('f.reentrant');
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { phase: 'alloc', reentrant: true } });
    // The outer call was served before the decision; the inner one never reached the broker.
    expect(journalOf(r)).toHaveLength(1);
    expect(capabilityAudit(r)).toHaveLength(1);
    await expectHostServes();
  });

  it('ends a guest whose alloc returns a bad pointer for an answer, even when execute catches the fault', async () => {
    const r = await call('f.answer_bad_pointer');
    expect(r.error).toMatchObject({ code: 'S-TOOL-BAD-POINTER', details: { export: 'alloc', ptr: 0x7ffffff0 } });
    await expectHostServes();
  });

  it('ends a guest whose alloc throws while the host places an answer, even when execute catches its own exception', async () => {
    const r = await call('f.answer_throw');
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { phase: 'alloc', uncaught_exception: true } });
    await expectHostServes();
  });

  it('lets helix_panic explain a trap but serves it no capability call', async () => {
    const r = await call('f.panic_call');
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { phase: 'execute', panic: 'panicked on purpose' } });
    expect(journalOf(r)).toHaveLength(1);
    await expectHostServes();
  });
});

describe('an uncaught guest exception (ABI-FINAL-005)', () => {
  it.each(PHASES)('thrown from %s is a terminal S-TOOL-TRAP naming the phase, never S-TOOL-WORKER-LOST', async (phase) => {
    const r = await call(`f.throw_${phase}`);
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({
      code: 'S-TOOL-TRAP',
      details: { phase, uncaught_exception: true, trap: 'uncaught WebAssembly exception' },
    });
    expect(r.error?.message).toContain(`nothing caught, in ${phase}`);
    await expectHostServes();
  });
});

describe('what a guest cannot catch (ABI-FINAL-004)', () => {
  it('a stack overflow inside try/catch_all is S-TOOL-STACK-OVERFLOW', async () => {
    const r = await call('f.recursion');
    expect(r.error?.code).toBe('S-TOOL-STACK-OVERFLOW');
    await expectHostServes();
  });

  it('fuel running out inside try/catch_all is S-TOOL-FUEL-EXHAUSTED', async () => {
    const r = await call('f.spin');
    expect(r.error).toMatchObject({ code: 'S-TOOL-FUEL-EXHAUSTED', details: { fuel_limit: 1_000_000 } });
    await expectHostServes();
  });
});

describe('the engine (ABI-FINAL-001)', () => {
  it("keeps the broker's abort as the outcome when the caller cancels between the abort and the worker's reply", async () => {
    const engine = createEngine({ maxThreads: 1, minThreads: 0 });
    try {
      expect(await abortThenCancel(engine, h.dir, 'f.storm_spin')).toMatchObject({
        kind: 'fault',
        code: RACED_ABORT.code,
        details: RACED_ABORT.details,
      });
    } finally {
      await engine.close();
    }
  }, 60_000);
});
