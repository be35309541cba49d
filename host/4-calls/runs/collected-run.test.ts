// recordCollectedRun on a real store: a collected run enters whole (run, documents, artifacts,
// events ending with `collected`, audit) or not at all; a second one changes nothing; an artifact
// that names other bytes than the store's artifact of its id refuses the whole run, and the
// pending blobs go with it.
import { afterEach, describe, expect, it } from 'vitest';
import { isHelixError, RunRecordSchema, type ArtifactRecord, type RunRecord, type RunStatus } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { sha256Digest } from '../../1-base/hashing.js';
import { readAudit } from '../../3-store/audit.js';
import { blobRecord, writeChunks, type WrittenBlob } from '../../3-store/blobs.js';
import { readParams } from '../../3-store/documents.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { getArtifact, importInline } from '../artifacts/index.js';
import { recordCollectedRun, replacesRun, type CollectedRun } from './collected-run.js';
import { getRun, runEvents } from './run-store.js';

const HASH = 'c'.repeat(64);
const PARAMS = '{"p":1}';
const POLICY = '{}';
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

/** A new store of its own, closed and removed after the test. */
function newStore(): Store {
  const t = tempDir('helix-collected-');
  const store = openStore(t.dir);
  cleanup.push(async () => {
    await store.close();
    t.cleanup();
  });
  return store;
}

function runRecord(status: RunStatus, outputs: readonly ArtifactRecord[] = []): RunRecord {
  return RunRecordSchema.parse({
    run_id: `run_${'d'.repeat(32)}`,
    tool_id: 't.node',
    tool_version: '1.0.0',
    contract_version: 'v1',
    module_digest: null,
    policy_hash: sha256Digest(POLICY),
    params_hash: sha256Digest(PARAMS),
    status,
    attempts: 1,
    created_at: 1000,
    started_at: 1000,
    finished_at: 2000,
    owner: null,
    metrics: null,
    result: { status: 'success', output: {}, warnings: [] },
    inputs: [],
    outputs: outputs.map((a) => ({ role: 'out', artifact_id: a.id, sha256: a.sha256 })),
    log_artifact_id: null,
    idempotency_key: null,
    last_call_id: null,
    journal: { entries: 0, head: null },
  });
}

function collected(run: RunRecord, artifacts: readonly ArtifactRecord[]): CollectedRun {
  return {
    run,
    artifacts,
    documents: { params_hash: run.params_hash, canonical_params: PARAMS, policy_hash: run.policy_hash, canonical_policy: POLICY },
    module: null,
    events: [
      { at: 1000, kind: 'started', detail: { attempt: 1 } },
      { at: 2000, kind: 'finished', detail: { status: run.status } },
    ],
    journal: [],
    audit: [{ at: 1500, record: { kind: 'log', run_id: run.run_id, line: 'on the node' } }],
    from: { bundle: '/jobs/one', node: 'node-1' },
  };
}

/** The bytes `text` as a pending blob of `store`. */
async function pendingBlob(store: Store, text: string): Promise<WrittenBlob> {
  async function* source(): AsyncGenerator<Uint8Array> {
    yield Buffer.from(text);
  }
  return writeChunks(store, source());
}

describe('replacesRun', () => {
  it('lets a collected run in where the store has none, and a success over a run that did not succeed, and nothing else', () => {
    const ok = runRecord('succeeded');
    const failed = runRecord('failed');
    expect(replacesRun(undefined, failed)).toBe(true);
    for (const status of ['failed', 'blocked', 'interrupted'] as const) expect(replacesRun(runRecord(status), ok)).toBe(true);
    expect(replacesRun(ok, ok)).toBe(false);
    expect(replacesRun(ok, failed)).toBe(false);
    expect(replacesRun(failed, failed)).toBe(false);
  });
});

describe('recordCollectedRun', () => {
  it('records the run with its documents, artifacts, events and audit in one go, and a second time changes nothing', async () => {
    const node = newStore();
    const here = newStore();
    const output = await importInline(node, '>out\nACGT\n', { type: 'fasta' });
    const run = runRecord('succeeded', [output]);
    expect(await recordCollectedRun(here, collected(run, [output]), [await pendingBlob(here, '>out\nACGT\n')], () => 5000)).toBe(true);

    expect(getRun(here, run.run_id)).toMatchObject({ status: 'succeeded', owner: null, attempts: 1 });
    expect(getArtifact(here, output.id)).toMatchObject({ sha256: output.sha256, created_at: 5000 });
    expect(blobRecord(here, output.sha256)?.size).toBe(output.size);
    expect(readParams(here, run.params_hash)).toBe(PARAMS);
    expect(runEvents(here, run.run_id).map((e) => e.kind)).toEqual(['started', 'finished', 'collected']);
    expect(readAudit(here).map((a) => a.kind)).toEqual(['log', 'run.collected']);

    const again = await recordCollectedRun(here, collected(run, [output]), [await pendingBlob(here, '>out\nACGT\n')], () => 6000);
    expect(again).toBe(false);
    expect(runEvents(here, run.run_id)).toHaveLength(3);
    expect(readAudit(here)).toHaveLength(2);
  });

  it('refuses the whole run when an artifact names other bytes than the store holds under its id (D-DATA-BUNDLE-IDENTITY)', async () => {
    const here = newStore();
    const held = await importInline(here, '>held\nAAAA\n', { type: 'fasta' });
    const forged: ArtifactRecord = { ...held, sha256: HASH, size: 11 };
    const run = runRecord('succeeded', [forged]);
    const blob = await pendingBlob(here, '>other\nTT\n');
    const refused = await recordCollectedRun(here, collected(run, [forged]), [blob], () => 5000).catch((err: unknown) =>
      isHelixError(err) ? err.code : String(err),
    );
    expect(refused).toBe('D-DATA-BUNDLE-IDENTITY');
    expect(getRun(here, run.run_id)).toBeUndefined();
    expect(runEvents(here, run.run_id)).toEqual([]);
    expect(readAudit(here)).toEqual([]);
    expect(getArtifact(here, held.id).sha256).toBe(held.sha256);
    expect(blobRecord(here, blob.sha256)).toBeUndefined();
  });
});
