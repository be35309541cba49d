// The embedded LMDB store (README "Runs, artifacts and provenance"): one environment under the
// Helix home, with a named database per kind of record. Every state change that belongs together is
// one transaction; LMDB makes it atomic and durable, across processes too.
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { HelixError, isHelixError } from '../../abi/index.js';
import { refuseWhileCompacting } from './compact.js';
import { commitBase, type CommitBase } from './commit-base.js';
import { commitGroup } from './commit-group.js';
import { STORE_DATABASES, type StoreDatabases } from './databases.js';
import { attachHandle, type Store } from './handle.js';
import { checkStoreHeader } from './header.js';
import { closeUnderLifecycleLock, withLifecycleLock } from './lifecycle-lock.js';
import { writeOnCallingThread } from './sync-writes.js';

export { STORE_DATABASES, type BlobRecord, type StoreDatabaseName, type StoreDatabases } from './databases.js';
export type { Store } from './handle.js';

/**
 * The address space every process maps for the store file, fixed at open (ABI-STORE-001): 1 TiB.
 * lmdb-js otherwise starts at 128 KiB and remaps as the file grows, from whichever thread first
 * needs more (its additions to mdb_page_alloc and mdb_txn_renew0), without a lock, keeping every
 * old map until close; with several processes writing, every process remaps as the others grow
 * the file. A fixed map is never remapped below its size. It costs address space only: LMDB maps
 * the file read-only, and the file grows only as data is written.
 */
export const STORE_MAP_BYTES = 2 ** 40;

/** The store's file in its Helix home. */
export const STORE_FILE_NAME = 'helix.mdb';

/** Whether the Helix home `home` (absolute, as resolveHome gives it) holds a store: its file exists. */
export function storeExists(home: string): boolean {
  return existsSync(path.join(home, STORE_FILE_NAME));
}

/** The Helix home: `--home`, else `HELIX_HOME`, else `./.helix`, as an absolute path. */
export function resolveHome(flag?: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return path.resolve(flag ?? (env.HELIX_HOME !== undefined && env.HELIX_HOME !== '' ? env.HELIX_HOME : '.helix'));
}

function cannotOpen(file: string, why: string, cause?: unknown): HelixError {
  return new HelixError('P-PRECOND-STORE', { message: `The store at ${file} cannot be opened: ${why}`, details: { path: file }, cause });
}

/** The map size for a file of `bytes`: the fixed size, or twice the file past half of it. */
export function mapSizeFor(bytes: number): number {
  return Math.max(STORE_MAP_BYTES, 2 ** Math.ceil(Math.log2(Math.max(1, bytes) * 2)));
}

/** Refuses a home or lock file LMDB could not open for writing (P-PRECOND-STORE). */
function checkAccess(home: string, file: string): void {
  for (const [what, p] of [
    ['its directory', home],
    ['its lock file', `${file}-lock`],
  ] as const) {
    const info = statSync(p, { throwIfNoEntry: false });
    if (info === undefined) continue;
    if (what === 'its lock file' && !info.isFile()) throw cannotOpen(file, `${what} ${p} is not a regular file.`);
    try {
      accessSync(p, constants.R_OK | constants.W_OK);
    } catch (err) {
      throw cannotOpen(file, `${what} ${p} is not readable and writable by this user.`, err);
    }
  }
}

/**
 * Opens (creating if needed) the store under `home`. Everything lmdb-js would refuse is checked
 * first, because lmdb-js crashes the process when LMDB refuses an open: the home and the files
 * (P-PRECOND-STORE) and the file's header (D-DATA-STORE-HEADER).
 */
