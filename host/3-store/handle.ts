// The face of an open store and its raw LMDB handle, kept apart: outside host/3-store a Store is its
// home, its file, transactions and close; the handle behind it (the root environment and the named
// databases) is reached only through storeHandle, which only host/3-store files import.
import type { RootDatabase } from 'lmdb';
import type { StoreDatabases } from './databases.js';

/**
 * An open store (openStore). Records are read and written through the typed operations of
 * host/3-store (runs.ts, artifact-records.ts, blobs.ts, journal.ts, audit.ts, kv.ts, modules.ts,
 * documents.ts), which take it as their first argument.
 */
export interface Store {
  /** The Helix home directory. */
  readonly home: string;
  /** The LMDB file. */
  readonly path: string;
  /**
   * Runs `action` as one write transaction on the calling thread (ABI-STORE-002): what it writes
   * commits together or not at all. A transaction LMDB aborts as inconsistent is run again
   * (ABI-STORE-005), after the commit-base check (ABI-STORE-007), so `action` must only read and
   * write the store. Nested in another transaction, it is part of that one.
   */
  transaction<T>(action: () => T): Promise<T>;
  /** transaction, returning the result itself rather than a promise. */
  transactionSync<T>(action: () => T): T;
  /** Resolves once every write made so far is flushed to the file. */
  flushed(): Promise<void>;
  close(): Promise<void>;
}

/** The raw LMDB handle behind a store: for host/3-store files only. */
export interface StoreHandle {
  readonly root: RootDatabase;
  readonly db: StoreDatabases;
}

const handles = new WeakMap<Store, StoreHandle>();

/** Ties a store to its handle; openStore calls it once. */
export function attachHandle(store: Store, handle: StoreHandle): void {
  handles.set(store, handle);
}

/** The raw handle of a store opened by openStore (a host bug when there is none). */
export function storeHandle(store: Store): StoreHandle {
  const handle = handles.get(store);
  if (handle === undefined) throw new Error('storeHandle: the store was not opened by openStore');
  return handle;
}
