// The checks a result bundle passes before anything of it enters the submitting store
// (ABI-FANOUT-005): its run is the run the job was made for (run id recomputed from the job's own
// params and policy, tool, inputs), its journal chains to the head the run records, and every
// byte it names is in the bundle's list of blobs. The bytes themselves are checked as they are
// stored (bundle-blobs.ts).
import { HelixError, type ArtifactRecord, type RunRecord } from '../../../abi/index.js';
import { bundleError } from '../../1-base/files/bundle-files.js';
import { brokenLink } from '../../3-store/journal.js';
import { runIdOf } from '../runs/identity.js';
import type { Job, Result } from './bundle-format.js';

/** A result's run, checked, with every blob to store (sha256 and size). */
export interface CheckedResult {
  readonly run: RunRecord;
  /** The run's output and log artifacts, as the node recorded them. */
  readonly artifacts: readonly ArtifactRecord[];
  readonly blobs: ReadonlyArray<{ readonly sha256: string; readonly size: number }>;
}

/** D-DATA-BUNDLE-IDENTITY naming the field that differs. */
function identityError(file: string, field: string, expected: unknown, actual: unknown): HelixError {
  return new HelixError('D-DATA-BUNDLE-IDENTITY', {
    message: `The result in ${file} is not the job's run: its ${field} is ${JSON.stringify(actual)}, the job's ${JSON.stringify(expected)}.`,
    details: { file, field, expected, actual },
  });
}

/** Checks that the result's run has the job's identity: ids, hashes, tool, module and inputs. */
function checkIdentity(file: string, job: Job, result: Result, run: RunRecord, params: { tool?: { module_digest?: unknown } }): void {
  const same = (field: string, expected: unknown, actual: unknown): void => {
    if (expected !== actual) throw identityError(file, field, expected, actual);
  };
  same('run_id', job.run_id, result.run_id);
  same('run.run_id', job.run_id, run.run_id);
  same('run.params_hash', job.params_hash, run.params_hash);
  same('run.policy_hash', job.policy_hash, run.policy_hash);
  same('run.tool_id', job.request.tool_id, run.tool_id);
  same('run.tool_version', job.request.tool_version, run.tool_version);
  // The id follows from the job's own params and policy hashes, so none of them can be swapped alone.
  same(
    'run id recomputed from its tool, contract version, policy and params',
    job.run_id,
    runIdOf(run.tool_id, run.contract_version, run.policy_hash, run.params_hash),
  );
  same('run.module_digest', params.tool?.module_digest, run.module_digest);
  if (result.response.run_id !== null) same('response.run_id', job.run_id, result.response.run_id);
  const given = new Map(job.inputs.map((a) => [a.id, a.sha256]));
  for (const link of run.inputs) same(`run.inputs (${link.role})`, given.get(link.artifact_id), link.sha256);
}

/**
 * The record of artifact `id` among the result's: made by the run under `role`, naming the same
 * bytes as `sha256` when given.
 */
function artifactOf(
  file: string,
  records: readonly ArtifactRecord[],
  runId: string,
  id: string,
  role: string,
  sha256?: string,
): ArtifactRecord {
  const record = records.find((r) => r.id === id);
  if (record === undefined) throw bundleError(file, `names artifact ${id}, whose record it lacks`);
  if (sha256 !== undefined && record.sha256 !== sha256) throw identityError(file, `artifact ${id}'s sha256`, sha256, record.sha256);
  const source = record.source.kind === 'run' ? record.source : undefined;
  if (record.created_by_run !== runId || source?.run_id !== runId || source.role !== role) {
    throw identityError(
      file,
      `artifact ${id}'s creator`,
      { run_id: runId, role },
      { created_by_run: record.created_by_run, source: record.source },
    );
  }
  return record;
}

/**
 * Checks `result` (read from `file`) against `job` and its canonical params; returns the run and
 * the blobs to store. Throws D-DATA-BUNDLE-IDENTITY, D-DATA-JOURNAL or I-REQ-JOB-BUNDLE.
 */
export function checkResult(file: string, job: Job, result: Result, paramsText: string): CheckedResult {
  const run = result.run;
  if (run === null) throw bundleError(file, 'holds no run');
  if (run.status !== 'succeeded' && run.status !== 'failed') throw bundleError(file, `holds a run that is ${run.status}, not ended`);
  checkIdentity(file, job, result, run, JSON.parse(paramsText) as { tool?: { module_digest?: unknown } });
  const broken = brokenLink(result.journal, run.journal.head);
  if (broken !== undefined || result.journal.length !== run.journal.entries) {
    throw new HelixError('D-DATA-JOURNAL', {
      message: `The journal of run ${run.run_id} in ${file} does not match its hash chain: ${broken?.reason ?? `${result.journal.length} entries, the run records ${run.journal.entries}`}.`,
      details: { file, run_id: run.run_id, seq: broken?.seq ?? result.journal.length },
    });
  }
  if (result.journal.some((e) => e.keyed === true))
    throw new HelixError('P-PRECOND-JOB-SECRETS', {
      message: `Run ${run.run_id} received a secret on the node; its journal is keyed with the node store's key.`,
      details: { run_id: run.run_id },
    });
  const sizes = new Map(result.blobs.map((b) => [b.sha256, b.size]));
  const needs = (sha256: string, size: number | undefined, what: string): void => {
    if (!sizes.has(sha256)) throw bundleError(file, `lacks the bytes of ${what} (blob ${sha256})`);
    if (size !== undefined && sizes.get(sha256) !== size) throw identityError(file, `size of ${what}`, size, sizes.get(sha256));
  };
  const artifacts: ArtifactRecord[] = [];
  for (const link of run.outputs) {
    const record = artifactOf(file, result.artifacts, run.run_id, link.artifact_id, link.role, link.sha256);
    needs(record.sha256, record.size, `output ${link.role}`);
    artifacts.push(record);
  }
  if (run.log_artifact_id !== null) {
    const log = artifactOf(file, result.artifacts, run.run_id, run.log_artifact_id, 'log');
    needs(log.sha256, log.size, 'the run log');
    artifacts.push(log);
  }
  if (run.input_sha256 !== null) needs(run.input_sha256, undefined, 'the input the guest saw');
  if (run.module_digest !== null) {
    if (result.module?.digest !== run.module_digest)
      throw identityError(file, 'module.digest', run.module_digest, result.module?.digest ?? null);
    needs(result.module.blob, result.module.size, 'the module');
    if (`sha256:${result.module.blob}` !== run.module_digest)
      throw identityError(file, 'module.blob', run.module_digest, result.module.blob);
  }
  return { run, artifacts, blobs: result.blobs };
}
