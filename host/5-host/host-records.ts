// What a store holds, as the Host offers it: artifacts (get, list, read, import, export), runs
// (get, list, show, events, journal, refusals, verify, RO-Crate export), the audit trail and the
// records of loaded modules, typed, so nothing above the Host handles the store itself.
// `openRecords` gives the same reads over a store home without toolpacks, for the CLI's artifact
// and runs commands.
import type { ArtifactRecord, JournalEntry, Policy, RunEvent, RunRecord, RunStatus } from '../../abi/index.js';
import {
  checkImport,
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
import { readAudit, type AuditRecord } from '../3-store/audit.js';
import { readBlob, readBlobBytes } from '../3-store/blobs.js';
import { readJournal } from '../3-store/journal.js';
import { readModuleRecord } from '../3-store/modules.js';
import { openStore, resolveHome, storeExists, type Store } from '../3-store/open-store.js';
import { readRecord, type RecordValue } from '../3-store/records.js';

export type { AuditRecord, ExportOptions, ListOptions, RefusedCall, RunCrate, RunCrateOptions, VerifyReport };

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
  /** The run's capability journal in call order, each entry checked as it is read; empty for an unknown run (ABI-CAP-007). */
  journal(runId: string): JournalEntry[];
  /** The capability calls the run's broker refused, and why (ABI-RUNID-009); none for an unknown run. */
  refusedCalls(runId: string): RefusedCall[];
  /** Runs the call again from its stored input and compares (`helix verify`). */
  verify(runId: string, timeoutMs?: number): Promise<VerifyReport>;
  /** Writes the run and its ancestry as an RO-Crate into `dir` (a new or empty directory). */
  exportCrate(runId: string, dir: string, options?: RunCrateOptions & { includeData?: boolean }): Promise<RunCrate & { dir: string }>;
}

/** An audit record as stored, with the time it was made (ms since the epoch). */
export type AuditEntry = AuditRecord & { readonly at: number };

/** The audit trail of a store: the decisions an operator may have to account for. */
export interface HostAudit {
  /** Records in time order, those of one run and of one kind when asked (`capability`, `log`, `store.module_record_rebuilt`, ...). */
  list(filter?: { readonly runId?: string; readonly kind?: string }): AuditEntry[];
}

/** What the store records of a module it loaded (size, ABI, exports, imports, the tools that use it). */
export type ModuleRecord = RecordValue<'modules'>;

/** The modules a store has loaded, by digest. */
export interface HostModules {
  /** The record of the module with this digest (`sha256:<hex>`), or undefined when it was never loaded here. */
  get(digest: string): ModuleRecord | undefined;
}

/** A store's artifacts, runs, audit trail and modules, where it lives, and how to close it. */
export interface StoreRecords {
  readonly artifacts: HostArtifacts;
  readonly runs: HostRuns;
  readonly audit: HostAudit;
  readonly modules: HostModules;
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
    journal: (runId) => readJournal(store, runId),
    refusedCalls(runId) {
      const run = getRun(store, runId);
      return run === undefined ? [] : refusedCalls(store, run);
    },
    verify: (runId, timeoutMs) => verifyRun(store, runId, timeoutMs),
    exportCrate: (runId, dir, options) => exportRunCrate(store, runId, dir, options),
  };
}

/** The audit trail of `store`. */
export function hostAudit(store: Store): HostAudit {
  return {
    list: (filter = {}) =>
      readAudit(store).filter(
        (a) => (filter.runId === undefined || a.run_id === filter.runId) && (filter.kind === undefined || a.kind === filter.kind),
      ),
  };
}

/** The module records of `store`. */
export function hostModules(store: Store): HostModules {
  return { get: (digest) => readModuleRecord(store, digest) };
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
    audit: hostAudit(store),
    modules: hostModules(store),
    home: store.home,
    path: store.path,
    close: () => store.close(),
  };
}

/**
 * Whether the Helix home `home` (default `HELIX_HOME`, else `./.helix`) holds a store, and
 * where: a command that only reads can fail without making one.
 */
export function storeAt(home?: string): { home: string; exists: boolean } {
  const resolved = resolveHome(home);
  return { home: resolved, exists: storeExists(resolved) };
}

/**
 * The checks an import of `file` under `policy` makes before it stores anything (label, type,
 * roots, file kind, size; without a file, label and type); throws its HelixError.
 */
export function checkFileImport(policy: Policy, file: string | undefined, meta?: ArtifactMeta): Promise<void> {
  return checkImport(policy, file, meta);
}
