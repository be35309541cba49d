// Compaction on a real LMDB file with real processes: refused while another process has the
// store open, shrinking the file once it is alone, and keeping openers out while it runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { importInline } from '../4-calls/artifacts/prepare-artifact.js';
import { getArtifact } from '../4-calls/artifacts/query.js';
import { packageRoot } from '../1-base/paths.js';
import { processStartMs } from './owner.js';
import { readBlobBytes, writeChunks } from './blobs.js';
import { compactStore, COMPACTING_MARKER, lockHolders } from './compact.js';
import { collectGarbage } from './gc.js';
import { openStore } from './open-store.js';
import { PENDING_HEADER } from './pending.js';
import { rawDatabases } from './raw-access.js';

let t: { dir: string; cleanup: () => void };
const children: ChildProcess[] = [];
beforeEach(() => {
  t = tempDir('helix-compact-');
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  t.cleanup();
});

/** Another process with the store's LMDB environment open (as any helix command has), until killed. */
async function holder(home: string): Promise<ChildProcess> {
  const script = `import { open } from 'lmdb'; const r = open({ path: ${JSON.stringify(path.join(home, 'helix.mdb'))}, maxDbs: 24 }); r.get('x'); console.log('open'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: packageRoot(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

/** A store with `keep` MiB in an artifact and `drop` MiB of chunks a dead writer left, collected. */
async function storeWithFreePages(home: string, keep: number, drop: number): Promise<string> {
  const store = openStore(home);
  const kept = await importInline(store, randomBytes(keep << 20), { maxBytes: 1 << 30 });
  async function* once(): AsyncGenerator<Uint8Array> {
    yield randomBytes(drop << 20);
  }
  const killed = await writeChunks(store, once());
  await rawDatabases(store).pending.put([killed.pending!, PENDING_HEADER], {
    owner: { pid: 2 ** 22 + 1, hostname: hostname(), started_at: 1 },
    created_at: 0,
  });
  await collectGarbage(store);
  await store.close();
  return kept.id;
}

describe('compactStore', () => {
  it('lockHolders lists the processes that have the store open, from the kernel lock table', async () => {
    const home = t.dir;
    await storeWithFreePages(home, 1, 1);
    const lock = path.join(home, 'helix.mdb-lock');
    expect(lockHolders(lock)).toEqual([]);
    const child = await holder(home);
    expect(lockHolders(lock)).toContain(child.pid);
  });

  it('compactStore refuses with P-PRECOND-STORE-BUSY while another process has the store open, changing nothing (ABI-STORE-056)', async () => {
    const home = t.dir;
    const id = await storeWithFreePages(home, 2, 8);
    const size = statSync(path.join(home, 'helix.mdb')).size;
    const child = await holder(home);
    const err = await compactStore(home, openStore).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'HelixError', code: 'P-PRECOND-STORE-BUSY', details: { pids: [child.pid] } });
    expect((err as Error).message).toMatch(new RegExp(`process ${child.pid}`));
    expect(statSync(path.join(home, 'helix.mdb')).size).toBe(size);

    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const report = await compactStore(home, openStore);
    console.log(`compaction: ${report.file_bytes_before} -> ${report.file_bytes_after} bytes (8 MiB freed by gc, 2 MiB kept)`);
    expect(report.file_bytes_before - report.file_bytes_after).toBeGreaterThanOrEqual(7 << 20);
    const store = openStore(home);
    try {
      const a = getArtifact(store, id);
      expect((await readBlobBytes(store, a.sha256, 1 << 30)).length).toBe(2 << 20);
      // The compacted file takes writes as before.
      expect((await importInline(store, 'after compaction')).size).toBe(16);
    } finally {
      await store.close();
    }
  });

  it('openStore refuses with P-PRECOND-STORE-BUSY while another live process is compacting (ABI-STORE-057)', async () => {
    const home = t.dir;
    await storeWithFreePages(home, 1, 1);
    const child = await holder(path.join(t.dir, 'elsewhere'));
    writeFileSync(
      path.join(home, COMPACTING_MARKER),
      JSON.stringify({ pid: child.pid, hostname: hostname(), started_at: processStartMs(child.pid!) }),
    );
    expect(() => openStore(home)).toThrow(
      expect.objectContaining({ code: 'P-PRECOND-STORE-BUSY', message: expect.stringMatching(/being compacted/) }),
    );
    // A marker whose process is gone does not keep anyone out.
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const store = openStore(home);
    await store.close();
  });
});
