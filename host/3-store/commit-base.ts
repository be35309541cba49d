// Every write transaction starts from the newest commit (ABI-STORE-007).
//
// LMDB names the newest commit in two places: the meta pages of the data file and `mti_txnid` in
// the shared lock region, which is where a transaction that begins looks (it takes the meta page
// of that parity). lmdb-js's LMDB has every process that opens the environment copy the newest
// meta's id into `mti_txnid` at the end of the open, from the meta it read at the start
// (mdb_env_open2; LMDB's own code does that only when opening the previous snapshot). A commit another process makes in between is thereby forgotten: the next write
// transaction, in any process, starts from the older meta, writes over the commit, and leaves the
// free-page list describing a tree that is no longer there; pages in use are handed out again.
// That is the damage several importing processes used to leave (ABI-STORE-007): lost runs and chunks,
// free-page records with duplicate pages, one database's root inside another's tree.
//
// So the first thing each write transaction does, holding LMDB's write lock (no commit can happen
// meanwhile), is compare the commit it started from with the newest one the meta pages record. If
// it started from an older one, it puts the newest id back into the lock region, is aborted
// having written nothing, and is begun again, now from the newest commit.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import type { RootDatabase } from 'lmdb';
import { HelixError } from '../../abi/index.js';
import { LMDB_MAGIC, newestCommit, pageSizeOf } from './header.js';

/** Offsets in LMDB's lock file (mdb.c MDB_txbody: magic, format, txnid). */
const LOCK_MAGIC_AT = 0;
/** Where the lock region keeps the newest commit's id (8 bytes, little-endian). */
export const LOCK_TXNID_AT = 8;

/** A write transaction that began from an older commit than the newest; it has written nothing. */
export class StaleCommitBase extends Error {
  constructor(
    readonly startedFrom: number,
    readonly newest: number,
  ) {
    super(`the write transaction started from commit ${startedFrom}, but commit ${newest} is the newest`);
  }
}

/**
 * A write transaction LMDB did not begin: lmdb-js goes on without checking what `mdb_txn_begin`
 * returned, and its transaction has id 0. Tried again like an LMDB abort (ABI-STORE-005).
 */
export class WriteNotBegun extends Error {
  constructor() {
    super('LMDB did not begin the write transaction (its id is 0)');
  }
}

/**
 * This process's descriptor of each lock file it repaired, with the stores using it. It stays open
 * while any of them is open: closing any descriptor of the lock file drops every POSIX lock this
 * process holds on it, LMDB's included, and another process would then take the lock region for
 * its own.
 */
const lockFiles = new Map<string, { fd?: number; users: number }>();

/** The check run first in each write transaction of one open store. */
export interface CommitBase {
  /** Throws StaleCommitBase, having repaired the lock region, when the transaction began from an older commit. */
  check(): void;
  /** Closes the descriptors; called once LMDB has closed the environment. */
  release(): void;
}

/** The commit-base check for `root`, whose data file is `file` and lock file `file-lock`. */
export function commitBase(root: RootDatabase, file: string): CommitBase {
  const lockFile = `${file}-lock`;
  const data = openSync(file, 'r');
  const pageSize = pageSizeOf(data);
  const shared = lockFiles.get(lockFile) ?? { users: 0 };
  shared.users += 1;
  lockFiles.set(lockFile, shared);
  let released = false;
  return {
    check() {
      const id = root.getWriteTxnId();
      if (id === 0) throw new WriteNotBegun();
      const startedFrom = id - 1;
      const newest = newestCommit(data, pageSize);
      if (newest <= startedFrom) return;
      shared.fd ??= openSync(lockFile, 'r+');
      const magic = Buffer.alloc(4);
      readSync(shared.fd, magic, 0, 4, LOCK_MAGIC_AT);
      if (magic.readUInt32LE(0) !== LMDB_MAGIC) {
        throw new HelixError('P-PRECOND-STORE', {
          message: `The lock file ${lockFile} is not laid out as Helix expects, so a write that began from an older commit (${startedFrom}, newest ${newest}) cannot be set right.`,
          details: { path: lockFile, started_from: startedFrom, newest },
        });
      }
      const txnid = Buffer.alloc(8);
      txnid.writeBigUInt64LE(BigInt(newest));
      writeSync(shared.fd, txnid, 0, 8, LOCK_TXNID_AT);
      throw new StaleCommitBase(startedFrom, newest);
    },
    release() {
      if (released) return;
      released = true;
      closeSync(data);
      shared.users -= 1;
      if (shared.users > 0) return;
      lockFiles.delete(lockFile);
      if (shared.fd !== undefined) closeSync(shared.fd);
    },
  };
}
