// Every write of the store on the thread that makes it (ABI-STORE-002): lmdb-js's asynchronous
// writes, which its own writer thread commits, become synchronous transactions, so no thread but
// the caller's ever works in the LMDB environment, and closing it never races one.
import type { Database, Key, RootDatabase } from 'lmdb';
import { HelixError } from '../../abi/index.js';
import { StaleCommitBase, WriteNotBegun } from './commit-base.js';
import { pause } from './pause.js';

/** How many times a transaction LMDB aborted as inconsistent is attempted before R-CAP-STORE-CONFLICT. */
export const TRANSIENT_ATTEMPTS = 8;
/** The pause before attempt n+1 is n times this (about 0.7 s over all attempts). */
const TRANSIENT_PAUSE_MS = 25;

/** LMDB's abort of a transaction it found inconsistent (MDB_PROBLEM, or MDB_BAD_TXN at the commit of one), or a write transaction it did not begin. */
function isTransient(err: unknown): boolean {
  return err instanceof WriteNotBegun || (err instanceof Error && /MDB_PROBLEM|MDB_BAD_TXN/.test(err.message));
}

/**
 * Runs `attempt` again when LMDB aborts it as inconsistent (ABI-STORE-005). With several processes
 * writing one store, lmdb-js's LMDB now and then fails a commit that way ("mdb_page_touch no
 * parent": a page newer than the transaction), in our stress runs a few processes in a hundred,
 * with or without its writer thread and overlapping sync; LMDB aborts the whole transaction, so
 * nothing of it is written. When every attempt fails (it happens: the failure can persist within
 * one process) the write ends with R-CAP-STORE-CONFLICT, a clean retryable error. An attempt must therefore be repeatable: a transaction body that only
 * reads and writes the store.
 */
export function retryTransient<T>(attempt: () => T): T {
  let restarts = 0;
  for (let n = 1; ; ) {
    try {
      return attempt();
    } catch (err) {
      if (err instanceof StaleCommitBase) {
        // It set the lock region right before it was aborted (ABI-STORE-007): begun again at once,
        // it starts from the newest commit. Only openers racing it without end could repeat this.
        if (++restarts <= TRANSIENT_ATTEMPTS) continue;
      } else if (!isTransient(err)) {
        throw err;
      } else if (n < TRANSIENT_ATTEMPTS) {
        pause(TRANSIENT_PAUSE_MS * n);
        n += 1;
        continue;
      }
      const lmdb = (err as Error).message;
      throw new HelixError('R-CAP-STORE-CONFLICT', {
        message: `LMDB aborted a write of the store ${n + restarts} times as inconsistent while other processes used it (${lmdb.split('\n')[0]}); nothing of the write was stored.`,
        details: { attempts: n + restarts, lmdb, retry_after_ms: 1000 },
        cause: err,
      });
    }
  }
}

/**
 * Makes `transaction`, `put` and `remove` of `root` and of the databases given to `adopt`
 * synchronous transactions: they keep their promise-returning shape but have committed when they
 * return. lmdb-js would otherwise hand them to a writer thread that commits batches while this
 * thread goes on; the crash once seen at close (exit 139 in LMDB's environment close,
 * after the writes had committed) needs another thread in the environment while it closes.
 * `beforeWrite` runs first in every transaction that is not nested in another (ABI-STORE-007).
 */
export function writeOnCallingThread(
  root: RootDatabase,
  beforeWrite: () => void = () => {},
): { adopt(dbs: ReadonlyArray<Database<unknown, Key>>): void } {
  // Inside a transaction lmdb-js writes in place, and its putSync and removeSync call put and
  // remove there: inside one, those keep their own behaviour.
  let depth = 0;
  const synchronous = (target: RootDatabase | Database<unknown, Key>): void => {
    const transactionSync = target.transactionSync.bind(target);
    const inside = <T>(action: () => T, flags?: number): T =>
      transactionSync(() => {
        depth += 1;
        try {
          return action();
        } finally {
          depth -= 1;
        }
      }, flags);
    const whole = <T>(action: () => T, flags?: number): T =>
      inside(() => {
        beforeWrite();
        return action();
      }, flags);
    // Only a whole transaction is tried again; a nested one is part of its parent.
    Object.assign(target, {
      transactionSync: <T>(action: () => T, flags?: number): T =>
        depth > 0 ? inside(action, flags) : retryTransient(() => whole(action, flags)),
    });
  };
  const settle = <T>(write: () => T): Promise<T> => {
    try {
      return Promise.resolve(write());
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const transaction = <T>(action: () => T): Promise<T> => settle(() => root.transactionSync(action));
  synchronous(root);
  Object.assign(root, { transaction });
  return {
    adopt(dbs) {
      for (const d of dbs) {
        synchronous(d);
        const put = d.put.bind(d);
        const remove = d.remove.bind(d);
        Object.assign(d, {
          transaction,
          put: (key: Key, value: unknown) =>
            depth > 0 ? put(key, value) : settle(() => root.transactionSync(() => d.putSync(key, value))),
          remove: (key: Key) => (depth > 0 ? remove(key) : settle(() => root.transactionSync(() => d.removeSync(key)))),
        });
      }
    },
  };
}
