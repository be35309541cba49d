// `helix job run BUNDLE` on a node (ABI-FANOUT-003, -004): opens a node-local store, imports the
// job's input artifacts with their records (each checked against its sha256), checks that the
// call has the identity the job was made for, runs it, and writes the result bundle into
// BUNDLE/result. A job refused on the node still gets a result bundle, holding the refusal.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { HelixError, isHelixError, PolicySchema, type ArtifactRecord, type ResponseEnvelope } from '../../../abi/index.js';
import { canonicalJson, sha256Digest } from '../../1-base/hashing.js';
import { createHost, hostStore, type Host } from '../../5-host/host.js';
import type { LoadedPolicy } from '../../4-calls/policy/load-policy.js';
import { errorResponse, ZERO_METRICS } from '../../1-base/response.js';
import { importRecordedArtifact } from '../../4-calls/artifacts/index.js';
import type { Store } from '../../3-store/open-store.js';
import { storeBlobFile } from './bundle-blobs.js';
import { bundleError, JOB_FILES, JobSchema, readBundleJson, readBundleText, type Job } from './bundle-format.js';
import { nodeHome } from './node-home.js';
import { writeResultBundle } from './write-result.js';
import { identifyCall } from './write-job.js';

/** Options of runJobBundle. */
export interface RunJobOptions {
  /** The node-local Helix home; default a new directory under $TMPDIR, removed afterwards. */
  readonly home?: string;
}

/** The job's text file `name`, which must hash to `digest` (D-DATA-BUNDLE-HASH otherwise). */
export function readHashedText(dir: string, name: string, digest: string): string {
  const file = path.join(dir, name);
  const text = readBundleText(file);
  const actual = sha256Digest(text);
  if (actual !== digest)
    throw new HelixError('D-DATA-BUNDLE-HASH', {
      message: `The bundle file ${file} does not hash to ${digest}, which job.json names.`,
      details: { file, expected: digest, actual },
    });
  return text;
}

/** The job's policy, as loaded on the submitting host (its canonical text after expansion). */
function jobPolicy(dir: string, job: Job): LoadedPolicy {
  const file = path.join(dir, JOB_FILES.policy);
  const parsed = PolicySchema.safeParse(JSON.parse(readHashedText(dir, JOB_FILES.policy, job.policy_hash)));
  if (!parsed.success)
    throw bundleError(
      file,
      'is not a policy',
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    );
  return { policy: parsed.data, source: file, hash: sha256Digest(canonicalJson(parsed.data)) };
}

/** Imports the job's input artifacts, with their records as the submitting store holds them, in creation order. */
export async function importInputs(store: Store, dir: string, inputs: readonly ArtifactRecord[]): Promise<void> {
  const sorted = [...inputs].sort((a, b) => a.created_at - b.created_at);
  for (const record of sorted) await importRecordedArtifact(store, record, () => storeBlobFile(store, dir, record.sha256, record.size));
}

/** Runs the job on `host`: the identity check, then the call. */
async function callJob(host: Host, job: Job): Promise<ResponseEnvelope> {
  const { identity } = await identifyCall(host, job.request);
  if (identity.run_id !== job.run_id) {
    throw new HelixError('C-CONTRACT-JOB-TOOL', {
      message: `On this node the call is run ${identity.run_id}, not ${job.run_id} as the job was made for.`,
      details: {
        expected_run_id: job.run_id,
        actual_run_id: identity.run_id,
        expected_params_hash: job.params_hash,
        actual_params_hash: identity.params_hash,
        policy_hash: identity.policy_hash,
      },
    });
  }
  return host.call({
    call_id: `job-${randomUUID()}`,
    tool_id: job.request.tool_id,
    tool_version: job.request.tool_version,
    input: job.request.input,
    constraints: job.request.constraints,
  });
}

/**
 * Runs the job bundle in `bundleDir` and writes BUNDLE/result; returns the node's response. A
 * refusal before the call (a bad bundle file, the node's home, another identity) is written as
 * the result's response, with no run, and thrown.
 */
export async function runJobBundle(bundleDir: string, options: RunJobOptions = {}): Promise<ResponseEnvelope> {
  const dir = path.resolve(bundleDir);
  const job = readBundleJson(path.join(dir, JOB_FILES.job), JobSchema);
  const resultDir = path.join(dir, JOB_FILES.result);
  let home: { home: string; temporary: boolean } | undefined;
  let host: Host | undefined;
  try {
    const policy = jobPolicy(dir, job);
    readHashedText(dir, JOB_FILES.params, job.params_hash);
    home = nodeHome(options.home, job.submitted_from);
    host = await createHost({ policy, pluginsDir: job.plugins_dir, home: home.home });
    const store = hostStore(host);
    await importInputs(store, dir, job.inputs);
    const response = await callJob(host, job);
    await writeResultBundle(store, resultDir, job.run_id, response);
    return response;
  } catch (err) {
    if (!isHelixError(err)) throw err;
    const refused = errorResponse('', err.toWire(), ZERO_METRICS, {
      tool_id: job.request.tool_id,
      tool_version: job.request.tool_version,
      digest: null,
    });
    await writeResultBundle(host === undefined ? undefined : hostStore(host), resultDir, job.run_id, refused);
    throw err;
  } finally {
    await host?.close();
    if (home?.temporary === true) rmSync(home.home, { recursive: true, force: true });
  }
}
