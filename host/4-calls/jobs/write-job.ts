// Writing a job bundle from the submitting store (abi/ABI.md, ABI-FANOUT-001, -002): the call is
// checked and identified first as a dry run (checkJobCall, so a call this host would refuse is
// refused before anything is written or submitted), then its policy, canonical params and input
// artifacts (records and bytes) are written into a new directory, job.json last, so a bundle with a
// job.json is whole.
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { newDirectory, writeBundleJson } from '../../1-base/files/bundle-files.js';
import { canonicalJson } from '../../1-base/hashing.js';
import type { Store } from '../../3-store/open-store.js';
import { getArtifact } from '../artifacts/index.js';
import type { LoadedPolicy } from '../policy/load-policy.js';
import { writeBlobFile } from './bundle-blobs.js';
import { JOB_FILES, JOB_FORMAT, JobSchema, type Job } from './bundle-format.js';
import { checkJobCall, type JobCall, type JobCaller } from './job-call.js';

/** The submitting host a bundle is written from: its policy, toolpacks and store home. */
export interface JobOrigin {
  readonly policy: LoadedPolicy;
  readonly toolpacksDir: string;
  readonly home: string;
}

/**
 * Writes the job bundle of `call` into `dir` (a new or empty directory) from `store`, the store of
 * `host`, and returns its job.json; an input blob a bundle of `linkFrom` holds is hard-linked from
 * it. The call is refused here exactly as `host` would refuse it.
 */
export async function writeJobBundle(
  store: Store,
  host: JobCaller & JobOrigin,
  call: JobCall,
  dir: string,
  linkFrom: readonly string[] = [],
): Promise<Job> {
  const { identity, tool } = await checkJobCall(host, call);
  const inputs = tool.validateInput(call.input).artifacts.map((ref) => getArtifact(store, ref.artifact_id));
  const target = path.resolve(dir);
  newDirectory(target);
  for (const record of inputs) await writeBlobFile(store, target, record.sha256, linkFrom);
  writeFileSync(path.join(target, JOB_FILES.params), identity.canonical_params);
  writeFileSync(path.join(target, JOB_FILES.policy), canonicalJson(host.policy.policy));
  const job: Job = JobSchema.parse({
    format: JOB_FORMAT,
    run_id: identity.run_id,
    params_hash: identity.params_hash,
    policy_hash: identity.policy_hash,
    request: { tool_id: tool.id, tool_version: tool.version, input: call.input, constraints: { ...call.constraints } },
    plugins_dir: path.resolve(host.toolpacksDir),
    submitted_from: { home: host.home, hostname: hostname() },
    inputs,
  });
  writeBundleJson(path.join(target, JOB_FILES.job), job);
  return job;
}
