// The store's named LMDB databases: what each holds, its name in the file and its value
// encoding. Only host/3-store reaches them (through handle.ts); everything else uses typed operations.
import type { Database } from 'lmdb';
import type { ArtifactRecord, RunEvent, RunRecord } from '../../abi/index.js';

/** A stored blob: its size and the sha256 of each chunk, in order. */
export interface BlobRecord {
  readonly size: number;
  readonly chunks: readonly string[];
}

/** The named databases; keys are ordered-binary (arrays sort element by element). */
export interface StoreDatabases {
  /** chunk sha256 -> bytes (content-addressed, so identical chunks are stored once). */
  readonly chunks: Database<Uint8Array, string>;
  /** blob sha256 -> BlobRecord; present only once every chunk is stored. */
  readonly blobs: Database<BlobRecord, string>;
  /** artifact id -> ArtifactRecord. */
  readonly artifacts: Database<ArtifactRecord, string>;
  /** [created_at, artifact id] -> artifact id: artifacts in creation order. */
  readonly artifactsByTime: Database<string, [number, string]>;
  /** Store-wide counters and markers, e.g. `last_created_at`. */
  readonly meta: Database<unknown, string>;
  /** module digest -> metadata of the compiled module. */
  readonly modules: Database<Record<string, unknown>, string>;
  /** params hash -> canonical params (RFC 8785 text). */
  readonly params: Database<string, string>;
  /** policy hash -> canonical policy (RFC 8785 text). */
  readonly policies: Database<string, string>;
  /** run id -> RunRecord. */
  readonly runs: Database<RunRecord, string>;
  /** run id -> owner, for runs now `running`: what startup recovery scans. */
  readonly activeRuns: Database<{ pid: number; hostname: string; started_at: number }, string>;
  /** [run id, seq] -> RunEvent. */
  readonly runEvents: Database<RunEvent, [string, number]>;
  /** [run id, seq] -> journal entry (capability calls and results). */
  readonly journal: Database<Record<string, unknown>, [string, number]>;
  /** [unix ms, pid, counter] -> audit record. */
  readonly audit: Database<Record<string, unknown>, [number, number, number] | [number]>;
  /** [tool id, key] -> value of the kv capability. */
  readonly kv: Database<unknown, [string, string]>;
  /**
   * [tool id, key] -> a capability's checkpoint (a Slurm job's id and directory, say): written by
   * the host, committed the moment it is put, never reachable by a guest (checkpoints.ts).
   */
  readonly checkpoints: Database<unknown, [string, string]>;
  /** idempotency key -> run id. */
  readonly idempotency: Database<string, string>;
  /** [write id, ''] -> owner of an in-progress write; [write id, chunk sha256] -> chunks it relies on (pending.ts). */
  readonly pending: Database<unknown, [string, string]>;
  /** what the loader checked once (an instrumented module, a checked schema) -> a sealed entry (load-cache.ts). */
  readonly loadCache: Database<unknown, string>;
}

/** A named database of the store. */
export type StoreDatabaseName = keyof StoreDatabases;

/** Each database's name in the LMDB file (what errors and `helix store check` show) and its value encoding. */
export const STORE_DATABASES: Readonly<Record<StoreDatabaseName, { readonly name: string; readonly encoding?: 'binary' | 'string' }>> = {
  chunks: { name: 'chunks', encoding: 'binary' },
  blobs: { name: 'blobs' },
  artifacts: { name: 'artifacts' },
  artifactsByTime: { name: 'artifacts_by_time' },
  meta: { name: 'meta' },
  modules: { name: 'modules' },
  params: { name: 'param_sets', encoding: 'string' },
  policies: { name: 'policies', encoding: 'string' },
  runs: { name: 'runs' },
  activeRuns: { name: 'active_runs' },
  runEvents: { name: 'run_events' },
  journal: { name: 'run_journal' },
  audit: { name: 'audit' },
  kv: { name: 'kv' },
  checkpoints: { name: 'checkpoints' },
  idempotency: { name: 'idempotency', encoding: 'string' },
  pending: { name: 'pending_writes' },
  loadCache: { name: 'load_cache' },
};
