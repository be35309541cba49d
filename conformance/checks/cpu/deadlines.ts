// CPU checks of the deadline: what fuel cannot stop (a blocking atomic wait, a budget of ten
// billion units) is ended by the call's deadline, which a request may lower and never raise
// (ABI-DEADLINE-001).
import { isHelixError, type ResponseEnvelope } from '../../../abi/index.js';
import { expect, expectOutcome, type Check } from '../../check.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { details, pack, show, SPIN } from './shared.js';

/** The checks of this file, in the report's order. */
export const deadlineChecks: readonly Check[] = [
  {
    id: 'cpu.atomic-wait',
    title:
      'memory.atomic.wait32 on shared memory with no timeout, which fuel cannot interrupt, is ended by the deadline (or refused at load)',
    category: 'cpu',
    abi: ['ABI-DEADLINE-001'],
    engines: ['helix', 'extism'],
    expected:
      'either the host refuses the shared-memory module at load with P-PRECOND-MANIFEST-INVALID, or the call ends R-TIMEOUT-001 (retryable_error, a pure tool) within its 500 ms deadline plus a generous 5 s, the worker replaced, and the host serves on',
    packs: (engine) => {
      const wait = '(drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))';
      return [engine.pack('cpu.atomic_wait', engine.guests.sharedMemory(wait), { timeoutMs: 500, limits: { ...DEFAULT_LIMITS } })];
    },
    async run(ctx) {
      try {
        await ctx.host();
      } catch (e) {
        if (!isHelixError(e)) throw e;
        ctx.note(`the loader refused the shared-memory module: ${e.code}: ${e.message} ${show(e.details, 500)}`);
        expect(e.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${e.code}, not P-PRECOND-MANIFEST-INVALID`);
        return;
      }
      const t0 = performance.now();
      const r = await ctx.call('cpu.atomic_wait', { n: 1 });
      const took = performance.now() - t0;
      ctx.observe('outcome', { status: r.status, code: r.error?.code, details: r.error?.details, took_ms: Math.round(took) });
      expectOutcome(r, 'retryable_error', 'R-TIMEOUT-001');
      expect(took < 500 + 5000, `the call took ${Math.round(took)} ms against a 500 ms deadline`);
    },
  },
  {
    id: 'cpu.deadline-huge-fuel',
    title: 'A loop with a budget of ten billion units is ended by the deadline; the request may lower the deadline, never raise it',
    category: 'cpu',
    abi: ['ABI-DEADLINE-001'],
    engines: ['helix', 'extism'],
    expected:
      'R-TIMEOUT-001 retryable_error (pure tool) with details.timeout_ms 400 (the manifest timeoutMs), at 150 when the request asks timeout_ms 150, still 400 when it asks 60,000; a deadline_unix_ms 300 ms ahead ends it too; each within its deadline plus 5 s',
    packs: (engine) => [pack(engine, 'cpu.long', SPIN, { timeoutMs: 400, limits: { fuel: 10_000_000_000 } })],
    async run(ctx) {
      const timed = async (n: number, constraints: Record<string, unknown>, bound: number): Promise<ResponseEnvelope> => {
        const t0 = performance.now();
        const r = await ctx.call('cpu.long', { n }, { request: { constraints } });
        const took = performance.now() - t0;
        expectOutcome(r, 'retryable_error', 'R-TIMEOUT-001');
        expect(took >= bound * 0.8, `timed out after ${Math.round(took)} ms, before its ${bound} ms deadline`);
        expect(took < bound + 5000, `took ${Math.round(took)} ms against a ${bound} ms deadline`);
        ctx.observe(`n${n}`, { constraints, took_ms: Math.round(took), timeout_ms: details(r).timeout_ms, fuel_used: r.metrics.fuel_used });
        return r;
      };
      const base = await timed(1, {}, 400);
      expect(details(base).timeout_ms === 400, `details.timeout_ms ${String(details(base).timeout_ms)}, not 400`);
      const lowered = await timed(2, { timeout_ms: 150 }, 150);
      expect(details(lowered).timeout_ms === 150, `a request timeout_ms of 150 ran under ${String(details(lowered).timeout_ms)}`);
      const raised = await timed(3, { timeout_ms: 60_000 }, 400);
      expect(
        details(raised).timeout_ms === 400,
        `a request timeout_ms of 60,000 raised the deadline to ${String(details(raised).timeout_ms)}`,
      );
      await timed(4, { deadline_unix_ms: Date.now() + 300 }, 300);
    },
  },
];
