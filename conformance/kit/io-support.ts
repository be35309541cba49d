// What the io and decisions checks share: toolpack specs for either engine, a look at a run's
// record, journal and audit through the check's host, and assertions on guest faults.
import type { JournalEntry, ResponseEnvelope, RunRecord } from '../../abi/index.js';
import type { AuditEntry } from '../../host/5-host/host-records.js';
import { CheckFailure, expect, expectOutcome, type CheckContext, type EngineAdapter, type PackSpec } from '../check.js';
import { DEFAULT_LIMITS } from './toolpack.js';

/** Limits of the io and decisions toolpacks unless told: the kit's defaults and 10 capability calls. */
export const IO_LIMITS = { ...DEFAULT_LIMITS, maxCapabilityCalls: 10 } as const;

/** A toolpack for `engine` under the io limits (and `manifest`): an extism/v1 plugin (entry `run`) on extism, else helix/v1. */
export function ioPack(
  engine: EngineAdapter,
  id: string,
  module: string | Uint8Array,
  manifest: Record<string, unknown> = {},
  rest: Partial<PackSpec> = {},
): PackSpec {
  return { id, module, ...rest, manifest: { limits: IO_LIMITS, ...engine.manifest, ...manifest } };
}

/** The run record of a response, from the check's own store. */
export async function runOf(ctx: CheckContext, r: ResponseEnvelope): Promise<RunRecord | undefined> {
  expect(r.run_id !== null, `the call has no run_id (status ${r.status} ${r.error?.code ?? ''})`);
  return (await ctx.host()).runs.get(r.run_id);
}

/** The journal (capability calls) of a response's run. */
export async function journalOf(ctx: CheckContext, r: ResponseEnvelope): Promise<JournalEntry[]> {
  expect(r.run_id !== null, 'the call has no run_id');
  return (await ctx.host()).runs.journal(r.run_id);
}

/** The capability audit records of a response's run. */
export async function capabilityAuditOf(ctx: CheckContext, r: ResponseEnvelope): Promise<AuditEntry[]> {
  return r.run_id === null ? [] : (await ctx.host()).audit.list({ runId: r.run_id, kind: 'capability' });
}

/** A terminal fault of the guest with `code` (and `details` matching), its run recorded `failed` with that code. */
export async function expectGuestFault(
  ctx: CheckContext,
  r: ResponseEnvelope,
  code: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  expectOutcome(r, 'terminal_error', code);
  expectDetails(r, details);
  const run = await runOf(ctx, r);
  expect(run !== undefined, `run ${r.run_id} is not in the store`);
  expect(run.status === 'failed', `run ${r.run_id} is recorded ${run.status}, not failed`);
  const recorded = (run.result as { error?: { code?: string } } | null | undefined)?.error?.code;
  expect(recorded === code, `run ${r.run_id} is recorded with ${String(recorded)}, not ${code}`);
}

/** Fails unless every key of `details` is in the response's error details with an equal (JSON) value. */
export function expectDetails(r: ResponseEnvelope, details: Record<string, unknown>): void {
  const got = r.error?.details ?? {};
  for (const [key, want] of Object.entries(details)) {
    if (JSON.stringify(got[key]) !== JSON.stringify(want)) {
      throw new CheckFailure(
        `${r.error?.code ?? r.status}: details.${key} is ${JSON.stringify(got[key])}, expected ${JSON.stringify(want)} (details ${JSON.stringify(got).slice(0, 600)})`,
      );
    }
  }
}

/** A client's refusal: invalid_request with `code`, no run, and details matching. */
export function expectRefused(r: ResponseEnvelope, code: string, details: Record<string, unknown> = {}): void {
  expectOutcome(r, 'invalid_request', code);
  expect(r.run_id === null, `the refused request became run ${r.run_id}`);
  expectDetails(r, details);
}
