// `helix job collect`: brings a job's result bundle into the submitting store (ABI-FANOUT-005,
// -006). Everything is checked first (checkResult; then every blob's bytes as they are stored,
// held by pending writes), and the run, its params and policy, events, journal, audit records,
// output and log artifacts and module are committed in one transaction, so `helix verify` and
// `helix runs export` cover the run as if it had run here. A second collect changes nothing.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ResponseEnvelope, RunRecord } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';
import { getRun } from '../../4-calls/runs/run-store.js';
import { lastArtifactCreatedAt, putArtifactRecord, readArtifactRecord } from '../../3-store/artifact-records.js';
import { appendAudit } from '../../3-store/audit.js';
import { commitBlob, discardBlob, type WrittenBlob } from '../../3-store/blobs.js';
import { keepRunDocuments } from '../../3-store/documents.js';
import { writeJournal } from '../../3-store/journal.js';
import { keepModuleRecord } from '../../3-store/modules.js';
import type { Store } from '../../3-store/open-store.js';
import { appendRunEvent, putRun } from '../../3-store/runs.js';
import { storeBlobFile } from './bundle-blobs.js';
import { JOB_FILES, JobSchema, readBundleJson, RESULT_FILES, ResultSchema } from './bundle-format.js';
import { checkResult, type CheckedResult } from './check-result.js';
import { readHashedText } from './run-job.js';

/** What collecting one job bundle did. */
export interface Collected {
  readonly run_id: string;
  /**
   * `imported`: the run entered the store; `unchanged`: the store already held it (or a
   * succeeded run of the same identity); `refused`: the node refused the job and recorded no run.
   */
  readonly outcome: 'imported' | 'unchanged' | 'refused';
  /** The run's status as the node recorded it; null when it recorded none. */
  readonly status: RunRecord['status'] | null;
  /** The node's response envelope. */
  readonly response: ResponseEnvelope;
}

/** Whether a collected run should replace what the store holds under its id (never a success, never a failure by a failure). */
function replaces(existing: RunRecord | undefined, run: RunRecord): boolean {
  if (existing === undefined) return true;
  return run.status === 'succeeded' && (existing.status === 'failed' || existing.status === 'blocked' || existing.status === 'interrupted');
}

/** Collects the result of the job bundle in `bundleDir` into `store`. */
export async function collectResult(store: Store, bundleDir: string, now: () => number = Date.now): Promise<Collected> {
  const dir = path.resolve(bundleDir);
  const job = readBundleJson(path.join(dir, JOB_FILES.job), JobSchema);
  const resultDir = path.join(dir, JOB_FILES.result);
  const file = path.join(resultDir, RESULT_FILES.result);
  if (!existsSync(file))
    throw new HelixError('P-PRECOND-JOB-RESULT-MISSING', {
      message: `The job ${dir} (run ${job.run_id}) has no result bundle yet: ${file} is missing.`,
      details: { bundle: dir, run_id: job.run_id },
    });
  const result = readBundleJson(file, ResultSchema);
  if (result.run === null) return { run_id: job.run_id, outcome: 'refused', status: null, response: result.response };
  const paramsText = readHashedText(dir, JOB_FILES.params, job.params_hash);
  const policyText = readHashedText(dir, JOB_FILES.policy, job.policy_hash);
  const checked = checkResult(file, job, result, paramsText);
  // The run links the job's inputs, and its journal reads them: they must be this store's.
  for (const input of job.inputs) {
    if (readArtifactRecord(store, input.id)?.sha256 !== input.sha256) {
      throw new HelixError('P-PRECOND-ARTIFACT-NOT-FOUND', {
        message: `The job's input artifact ${input.id} (sha256 ${input.sha256}) is not in the store ${store.home}.`,
        details: { artifact_id: input.id, sha256: input.sha256 },
        hint: 'Collect into the store the job bundle was written from.',
      });
    }
  }
  const done = (outcome: Collected['outcome']): Collected => ({
    run_id: job.run_id,
    outcome,
    status: checked.run.status,
    response: result.response,
  });
  if (!replaces(getRun(store, job.run_id), checked.run)) return done('unchanged');

  const written: WrittenBlob[] = [];
  const discard = (): Promise<unknown> => store.transaction(() => written.forEach((w) => discardBlob(store, w)));
  try {
    for (const b of checked.blobs) written.push(await storeBlobFile(store, resultDir, b.sha256, b.size));
  } catch (err) {
    await discard();
    throw err;
  }
  const imported = await store
    .transaction(() => {
      // Read again under the write lock: another collect may have committed meanwhile.
      const existing = getRun(store, job.run_id);
      if (!replaces(existing, checked.run)) {
        for (const w of written) discardBlob(store, w);
        return false;
      }
      for (const w of written) commitBlob(store, w);
      keepRunDocuments(store, {
        params_hash: job.params_hash,
        canonical_params: paramsText,
        policy_hash: job.policy_hash,
        canonical_policy: policyText,
      });
      if (result.module !== null) keepModuleRecord(store, result.module);
      writeRun(store, checked, existing, now());
      for (const event of result.events) appendRunEvent(store, job.run_id, event);
      appendRunEvent(store, job.run_id, {
        at: now(),
        kind: 'collected',
        detail: { bundle: dir, node: result.node.hostname, status: checked.run.status },
      });
      writeJournal(store, job.run_id, result.journal);
      for (const a of result.audit) appendAudit(store, a.at, a.record);
      appendAudit(store, now(), {
        kind: 'run.collected',
        run_id: job.run_id,
        tool_id: checked.run.tool_id,
        bundle: dir,
        node: result.node.hostname,
        status: checked.run.status,
      });
      return true;
    })
    .catch(async (err: unknown) => {
      // Refused inside the transaction (nothing of it was written): the blobs go to gc.
      await discard();
      throw err;
    });
  return done(imported ? 'imported' : 'unchanged');
}

/**
 * Writes the collected run and its artifacts; call inside the transaction. Artifacts get this
 * store's next created_at, so its time index stays strictly increasing; attempts add up with any
 * attempt recorded here.
 */
function writeRun(store: Store, checked: CheckedResult, existing: RunRecord | undefined, at: number): void {
  for (const record of checked.artifacts) {
    const held = readArtifactRecord(store, record.id);
    if (held?.sha256 === record.sha256) continue;
    if (held !== undefined) {
      throw new HelixError('D-DATA-BUNDLE-IDENTITY', {
        message: `The result's artifact ${record.id} names other bytes than this store's artifact of that id.`,
        details: { field: `artifact ${record.id}`, expected: held.sha256, actual: record.sha256 },
      });
    }
    putArtifactRecord(store, { ...record, created_at: Math.max(at, lastArtifactCreatedAt(store) + 1) });
  }
  const run = checked.run;
  putRun(store, {
    ...run,
    owner: null,
    attempts: (existing?.attempts ?? 0) + run.attempts,
    created_at: existing?.created_at ?? run.created_at,
    idempotency_key: existing?.idempotency_key ?? null,
  });
}
