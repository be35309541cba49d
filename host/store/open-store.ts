// The embedded LMDB store (DESIGN.md section 8): one environment under the Helix home, with a
// named database per kind of record. Every state change that belongs together is one
// transaction; LMDB makes it atomic and durable, across processes too.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { ArtifactRecord, RunEvent, RunRecord } from '../../abi/index.js';
import { HelixError } from '../errors.js';
import { refuseWhileCompacting } from './compact.js';

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
  /** idempotency key -> run id. */
  readonly idempotency: Database<string, string>;
  /** [write id, ''] -> owner of an in-progress write; [write id, chunk sha256] -> chunks it relies on (pending.ts). */
  readonly pending: Database<unknown, [string, string]>;
}

/** An open store. */
export interface Store {
  /** The Helix home directory. */
  readonly home: string;
  /** The LMDB file. */
  readonly path: string;
  readonly root: RootDatabase;
  readonly db: StoreDatabases;
  close(): Promise<void>;
}

/** The Helix home: `--home`, else `HELIX_HOME`, else `./.helix`, as an absolute path. */
export function resolveHome(flag?: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return path.resolve(flag ?? (env.HELIX_HOME !== undefined && env.HELIX_HOME !== '' ? env.HELIX_HOME : '.helix'));
}

/** Opens (creating if needed) the store under `home`. */
export function openStore(home: string): Store {
  const file = path.join(home, 'helix.mdb');
  let root: RootDatabase;
  try {
    mkdirSync(home, { recursive: true });
    // noMetaSync: each commit flushes its data pages but not the meta page, which the next
    // commit (or the OS) flushes. LMDB keeps the database intact; a machine crash may undo the
    // last commit, a process crash loses nothing (the write is in the OS page cache). It saves
    // one flush per commit, and a run costs two commits.
    root = open({ path: file, maxDbs: 24, compression: false, noMetaSync: true });
  } catch (err) {
    throw new HelixError('P-PRECOND-STORE', { message: `The store at ${file} cannot be opened: ${(err as Error).message}`, details: { path: file }, cause: err });
  }
  const db: StoreDatabases = {
    chunks: root.openDB({ name: 'chunks', encoding: 'binary' }),
    blobs: root.openDB({ name: 'blobs' }),
    artifacts: root.openDB({ name: 'artifacts' }),
    artifactsByTime: root.openDB({ name: 'artifacts_by_time' }),
    meta: root.openDB({ name: 'meta' }),
    modules: root.openDB({ name: 'modules' }),
    params: root.openDB({ name: 'param_sets', encoding: 'string' }),
    policies: root.openDB({ name: 'policies', encoding: 'string' }),
    runs: root.openDB({ name: 'runs' }),
    activeRuns: root.openDB({ name: 'active_runs' }),
    runEvents: root.openDB({ name: 'run_events' }),
    journal: root.openDB({ name: 'run_journal' }),
    audit: root.openDB({ name: 'audit' }),
    kv: root.openDB({ name: 'kv' }),
    idempotency: root.openDB({ name: 'idempotency', encoding: 'string' }),
    pending: root.openDB({ name: 'pending_writes' }),
  };
  // After LMDB holds its lock, so a compaction either sees this process or is seen (ABI-STORE-057).
  refuseWhileCompacting(home, () => void root.close());
  return {
    home,
    path: file,
    root,
    db,
    async close() {
      await root.close();
    },
  };
}
