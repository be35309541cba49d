// FOR TESTS AND REPAIR TOOLS ONLY: the raw LMDB databases of an open store, to plant damage or
// count records as stored. Production code never imports this file; it uses the typed operations
// of host/3-store, which check what they read and keep each group of writes in one transaction.
import type { RootDatabase } from 'lmdb';
import type { StoreDatabases } from './databases.js';
import { storeHandle, type Store } from './handle.js';

/** The named databases of `store`, unchecked. For tests and repair tools only. */
export function rawDatabases(store: Store): StoreDatabases {
  return storeHandle(store).db;
}

/** The LMDB root environment of `store`. For tests and repair tools only. */
export function rawRoot(store: Store): RootDatabase {
  return storeHandle(store).root;
}
