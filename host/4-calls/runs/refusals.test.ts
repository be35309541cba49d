import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, RunRecordSchema, type RunRecord } from '../../../abi/index.js';
import { JournalBuilder } from '../broker/journal.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { refusedCalls } from './refusals.js';

const RUN = `run_${'a'.repeat(32)}`;
const HASH = 'b'.repeat(64);
const FORBIDDEN = { code: 'A-AUTH-FORBIDDEN', message: 'forbidden', details: {}, hint: ERROR_CODES['A-AUTH-FORBIDDEN'].hint };
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function storeWith(
  journal: ReadonlyArray<{ name: string | null; error: typeof FORBIDDEN | null }>,
  audits: ReadonlyArray<{ at: number; capability: string | null; decision: string; reason: string }>,
): Promise<{ store: Store; run: RunRecord }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'helix-refusals-'));
  const store = openStore(path.join(dir, 'home'));
  cleanup.push(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const run = RunRecordSchema.parse({
    run_id: RUN,
    tool_id: 't.asker',
    tool_version: '1.0.0',
    contract_version: 'v1',
    module_digest: `sha256:${HASH}`,
    policy_hash: `sha256:${HASH}`,
    params_hash: `sha256:${HASH}`,
    status: 'succeeded',
    attempts: 1,
    created_at: 1000,
    started_at: 1000,
    finished_at: 2000,
    owner: null,
    metrics: null,
    result: { status: 'success', output: {}, warnings: [] },
    inputs: [],
    outputs: [],
    log_artifact_id: null,
    idempotency_key: null,
    last_call_id: null,
    journal: { entries: journal.length, head: null },
  });
  rawDatabases(store).runs.putSync(RUN, run);
  const builder = new JournalBuilder();
  for (const j of journal) {
    const e = builder.append({
      name: j.name,
      args: {},
      request_sha256: HASH,
      outcome: j.error === null ? 'ok' : 'error',
      mode: 'value',
      result: j.error === null ? 1 : null,
      result_sha256: null,
      error: j.error,
      response_sha256: HASH,
      fuel: 1000,
    });
    rawDatabases(store).journal.putSync([RUN, e.seq], e as unknown as Record<string, unknown>);
  }
  for (const [i, a] of audits.entries())
    rawDatabases(store).audit.putSync([a.at, 1, i], { kind: 'capability', tool_id: 't.asker', run_id: RUN, ...a });
  return { store, run };
}

describe('refusedCalls', () => {
  const journal = [
    { name: 'clock.now_unix', error: null },
    { name: 'kv.get', error: FORBIDDEN },
  ];

  it('lists the refused calls only, with the reason the audit trail gives', async () => {
    const { store, run } = await storeWith(journal, [
      { at: 1100, capability: 'clock.now_unix', decision: 'allowed', reason: 'granted' },
      { at: 1200, capability: 'kv.get', decision: 'forbidden', reason: 'not in the manifest allowlist' },
    ]);
    expect(refusedCalls(store, run)).toEqual([
      {
        seq: 1,
        capability: 'kv.get',
        decision: 'forbidden',
        code: 'A-AUTH-FORBIDDEN',
        reason: 'not in the manifest allowlist',
        hint: expect.stringContaining('add kv.get to capabilities.allow'),
      },
    ]);
  });

  it('still lists them from the journal alone when the audit trail has no record of the attempt', async () => {
    // Records before the attempt started (an earlier attempt) do not count.
    const { store, run } = await storeWith(journal, [
      { at: 500, capability: 'kv.get', decision: 'forbidden', reason: 'not in the manifest allowlist' },
    ]);
    expect(refusedCalls(store, run)).toEqual([
      { seq: 1, capability: 'kv.get', decision: null, code: 'A-AUTH-FORBIDDEN', reason: 'forbidden', hint: FORBIDDEN.hint },
    ]);
  });

  it('does not take a reason from an audit record of another call', async () => {
    const { store, run } = await storeWith(journal, [
      { at: 1100, capability: 'clock.now_unix', decision: 'allowed', reason: 'granted' },
      { at: 1200, capability: 'kv.put', decision: 'forbidden', reason: 'not granted by the policy' },
    ]);
    expect(refusedCalls(store, run)).toEqual([expect.objectContaining({ capability: 'kv.get', decision: null, reason: 'forbidden' })]);
  });

  it('is empty for a run without a journal', async () => {
    const { store, run } = await storeWith([], []);
    expect(refusedCalls(store, run)).toEqual([]);
  });
});
