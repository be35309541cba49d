// Fan-out as the Host offers it (abi/ABI.md, "Fan-out"): writing a job bundle from its store,
// what `helix job run` does on a node's store (import the job's inputs, make the call, write the
// result bundle) and collecting a result bundle into the store, typed, so the fan-out face and the
// CLI never hold the store. `openJobs` collects into a store home without toolpacks or a policy,
// for `helix job collect`.
import path from 'node:path';
import type { ArtifactRecord, ResponseEnvelope } from '../../abi/index.js';
import { openStore, resolveHome, type Store } from '../3-store/open-store.js';
import { importInputs } from '../4-calls/jobs/bundle-blobs.js';
import { JOB_FILES, readJob, readJobPolicy, type Job, type Result } from '../4-calls/jobs/bundle-format.js';
import type { Collected } from '../4-calls/jobs/collect-result.js';
import { callJob, checkJobCall, type CheckedCall, type JobCall, type JobCaller } from '../4-calls/jobs/job-call.js';
import { collectBundle } from '../4-calls/jobs/verify-result.js';
import { writeJobBundle, type JobOrigin } from '../4-calls/jobs/write-job.js';
import { writeResultBundle } from '../4-calls/jobs/write-result.js';

export type { CheckedCall, Collected, Job, JobCall, Result };

/** Reads job.json and the job's policy on a node before any store is opened (I-REQ-JOB-BUNDLE, D-DATA-BUNDLE-HASH). */
export { readJob, readJobPolicy };

/** Options of a collect. */
export interface CollectOptions {
  /** Re-execute the run on a scratch store first, and collect it only when it reproduces (D-DATA-BUNDLE-VERIFY otherwise). */
  readonly verify?: boolean;
}

/** What collects job results into a store: a Host's jobs, or a store home opened for it (openJobs). */
export interface JobCollector {
  /**
   * Brings the result of the job bundle in `bundleDir` into the store, checked whole first
   * (ABI-FANOUT-005, -006): `imported`, `unchanged` (a second collect) or `refused` (the node
   * refused the job and recorded no run). Throws P-PRECOND-JOB-RESULT-MISSING, I-REQ-JOB-BUNDLE,
   * D-DATA-BUNDLE-HASH, D-DATA-BUNDLE-IDENTITY, D-DATA-JOURNAL, and with `verify` D-DATA-BUNDLE-VERIFY.
   */
  collect(bundleDir: string, options?: CollectOptions): Promise<Collected>;
}

/** The Host's fan-out operations on its store. */
export interface HostJobs extends JobCollector {
  /**
   * Checks `call` as a job without writing anything: a dry run (the host's own refusal, with its
   * code), then C-CONTRACT-JOB-TOOL for a built-in and P-PRECOND-JOB-SECRETS for a tool that may
   * read secrets (ABI-FANOUT-002). Its identity and the tool it resolved to.
   */
  check(call: JobCall): Promise<CheckedCall>;
  /**
   * Writes the job bundle of `call` into `dir` (a new or empty directory, I-REQ-TARGET-NOT-EMPTY
   * otherwise), checked as `check` does first, and returns its job.json (ABI-FANOUT-001). An input
   * blob a bundle of `linkFrom` holds is hard-linked from it.
   */
  bundle(call: JobCall, dir: string, options?: { readonly linkFrom?: readonly string[] }): Promise<Job>;
  /**
   * Imports the input artifacts `inputs` (job.json's) from the job bundle in `bundleDir` into the
   * store with the records the submitting store gave them, in creation order, each checked against
   * its sha256 (D-DATA-BUNDLE-HASH); on a node, before `call`.
   */
  importInputs(bundleDir: string, inputs: readonly ArtifactRecord[]): Promise<void>;
  /** Makes the job's call, once a dry run shows it has the run id the job was made for (C-CONTRACT-JOB-TOOL otherwise). */
  call(job: Job): Promise<ResponseEnvelope>;
  /** Writes `<bundleDir>/result` from the store: run `runId` as recorded, with what it left, and `response` (ABI-FANOUT-004). */
  writeResult(bundleDir: string, runId: string, response: ResponseEnvelope): Promise<Result>;
}

/** `store` collecting job results. */
function collector(store: Store): JobCollector {
  return { collect: (bundleDir, options) => collectBundle(store, bundleDir, options?.verify === true) };
}

/** The fan-out operations of a host over `store`: `host` makes its calls and names its policy, toolpacks and home. */
export function hostJobs(store: Store, host: JobCaller & JobOrigin): HostJobs {
  return {
    ...collector(store),
    check: (call) => checkJobCall(host, call),
    bundle: (call, dir, options) => writeJobBundle(store, host, call, dir, options?.linkFrom ?? []),
    importInputs: (bundleDir, inputs) => importInputs(store, path.resolve(bundleDir), inputs),
    call: (job) => callJob(host, job),
    writeResult: (bundleDir, runId, response) => writeResultBundle(store, resultDir(bundleDir), runId, response),
  };
}

/** Where a job bundle's result bundle goes. */
function resultDir(bundleDir: string): string {
  return path.join(path.resolve(bundleDir), JOB_FILES.result);
}

/**
 * Writes `<bundleDir>/result` holding `response` alone: the refusal of a job refused before its
 * node store was opened (a bad bundle file, the node's home).
 */
export function writeRefusedResult(bundleDir: string, runId: string, response: ResponseEnvelope): Promise<Result> {
  return writeResultBundle(undefined, resultDir(bundleDir), runId, response);
}

/** A store home opened to collect job results into; the caller closes it. */
export interface JobStore extends JobCollector {
  /** The Helix home directory. */
  readonly home: string;
  close(): Promise<void>;
}

/**
 * Opens the store under `home` (default `HELIX_HOME`, else `./.helix`) to collect job results:
 * no toolpacks are loaded and no policy is read, as `helix job collect` needs neither.
 */
export function openJobs(home: string | undefined): JobStore {
  const store = openStore(resolveHome(home));
  return { ...collector(store), home: store.home, close: () => store.close() };
}
