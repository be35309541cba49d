// A tool call fanned out over many input artifacts (ABI-FANOUT-007): one job bundle per artifact
// (the call with the artifact at one pointer of its input), submitted as one Slurm job array whose
// element i runs `helix job run <dir> --array-element` (the bundle <dir>/<i>), and collected element
// by element into the submitting store. array.json in the directory says which element is which run.
import path from 'node:path';
import { z } from 'zod';
import { HelixError, RUN_ID_PATTERN, isHelixError, type WireError } from '../../../abi/index.js';
import { cancelJob, findJobs, jobStatus, submitBatch } from '../../../capabilities/slurm-commands.js';
import { newDirectory, readBundleJson, writeBundleJson } from '../../1-base/files/bundle-files.js';
import type { Host } from '../../5-host/host.js';
import type { Collected, JobCall, JobCollector } from '../../5-host/host-jobs.js';
import { arrayJobName, arrayScript, elementStates, type ArrayResources } from './array-slurm.js';

/** array.json: the elements of a fanned-out call. */
export const ArraySchema = z.strictObject({
  format: z.literal('helix-job-array/1'),
  tool_id: z.string(),
  tool_version: z.string(),
  /** The JSON pointer of the input field each element sets to its artifact. */
  over: z.string(),
  elements: z.array(z.strictObject({ index: z.number().int().min(0), artifact_id: z.string(), run_id: z.string().regex(RUN_ID_PATTERN) })),
  /** The Slurm job name, written before sbatch runs, so a job whose id was never written is found by it. */
  slurm_job_name: z.string().nullable(),
  slurm_job_id: z.string().nullable(),
});
export type JobArray = z.infer<typeof ArraySchema>;

/** The file that lists an array's elements. */
export const ARRAY_FILE = 'array.json';

/** The input with the value at the one-level pointer `over` (e.g. `/sequences`) replaced. */
function withArtifact(input: Record<string, unknown>, over: string, artifactId: string): Record<string, unknown> {
  return { ...input, [over.slice(1).replace(/~1/g, '/').replace(/~0/g, '~')]: artifactId };
}

/** Refuses a pointer that is not an artifact field of the tool's input, or artifacts missing or repeated (I-REQ-JOB-ARRAY). */
/**
 * Checks a job array's --over and --artifacts against the tools `tools` lists (the Host's, or
 * the toolpacks loaded before a store is made): I-REQ-JOB-ARRAY when no artifact is given, one
 * is given twice, or `over` is not a top-level artifact field of the tool's input.
 */
export function checkOver(
  tools: () => readonly Pick<ReturnType<Host['tools']>[number], 'id' | 'validateInput'>[],
  call: JobCall,
  over: string,
  artifacts: readonly string[],
): void {
  const refuse = (message: string, details: Record<string, unknown>): HelixError =>
    new HelixError('I-REQ-JOB-ARRAY', { message, details: { over, ...details } });
  if (artifacts.length === 0) throw refuse('No artifacts to fan out over were given.', { artifacts: [] });
  const repeated = artifacts.filter((a, i) => artifacts.indexOf(a) !== i);
  if (repeated.length > 0)
    throw refuse(
      `The artifacts ${[...new Set(repeated)].join(', ')} are given more than once; each element is one run, and one artifact is one run.`,
      { repeated },
    );
  if (!/^\/[^/]+$/.test(over)) throw refuse(`--over ${over} is not the pointer of a top-level input field (e.g. /sequences).`, {});
  // Every loaded version of the tool is asked, so the call's own refusal (an unknown tool, a
  // version no version matches) comes from the dry runs that follow, with its own code.
  const input = withArtifact(call.input, over, artifacts[0]!);
  const versions = tools().filter((t) => t.id === call.tool_id);
  if (versions.length > 0 && !versions.some((t) => t.validateInput(input).artifacts.some((ref) => ref.path === over))) {
    throw refuse(`${over} is not an artifact field (x-helix-artifact) of the input of "${call.tool_id}".`, { tool_id: call.tool_id });
  }
}

/** Writes array.json by a rename. */
function writeArrayFile(dir: string, array: JobArray): void {
  writeBundleJson(path.join(dir, ARRAY_FILE), ArraySchema.parse(array));
}

/**
 * Writes one job bundle per artifact under `dir` (a new or empty directory), `<dir>/<index>`, and
 * submits them as one Slurm job array (unless `submit` is false). Every element is identified and
 * checked here, as this host would call it, and the array's script rendered under the policy's
 * slurm section, before anything is written or submitted.
 */
