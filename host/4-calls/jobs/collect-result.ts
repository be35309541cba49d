// `helix job collect`: brings a job's result bundle into the submitting store (ABI-FANOUT-005,
// -006). Everything is checked first (checkResult; then every blob's bytes as they are stored,
// held by pending writes), and the run is recorded with all it left by the runs' own operation
// (recordCollectedRun, one transaction). A second collect changes nothing.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ResponseEnvelope, RunRecord } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';
import { readBundleJson } from '../../1-base/files/bundle-files.js';
import { readArtifactRecord } from '../../3-store/artifact-records.js';
import { discardBlob, type WrittenBlob } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';
import { recordCollectedRun, replacesRun } from '../runs/collected-run.js';
import { getRun } from '../runs/run-store.js';
import { storeBlobFile } from './bundle-blobs.js';
import { JOB_FILES, RESULT_FILES, ResultSchema, readHashedText, readJob } from './bundle-format.js';
import { checkResult } from './check-result.js';

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

/** Collects the result of the job bundle in `bundleDir` into `store`. */
export async function collectResult(store: Store, bundleDir: string, now: () => number = Date.now): Promise<Collected> {
  const dir = path.resolve(bundleDir);
  const job = readJob(dir);
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
  if (!replacesRun(getRun(store, job.run_id), checked.run)) return done('unchanged');

  const written: WrittenBlob[] = [];
  try {
    for (const b of checked.blobs) written.push(await storeBlobFile(store, resultDir, b.sha256, b.size));
  } catch (err) {
    await store.transaction(() => {
      for (const w of written) discardBlob(store, w);
    });
    throw err;
  }
  const imported = await recordCollectedRun(
    store,
    {
      run: checked.run,
      artifacts: checked.artifacts,
      documents: { params_hash: job.params_hash, canonical_params: paramsText, policy_hash: job.policy_hash, canonical_policy: policyText },
      module: result.module,
      events: result.events,
      journal: result.journal,
      audit: result.audit,
      from: { bundle: dir, node: result.node.hostname },
    },
    written,
    now,
  );
  return done(imported ? 'imported' : 'unchanged');
}
