import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isHelixError } from '../../abi/index.js';
import { processStartMs } from './owner.js';
import { LIFECYCLE_LOCK, withLifecycleLock } from './lifecycle-lock.js';

let home: string;
let lock: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'helix-lifecycle-lock-'));
  lock = path.join(home, LIFECYCLE_LOCK);
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('the store lifecycle lock (ABI-STORE-006)', () => {
  it('holds the lock file with this process as owner while the body runs, and removes it after', () => {
    const seen = withLifecycleLock(home, () => JSON.parse(readFileSync(lock, 'utf8')) as { pid: number; hostname: string });
    expect(seen).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(existsSync(lock)).toBe(false);
  });

  it('releases the lock when the body throws', () => {
    expect(() =>
      withLifecycleLock(home, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock left by a process that died holding it', () => {
    writeFileSync(lock, JSON.stringify({ pid: deadPid(), hostname: hostname(), started_at: Date.now() - 60_000 }));
    expect(withLifecycleLock(home, () => 'ran')).toBe('ran');
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over an empty lock file older than a process needs to write its owner, and waits for a fresh one', () => {
    writeFileSync(lock, '');
    const old = (Date.now() - 10_000) / 1000;
    utimesSync(lock, old, old);
    expect(withLifecycleLock(home, () => 'ran')).toBe('ran');
    writeFileSync(lock, '');
    const err = (() => {
      try {
        withLifecycleLock(home, () => 'ran', 300);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isHelixError(err) && err.code).toBe('P-PRECOND-STORE-BUSY');
    expect(existsSync(lock)).toBe(true);
  });

  it('waits for a live owner, says on stderr whom it waits for, and gives up with P-PRECOND-STORE-BUSY', () => {
    const ppid = process.ppid;
    writeFileSync(lock, JSON.stringify({ pid: ppid, hostname: hostname(), started_at: processStartMs(ppid) }));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let err: unknown;
    let written: string[];
    const started = Date.now();
    try {
      withLifecycleLock(home, () => 'ran', 1_500);
    } catch (e) {
      err = e;
    } finally {
      written = stderr.mock.calls.map((c) => String(c[0]));
      stderr.mockRestore();
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(isHelixError(err) && { code: err.code, details: err.details }).toEqual({
      code: 'P-PRECOND-STORE-BUSY',
      details: { home, pid: ppid },
    });
    expect(written).toEqual([`helix: waiting for process ${ppid} to finish opening or closing the store in ${home}\n`]);
    // The live owner's lock is left alone.
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: ppid });
  });
});