export function openStore(home: string): Store {
  const file = path.join(home, STORE_FILE_NAME);
  try {
    mkdirSync(home, { recursive: true });
  } catch (err) {
    throw cannotOpen(file, (err as Error).message, err);
  }
  checkAccess(home, file);
  // The header check too: a process creating the store writes its first pages under the lock.
  const { root, db, base } = withLifecycleLock(home, () => openEnvironment(home, file));
  // lmdb-js's status, which its typings leave out: 'closed' once the environment is closed.
  const isClosed = (): boolean => (root as unknown as { status: string }).status === 'closed';
  const store: Store = {
    home,
    path: file,
    transaction: (action) => root.transaction(action),
    transactionSync: (action) => root.transactionSync(action),
    flushed: async () => {
      await root.flushed;
    },
    close() {
      openStores.delete(store);
      if (isClosed()) return Promise.resolve();
      // Finishing transactions still queued for a shared commit go in before the store closes.
      commitGroup(store);
      // The commit-base check's descriptors go once LMDB has closed the environment (ABI-STORE-007).
      const close = (): Promise<void> => {
        const closing = root.close();
        if (isClosed()) {
          base.release();
          return closing;
        }
        return closing.finally(() => base.release());
      };
      return closeUnderLifecycleLock(home, close, isClosed);
    },
  };
  attachHandle(store, { root, db });
  openStores.add(store);
  closeAtExit();
  return store;
}

/** Stores this process has open, closed under the lifecycle lock if the process exits first. */
const openStores = new Set<Store>();
let exitHookAdded = false;

/**
 * Closes, when the process exits, the stores it left open: lmdb-js would close them anyway while
 * Node shuts down, but outside the lifecycle lock (ABI-STORE-006).
 */
function closeAtExit(): void {
  if (exitHookAdded) return;
  exitHookAdded = true;
  process.on('exit', () => {
    for (const store of openStores) {
      try {
        void store.close();
      } catch {
        // Exiting: lmdb-js closes what is left.
      }
    }
  });
}

/** Opens the LMDB environment and its databases; the caller holds the lifecycle lock. */
function openEnvironment(home: string, file: string): { root: RootDatabase; db: StoreDatabases; base: CommitBase } {
  const header = checkStoreHeader(file);
  let root: RootDatabase;
  try {
    // noMetaSync: each commit flushes its data pages but not the meta page, which the next
    // commit (or the OS) flushes. LMDB keeps the database intact; a machine crash may undo the
    // last commit, a process crash loses nothing (the write is in the OS page cache). It saves
    // one flush per commit, and a run costs two commits.
    // overlappingSync off (ABI-STORE-003): lmdb-js's default flushes each commit from a pool
    // thread after the write lock is released, keeps a third "flushed" meta page, and has a
    // process that opens the store alone roll the file back to it. Plain LMDB commits flush
    // before they return, on the calling thread.
    root = open({
      path: file,
      maxDbs: 24,
      compression: false,
      noMetaSync: true,
      overlappingSync: false,
      mapSize: mapSizeFor(header?.fileBytes ?? 0),
    });
  } catch (err) {
    throw cannotOpen(file, (err as Error).message, err);
  }
  // LMDB's open may have left the lock region naming an older commit than the newest: every write
  // transaction checks first, this open's own one below included (ABI-STORE-007).
  let base: CommitBase;
  try {
    base = commitBase(root, file);
  } catch (err) {
    void root.close();
    throw cannotOpen(file, (err as Error).message, err);
  }
  const writes = writeOnCallingThread(root, () => base.check());
  let db: StoreDatabases;
  try {
    // Opening creates a database the store lacks: one write transaction for all of them.
    db = root.transactionSync(() =>
      Object.fromEntries(
        Object.entries(STORE_DATABASES).map(([key, { name, encoding }]) => [
          key,
          root.openDB({ name, ...(encoding === undefined ? {} : { encoding }) }),
        ]),
      ),
    ) as unknown as StoreDatabases;
  } catch (err) {
    void root.close();
    base.release();
    if (isHelixError(err)) throw err;
    const message = (err as Error).message;
    // Pages LMDB cannot read are damage; anything else LMDB refuses keeps the store from opening.
    if (!/MDB_(CORRUPTED|PAGE_NOTFOUND|INVALID|BAD_DBI)/.test(message)) throw cannotOpen(file, message, err);
    throw new HelixError('D-DATA-STORE-DAMAGED', {
      message: `The store at ${file} cannot list its databases: ${message}`,
      details: { path: file, lmdb: message },
      cause: err,
    });
  }
  writes.adopt(Object.values(db));
  // After LMDB holds its lock, so a compaction either sees this process or is seen (ABI-STORE-057).
  refuseWhileCompacting(home, () => {
    void root.close();
    base.release();
  });
  return { root, db, base };
}
