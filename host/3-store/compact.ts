// `helix gc --compact` (ABI-STORE-056/057): an LMDB file never shrinks, so compaction writes a
// compacted copy (LMDB's copy with MDB_CP_COMPACT) and renames it over the file. That is safe
// only when no other process has the store open: a marker file keeps new openers out, and the
// kernel's lock table (/proc/locks: LMDB holds a lock on its lock file while a process has the
// environment open) shows every process still in.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HelixError } from '../../abi/index.js';
import { currentOwner, isOtherLiveOwner, readOwnerFile } from './owner.js';
import { storeHandle, type Store } from './handle.js';
import { withLifecycleLock } from './lifecycle-lock.js';

/** Name of the marker a compaction holds in the Helix home while it runs. */
export const COMPACTING_MARKER = 'helix.mdb-compacting';
const COPY_NAME = 'helix.mdb-compact.tmp';

/** What a compaction did to the file. */
export interface CompactReport {
  readonly file_bytes_before: number;
  readonly file_bytes_after: number;
}

function busy(message: string, details: Record<string, unknown>, hint?: string): HelixError {
  return new HelixError('P-PRECOND-STORE-BUSY', { message, details, ...(hint === undefined ? {} : { hint }) });
}

/**
 * Refuses to let this process use a store another live process is compacting (ABI-STORE-057).
 * openStore calls it right after LMDB has opened the file, so either the compaction sees this
 * process in the lock table or this process sees the marker; `close` releases what was opened.
 */
export function refuseWhileCompacting(home: string, close: () => void): void {
  const owner = readOwnerFile(path.join(home, COMPACTING_MARKER));
  if (owner === undefined || !isOtherLiveOwner(owner)) return;
  close();
  throw busy(
    `The store in ${home} is being compacted by process ${owner.pid}.`,
    { home, pid: owner.pid },
    'Retry when `helix gc --compact` has finished; it takes about as long as copying the store.',
  );
}

/** Device number as /proc/locks prints it (major:minor in hex). */
function deviceText(dev: number): string {
  const major = Number((BigInt(dev) >> 8n) & 0xfffn) | Number((BigInt(dev) >> 32n) & ~0xfffn);
  const minor = Number(BigInt(dev) & 0xffn) | Number((BigInt(dev) >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}`;
}

/** Pids holding a lock on `file` by the kernel's lock table, each once (-1 for a lock without a pid). */
export function lockHolders(file: string): number[] {
  if (!existsSync(file)) return [];
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'utf8');
  } catch (err) {
    throw busy(
      `Cannot tell whether another process has ${file} open: /proc/locks cannot be read (${(err as Error).message}).`,
      { file },
      'Compaction needs Linux; stop every Helix process using this home and copy the store by hand if you must shrink it.',
    );
  }
  const st = statSync(file);
  const id = `${deviceText(st.dev)}:${st.ino}`;
  const holders: number[] = [];
  for (const line of table.split('\n')) {
    const m = /^\d+:\s+(?:->\s+)?\S+\s+\S+\s+\S+\s+(-?\d+)\s+(\S+)\s/.exec(line);
    if (m !== null && m[2] === id && !holders.includes(Number(m[1]))) holders.push(Number(m[1]));
  }
  return holders;
}

function claimMarker(file: string): void {
  const owner = JSON.stringify(currentOwner());
  try {
    writeFileSync(file, owner, { flag: 'wx' });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = readOwnerFile(file);
  if (holder !== undefined && isOtherLiveOwner(holder))
    throw busy(`Process ${holder.pid} is already compacting this store.`, { pid: holder.pid });
  // A marker left by a compaction that died: take it over.
  rmSync(file, { force: true });
  writeFileSync(file, owner, { flag: 'wx' });
}

/**
 * Compacts the store in `home`, which this process must not have open: refuses with
 * P-PRECOND-STORE-BUSY, changing nothing, while any process (this one included) has it open,
 * before the copy and again before the swap. `open` opens the store (openStore).
 */
export async function compactStore(home: string, open: (home: string) => Store): Promise<CompactReport> {
  const file = path.join(home, 'helix.mdb');
  const lockFile = `${file}-lock`;
  const marker = path.join(home, COMPACTING_MARKER);
  const copy = path.join(home, COPY_NAME);
  const inUse = (when: string): void => {
    const pids = lockHolders(lockFile);
    if (pids.length > 0) {
      throw busy(
        `The store in ${home} is open in ${pids.length === 1 ? `process ${pids[0]}` : `processes ${pids.join(', ')}`} (${when}), so it cannot be compacted now.`,
        { home, pids },
      );
    }
  };
  claimMarker(marker);
  try {
    rmSync(copy, { force: true });
    inUse('before the copy');
    const before = statSync(file).size;
    const store = open(home);
    try {
      await storeHandle(store).root.backup(copy, true);
    } finally {
      await store.close();
    }
    // On disk before it replaces the file, so a crash leaves one whole file or the other.
    const fd = openSync(copy, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // Under the lifecycle lock, so no process is opening the store while the file is replaced.
    withLifecycleLock(home, () => {
      inUse('before the swap');
      renameSync(copy, file);
    });
    return { file_bytes_before: before, file_bytes_after: statSync(file).size };
  } finally {
    rmSync(copy, { force: true });
    rmSync(marker, { force: true });
  }
}
