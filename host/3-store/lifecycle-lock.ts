// Opening and closing the store, one process at a time (ABI-STORE-006). LMDB's own protocol for
// processes sharing an environment has a window: the last process to close it takes the lock
// file's exclusive lock and destroys the shared write and reader mutexes before it lets go, while a
// process that began opening meanwhile waits for a shared lock, gets it once the closer is gone and
// then finds the mutexes destroyed. Its transactions cannot begin ("Invalid argument"), and lmdb-js,
// which does not check the begin of a write transaction, goes on to write with no transaction and
// the process dies by SIGSEGV. Every open and close of the store therefore runs under this lock: a
// file in the Helix home, created exclusively and held for the few milliseconds LMDB takes to set up
// or tear down its lock region, so a closing process and an opening one never overlap.
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HelixError } from '../../abi/index.js';
import { currentOwner, isOtherLiveOwner, readOwnerFile } from './owner.js';
import { pause } from './pause.js';

/** Name of the file a process holds in the Helix home while it opens or closes the store. */
export const LIFECYCLE_LOCK = 'helix.mdb-lifecycle';
/** How long a process waits for another one's open or close before it gives up (P-PRECOND-STORE-BUSY). */
export const LIFECYCLE_WAIT_MS = 30_000;
/** A lock file still without an owner after this long was left by a process that died creating it. */
const UNWRITTEN_STALE_MS = 2_000;
/** After waiting this long a process says on stderr whom it waits for. */
export const LIFECYCLE_NOTICE_MS = 1_000;

/** Lock files this process holds right now (an asynchronous close may hold one across a turn). */
const held = new Set<string>();

function ageMs(file: string): number {
  const info = statSync(file, { throwIfNoEntry: false });
  return info === undefined ? 0 : Date.now() - info.mtimeMs;
}

/**
 * Removes a lock left by a process that died holding it. The file is moved aside first, and put
 * back if what was moved is no longer the dead owner's lock (another waiter took over meanwhile).
 */
function takeOver(file: string, seen: string): void {
  const aside = `${file}.stale-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // gone already: someone else took it over or it was released
  }
  let moved: string | undefined;
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    moved = undefined;
  }
  if (moved !== seen) {
    try {
      linkSync(aside, file);
    } catch {
      // A newer lock exists; the one moved aside is dropped with it below.
    }
  }
  rmSync(aside, { force: true });
}

function acquire(home: string, file: string, waitMs: number): void {
  if (held.has(file)) {
    throw new HelixError('P-PRECOND-STORE-BUSY', {
      message: `This process is still closing the store in ${home}; it cannot open it again until the close has finished.`,
      details: { home },
      hint: "Await the store's close() before opening it again.",
    });
  }
  const record = JSON.stringify(currentOwner());
  const started = Date.now();
  const deadline = started + waitMs;
  let told = false;
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, record, { flag: 'wx' });
      held.add(file);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new HelixError('P-PRECOND-STORE', {
          message: `The store in ${home} cannot be opened: its lock file ${file} cannot be created (${(err as Error).message}).`,
          details: { path: file },
          cause: err,
        });
      }
    }
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // released between the two calls
    }
    const owner = readOwnerFile(file);
    if (owner !== undefined ? !isOtherLiveOwner(owner) : ageMs(file) > UNWRITTEN_STALE_MS) {
      takeOver(file, text);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new HelixError('P-PRECOND-STORE-BUSY', {
        message: `Another process${owner === undefined ? '' : ` (pid ${owner.pid})`} has been opening or closing the store in ${home} for ${Math.round(waitMs / 1000)} s.`,
        details: { home, ...(owner === undefined ? {} : { pid: owner.pid }) },
        hint: `If no Helix process is using this home, remove ${file}.`,
      });
    }
    if (!told && Date.now() - started >= LIFECYCLE_NOTICE_MS) {
      told = true;
      process.stderr.write(
        `helix: waiting for ${owner === undefined ? 'another process' : `process ${owner.pid}`} to finish opening or closing the store in ${home}\n`,
      );
    }
    pause(Math.min(2 ** attempt, 20));
  }
}

function release(file: string): void {
  held.delete(file);
  rmSync(file, { force: true });
}

/** Runs `body` (a synchronous open or close of the store in `home`) holding the lifecycle lock. */
export function withLifecycleLock<T>(home: string, body: () => T, waitMs = LIFECYCLE_WAIT_MS): T {
  const file = path.join(home, LIFECYCLE_LOCK);
  acquire(home, file, waitMs);
  try {
    return body();
  } finally {
    release(file);
  }
}

/**
 * Runs `close` holding the lifecycle lock until the close is done: at once when `isClosed` says so
 * right after the call (lmdb-js closes synchronously when no write or read is outstanding, as for
 * every store Helix opens), else when the promise `close` returned settles.
 */
export function closeUnderLifecycleLock(
  home: string,
  close: () => Promise<void>,
  isClosed: () => boolean,
  waitMs = LIFECYCLE_WAIT_MS,
): Promise<void> {
  const file = path.join(home, LIFECYCLE_LOCK);
  acquire(home, file, waitMs);
  let done: Promise<void>;
  try {
    done = close();
  } catch (err) {
    release(file);
    throw err;
  }
  if (isClosed()) {
    release(file);
    return done;
  }
  return done.finally(() => release(file));
}
