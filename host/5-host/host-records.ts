// What a store holds, as the Host offers it: artifacts (get, list, read, import, export) and runs
// (get, list, show, events, refusals, verify, RO-Crate export), typed, so nothing above the Host
// handles the store itself. `openRecords` gives the same reads over a store home without
// toolpacks, for the CLI's artifact and runs commands.
import type { ArtifactRecord, Policy, RunEvent, RunRecord, RunStatus } from '../../abi/index.js';
import {
  exportArtifact,
  getArtifact,
  importFile,
  importInline,
  listArtifacts,
  type ArtifactMeta,
  type ExportOptions,
  type ListOptions,
} from '../4-calls/artifacts/index.js';
import { refusedCalls, type RefusedCall } from '../4-calls/runs/refusals.js';
import { exportRunCrate, type RunCrate, type RunCrateOptions } from '../4-calls/provenance/ro-crate.js';
import { getRun, listRuns, requireRun, runEvents } from '../4-calls/runs/run-store.js';
import { verifyRun, type VerifyReport } from '../4-calls/runs/verify.js';
import { readBlob, readBlobBytes } from '../3-store/blobs.js';
import { openStore, resolveHome, type Store } from '../3-store/open-store.js';
import { readRecord } from '../3-store/records.js';

export type { ExportOptions, ListOptions, RefusedCall, RunCrate, RunCrateOptions, VerifyReport };

/** The artifacts of a store. Reads refuse a damaged record or chunk with its D-DATA error. */
export interface HostArtifacts {
  /** The artifact's record; P-PRECOND-ARTIFACT-NOT-FOUND when there is none. */
  get(id: string): ArtifactRecord;
  /** Artifacts in id order (creation order), a page at a time. */
  list(options?: ListOptions): ArtifactRecord[];
  /** The artifact's bytes as stored (compressed ones stay compressed), hash-checked; I-REQ-TOO-LARGE above `maxBytes`. */
  readBytes(id: string, maxBytes: number): Promise<Buffer>;
  /** The artifact's bytes as stored, chunk by chunk, each chunk and the whole hash-checked. */
  stream(id: string): AsyncIterable<Buffer>;
  /** Imports bytes or text given inline (at most `maxBytes`, default 16 MiB). */
  importInline(data: string | Uint8Array, meta?: ArtifactMeta & { readonly maxBytes?: number }): Promise<ArtifactRecord>;
  /** Imports a file inside the policy's import roots. */
  importFile(file: string, meta?: ArtifactMeta): Promise<ArtifactRecord>;
  /** Writes the artifact's bytes to `dest`, inside the policy's export roots, checked on the way out. */
  export(id: string, dest: string, options?: ExportOptions): Promise<{ path: string; bytes: number }>;
}

/** `helix runs show`: the run record, its refused capability calls, canonical params and events. */
export type RunShow = RunRecord & { readonly refused_calls: RefusedCall[]; readonly params: unknown; readonly events: RunEvent[] };

/** The recorded runs of a store. */
export interface HostRuns {
  /** The run's record, or undefined when the store has none. */
  get(runId: string): RunRecord | undefined;
  /** Runs newest first, filtered by status and tool. */
  list(filter?: { status?: RunStatus; toolId?: string; limit?: number }): RunRecord[];
  /** The run with its refused calls, params and events; P-PRECOND-RUN-NOT-FOUND when there is none. */
  show(runId: string): RunShow;
  /** The run's lifecycle events in order. */
  events(runId: string): RunEvent[];
  /** The capability calls the run's broker refused, and why (ABI-RUNID-009); none for an unknown run. */
  refusedCalls(runId: string): RefusedCall[];
  /** Runs the call again from its stored input and compares (`helix verify`). */
  verify(runId: string, timeoutMs?: number): Promise<VerifyReport>;
  /** Writes the run and its ancestry as an RO-Crate into `dir` (a new or empty directory). */
  exportCrate(runId: string, dir: string, options?: RunCrateOptions & { includeData?: boolean }): Promise<RunCrate & { dir: string }>;
}

/** A store's artifacts and runs, where it lives, and how to close it. */
export interface StoreRecords {
  readonly artifacts: HostArtifacts;
  readonly runs: HostRuns;
  /** The Helix home directory. */
  readonly home: string;
  /** The store's file. */
  readonly path: string;
  close(): Promise<void>;
}

/** The artifacts of `store`, with import and export bounded by `policy`. */
export function hostArtifacts(store: Store, policy: Policy): HostArtifacts {
  return {
    get: (id) => getArtifact(store, id),
    list: (options) => listArtifacts(store, options),
    readBytes: (id, maxBytes) => readBlobBytes(store, getArtifact(store, id).sha256, maxBytes),
    stream: (id) => readBlob(store, getArtifact(store, id).sha256),
    importInline: (data, meta) => importInline(store, data, meta),
    importFile: (file, meta) => importFile(store, policy, file, meta),
    export: (id, dest, options) => exportArtifact(store, policy, id, dest, options),
  };
}

/** The runs of `store`. */
export function hostRuns(store: Store): HostRuns {
  return {
    get: (runId) => getRun(store, runId),
    list: (filter) => listRuns(store, filter),
    show(runId) {
      const run = requireRun(store, runId);
      const params = readRecord(store, 'params', run.params_hash);
      return {
        ...run,
        refused_calls: refusedCalls(store, run),
        params: params === undefined ? null : (JSON.parse(params) as unknown),
        events: runEvents(store, runId),
      };
    },
    events: (runId) => runEvents(store, runId),
    refusedCalls(runId) {
      const run = getRun(store, runId);
      return run === undefined ? [] : refusedCalls(store, run);
    },
    verify: (runId, timeoutMs) => verifyRun(store, runId, timeoutMs),
    exportCrate: (runId, dir, options) => exportRunCrate(store, runId, dir, options),
  };
}

/**
 * Opens the store under `home` (default `HELIX_HOME`, else `./.helix`) for its records alone: no
 * toolpacks are loaded and nothing is written on opening. The caller closes it.
 */
export function openRecords(options: { home?: string; policy: Policy }): StoreRecords {
  const store = openStore(resolveHome(options.home));
  return {
    artifacts: hostArtifacts(store, options.policy),
    runs: hostRuns(store),
    home: store.home,
    path: store.path,
    close: () => store.close(),
  };
}
