// The commit-base check (ABI-STORE-007) on a real store: a lock region left naming an older commit,
// as lmdb-js's open leaves it when another process commits during the open, must not make the next
// write start from that older commit.
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { RootDatabase } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { isHelixError } from '../../abi/index.js';
import { commitBase, LOCK_TXNID_AT, StaleCommitBase, WriteNotBegun } from './commit-base.js';
import { newestCommit, pageSizeOf } from './header.js';
import { openStore, type Store } from './open-store.js';
import { rawDatabases } from './raw-access.js';
import { retryTransient, TRANSIENT_ATTEMPTS } from './sync-writes.js';

let t: { dir: string; cleanup: () => void };
let store: Store;
// A descriptor of the lock file stays open until the store is closed: closing one would drop this
// process's LMDB locks on it.
let lockFd: number;

beforeEach(() => {
  t = tempDir('helix-commit-base-');
  store = openStore(t.dir);
  lockFd = openSync(`${store.path}-lock`, 'r+');
});

afterEach(async () => {
  await store.close();
  closeSync(lockFd);
  t.cleanup();
});

function lockRegionCommit(): number {
  const buf = Buffer.alloc(8);
  readSync(lockFd, buf, 0, 8, LOCK_TXNID_AT);
  return Number(buf.readBigUInt64LE(0));
}

function setLockRegionCommit(txnid: number): void {
  const buf = Buffer.alloc(8);
  buf.writeBigUInt64LE(BigInt(txnid));
  writeSync(lockFd, buf, 0, 8, LOCK_TXNID_AT);
}

function newest(): number {
  const fd = openSync(store.path, 'r');
  try {
    return newestCommit(fd, pageSizeOf(fd));
  } finally {
    closeSync(fd);
  }
}

describe('the commit-base check (ABI-STORE-007)', () => {
  it('keeps a commit the lock region forgot: the next write starts from the newest commit and sets the region right', async () => {
    await rawDatabases(store).meta.put('a', 1);
    await rawDatabases(store).meta.put('b', 2);
    const before = newest();
    expect(lockRegionCommit()).toBe(before);
    // What an open racing the commit of `b` leaves behind.
    setLockRegionCommit(before - 1);
    await rawDatabases(store).meta.put('c', 3);
    expect(rawDatabases(store).meta.get('a')).toBe(1);
    expect(rawDatabases(store).meta.get('b')).toBe(2);
    expect(rawDatabases(store).meta.get('c')).toBe(3);
    expect(newest()).toBe(before + 1);
    expect(lockRegionCommit()).toBe(before + 1);
  });

  it('checks the transaction that opens the databases too', () => {
    const file = store.path;
    const before = newest();
    setLockRegionCommit(before - 1);
    const again = openStore(path.dirname(file));
    try {
      expect(lockRegionCommit()).toBe(before);
    } finally {
      void again.close();
    }
  });

  it('begins a stale transaction again at once, and ends with R-CAP-STORE-CONFLICT if it never stops being stale', () => {
    let attempts = 0;
    expect(
      retryTransient(() => {
        attempts += 1;
        if (attempts < 3) throw new StaleCommitBase(4, 5);
        return 'committed';
      }),
    ).toBe('committed');
    attempts = 0;
    let caught: unknown;
    try {
      retryTransient(() => {
        attempts += 1;
        throw new StaleCommitBase(4, 5);
      });
    } catch (err) {
      caught = err;
    }
    expect(attempts).toBe(TRANSIENT_ATTEMPTS + 1);
    expect(isHelixError(caught) && caught.code).toBe('R-CAP-STORE-CONFLICT');
  });

  it('refuses a write transaction LMDB did not begin (id 0) as a failed attempt, and leaves the lock region alone', () => {
    const before = lockRegionCommit();
    setLockRegionCommit(before - 1);
    const notBegun = { getWriteTxnId: () => 0 } as unknown as RootDatabase;
    const base = commitBase(notBegun, store.path);
    try {
      expect(() => base.check()).toThrow(WriteNotBegun);
      expect(lockRegionCommit()).toBe(before - 1);
      let attempts = 0;
      let caught: unknown;
      try {
        retryTransient(() => {
          attempts += 1;
          base.check();
        });
      } catch (err) {
        caught = err;
      }
      expect(attempts).toBe(TRANSIENT_ATTEMPTS);
      expect(caught).toMatchObject({
        code: 'R-CAP-STORE-CONFLICT',
        message: expect.stringContaining('LMDB did not begin the write transaction'),
      });
    } finally {
      base.release();
      setLockRegionCommit(before);
    }
  });
});
