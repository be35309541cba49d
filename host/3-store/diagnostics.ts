// The store's one diagnostic face, for security reviewers' checks (conformance/) and repair tools:
// records read as stored, damage planted under a key of a named database, the chunks of a blob,
// gc and a chunk writer driven from outside a call, and the file's markers. It bypasses the typed
// operations on purpose (no schema check on read, no transaction grouping on write), so that a
// reviewer can show what the store does with records it did not write itself (ABI-STORE-020..065).
// Nothing that serves calls uses it; raw-access.ts stays for the store's own tests.
import { hostname } from 'node:os';
import { asBinary, type Database, type Key } from 'lmdb';
import { discardBlob, writeChunks, type WrittenBlob } from './blobs.js';
import { LOCK_TXNID_AT } from './commit-base.js';
import { COMPACTING_MARKER } from './compact.js';
import type { StoreDatabaseName, StoreDatabases } from './databases.js';
import { collectGarbage, type GcOptions, type GcReport } from './gc.js';
import { storeHandle, type Store } from './handle.js';
import { newestCommitIn } from './header.js';
import { LIFECYCLE_LOCK } from './lifecycle-lock.js';
import { processStartMs, type Owner } from './owner.js';
import { PENDING_HEADER } from './pending.js';
import { readActiveRuns } from './runs.js';

export { keyText } from './walk.js';
export { newestCommitIn } from './header.js';
export type { Owner, StoreDatabaseName, WrittenBlob };

/** The names of the files and keys the store keeps beside its records, as a reviewer plants or looks for them. */
export const STORE_MARKERS = {
  /** The file in the home an opener or closer holds (ABI-STORE-006). */
  lifecycleLock: LIFECYCLE_LOCK,
  /** The file in the home a compaction holds (ABI-STORE-057). */
  compacting: COMPACTING_MARKER,
  /** Where LMDB's lock file records the transaction a write starts from (ABI-STORE-007). */
  lockTxnidAt: LOCK_TXNID_AT,
  /** The second key element of a pending write's header, beside the chunks it marks (ABI-STORE-050). */
  pendingHeader: PENDING_HEADER,
} as const;

/** What was under a key before `plant` changed it (bytes undefined: the key was absent). */
export interface Planted {
  readonly db: StoreDatabaseName;
  readonly key: Key;
  readonly bytes: Buffer | undefined;
}

/** A key range of a database: from `start` (inclusive) to `end` (exclusive). */
export interface KeyRange {
  readonly start?: Key;
  readonly end?: Key;
}

/** The diagnostic face of one open store. */
export interface StoreDiagnostics {
  /** The Helix home directory. */
  readonly home: string;
  /** The store's file. */
  readonly path: string;
  /** The record under `key` as stored, decoded but not checked; undefined when absent. Throws when it does not decode. */
  record(db: StoreDatabaseName, key: Key): unknown;
  /** The bytes under `key` as stored, or undefined when absent. */
  bytes(db: StoreDatabaseName, key: Key): Buffer | undefined;
  /** Whether anything is stored under `key`. */
  has(db: StoreDatabaseName, key: Key): boolean;
  /** The keys of a database in key order, within `range`. */
  keys(db: StoreDatabaseName, range?: KeyRange): Key[];
  /** How many keys a database holds. */
  count(db: StoreDatabaseName): number;
  /**
   * Puts `value` under `key` in a commit of its own: raw bytes (a Buffer) as they are, any other
   * value in the database's encoding, undefined to remove the key. Returns what was there, for `restore`.
   */
  plant(db: StoreDatabaseName, key: Key, value: unknown): Promise<Planted>;
  /** Puts back what `plant` returned, last planted first. */
  restore(planted: readonly Planted[]): Promise<void>;
  /** The chunk ids (sha256 of each) of a stored blob, in order; undefined when the blob is not stored. */
  chunksOf(sha256: string): readonly string[] | undefined;
  /** The runs the store lists as running, with the process that owns each. */
  activeRuns(): Array<{ runId: string; owner: Owner }>;
  /** Collects garbage in this process, beside whatever else uses the store (ABI-STORE-053). */
  collectGarbage(options?: GcOptions): Promise<GcReport>;
  /**
   * Writes `source` as an import writes its data (chunks committed batch by batch, held by a
   * pending write of this process) without making it a blob or an artifact (ABI-STORE-036).
   */
  writeChunks(source: AsyncIterable<Uint8Array>): Promise<WrittenBlob>;
  /** Ends the pending write of what writeChunks wrote, leaving its chunks to gc. */
  discardChunks(blob: WrittenBlob): Promise<void>;
  /** Resolves once every write made so far is in the file: before the file itself is read. */
  flushed(): Promise<void>;
  /** The newest commit the file's meta pages record (ABI-STORE-034). */
  newestCommit(): number;
}

/** The diagnostic face of the open `store`; whoever opened the store closes it. */
export function storeDiagnostics(store: Store): StoreDiagnostics {
  const handle = (): StoreDatabases => storeHandle(store).db;
  // Each named database with the key and value types left open: a reviewer's planted record is of no type.
  const database = (db: StoreDatabaseName): Database<unknown, Key> => handle()[db] as unknown as Database<unknown, Key>;
  const bytes = (db: StoreDatabaseName, key: Key): Buffer | undefined => {
    const b = database(db).getBinary(key);
    return b === undefined ? undefined : Buffer.from(b);
  };
  const put = async (db: StoreDatabaseName, key: Key, value: unknown): Promise<void> => {
    if (value === undefined) await database(db).remove(key);
    else await database(db).put(key, Buffer.isBuffer(value) ? asBinary(value) : value);
  };
  return {
    home: store.home,
    path: store.path,
    record: (db, key) => database(db).get(key),
    bytes,
    has: (db, key) => database(db).doesExist(key),
    keys: (db, range = {}) => [...database(db).getKeys(range)],
    count: (db) => database(db).getKeysCount(),
    async plant(db, key, value) {
      const planted = { db, key, bytes: bytes(db, key) };
      await put(db, key, value);
      return planted;
    },
    async restore(planted) {
      for (const p of [...planted].reverse()) await put(p.db, p.key, p.bytes);
    },
    chunksOf: (sha256) => (handle().blobs.get(sha256) as { chunks?: readonly string[] } | undefined)?.chunks,
    activeRuns: () => readActiveRuns(store),
    collectGarbage: (options) => collectGarbage(store, options),
    writeChunks: (source) => writeChunks(store, source),
    discardChunks: (blob) => store.transaction(() => discardBlob(store, blob)),
    flushed: () => store.flushed(),
    newestCommit: () => newestCommitIn(store.path),
  };
}

/** The owner record the store would write for the process `pid` of this machine (its start time from /proc). */
export function ownerOf(pid: number): Owner {
  return { pid, hostname: hostname(), started_at: processStartMs(pid) ?? Date.now() };
}