export async function submitJobArray(
  host: Host,
  call: JobCall,
  over: string,
  artifacts: readonly string[],
  dir: string,
  options: { submit?: boolean; resources?: ArrayResources } = {},
): Promise<JobArray> {
  checkOver(() => host.tools(), call, over, artifacts);
  const target = path.resolve(dir);
  const jobName = options.submit === false ? null : arrayJobName(call.tool_id, target);
  const script =
    jobName === null ? undefined : arrayScript(host.policy.policy, call.tool_id, target, jobName, artifacts.length, options.resources);
  for (const artifact_id of artifacts) await host.jobs.check({ ...call, input: withArtifact(call.input, over, artifact_id) });
  newDirectory(target, 'job array');
  const elements: JobArray['elements'] = [];
  let version = call.tool_version ?? '*';
  for (const [index, artifact_id] of artifacts.entries()) {
    // Inputs the elements share (all but the one fanned over) are stored once, in element 0.
    const job = await host.jobs.bundle({ ...call, input: withArtifact(call.input, over, artifact_id) }, path.join(target, String(index)), {
      linkFrom: [path.join(target, '0')],
    });
    elements.push({ index, artifact_id, run_id: job.run_id });
    version = job.request.tool_version;
  }
  const array: JobArray = {
    format: 'helix-job-array/1',
    tool_id: call.tool_id,
    tool_version: version,
    over,
    elements,
    slurm_job_name: jobName,
    slurm_job_id: null,
  };
  writeArrayFile(target, array);
  if (script === undefined) return array;
  const submitted = { ...array, slurm_job_id: await submitBatch(script) };
  writeArrayFile(target, submitted);
  return submitted;
}

/** What collecting one element gave: its collect, or the error that refused it. */
export type CollectedElement = { readonly index: number; readonly run_id: string; readonly slurm_state: string | null } & (
  | { readonly collected: Collected }
  | { readonly error: WireError }
);

/**
 * The array's Slurm job id: array.json's, else (submit died between sbatch and writing it) the one
 * job of the array's name, adopted into array.json; null when it was never submitted.
 */
async function arrayJobId(dir: string, array: JobArray): Promise<string | null> {
  if (array.slurm_job_id !== null || array.slurm_job_name === null) return array.slurm_job_id;
  const found = await findJobs({ name: array.slurm_job_name });
  if (found.length !== 1) return null;
  writeArrayFile(dir, { ...array, slurm_job_id: found[0]!.jobId });
  return found[0]!.jobId;
}

/** Polls until the array `jobId` has ended in Slurm, or `timeoutMs` passes; each element's Slurm state then. */
async function waitForElements(jobId: string | null, timeoutMs: number): Promise<Map<number, string>> {
  if (jobId === null) return new Map();
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = await jobStatus(jobId);
    if (status?.state.terminal === true || Date.now() >= until) return elementStates(status);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Collects every element of the job array in `dir` through `jobs` (a Host's, or a store home's),
 * after waiting up to `waitMs` for them to end (0: collect what is there), each verified first
 * with `verify`. One element's refusal does not stop the others.
 */
export async function collectJobArray(
  jobs: JobCollector,
  dir: string,
  waitMs = 0,
  verify = false,
): Promise<{ array: JobArray; elements: CollectedElement[] }> {
  const target = path.resolve(dir);
  const read = readBundleJson(path.join(target, ARRAY_FILE), ArraySchema);
  const array = { ...read, slurm_job_id: await arrayJobId(target, read) };
  const states = await waitForElements(array.slurm_job_id, waitMs);
  const elements: CollectedElement[] = [];
  for (const e of array.elements) {
    const base = { index: e.index, run_id: e.run_id, slurm_state: states.get(e.index) ?? null };
    try {
      elements.push({ ...base, collected: await jobs.collect(path.join(target, String(e.index)), { verify }) });
    } catch (err) {
      if (!isHelixError(err)) throw err;
      elements.push({ ...base, error: err.toWire() });
    }
  }
  return { array, elements };
}

/**
 * Cancels the job array in `dir` (scancel of every element not ended; ABI-SLURM-005); its Slurm
 * job id, its state and each started element's state afterwards, or a null id when it was never
 * submitted.
 */
export async function cancelJobArray(
  dir: string,
): Promise<{ slurm_job_id: string | null; state: string | null; states: Record<number, string> }> {
  const target = path.resolve(dir);
  const jobId = await arrayJobId(target, readBundleJson(path.join(target, ARRAY_FILE), ArraySchema));
  if (jobId === null) return { slurm_job_id: null, state: null, states: {} };
  await cancelJob(jobId);
  const status = await jobStatus(jobId);
  return { slurm_job_id: jobId, state: status?.state.name ?? null, states: Object.fromEntries(elementStates(status)) };
}
