// gc on a real LMDB store: what a dead writer left is removed, what anything refers to stays,
// and a live writer's chunks (written or found already stored) survive a gc in the middle.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { asBinary } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { importInline } from '../4-calls/artifacts/prepare-artifact.js';
import { RunOutputs } from '../4-calls/broker/outputs.js';
import { CHUNK_BYTES, commitBlob, discardBlob, readBlobBytes, writeChunks } from './blobs.js';
import { collectGarbage } from './gc.js';
import { openStore, type Store } from './open-store.js';
import { PENDING_HEADER, pendingWrites } from './pending.js';
import { rawDatabases } from './raw-access.js';

let t: { dir: string; cleanup: () => void };
let store: Store;
beforeEach(() => {
  t = tempDir('helix-gc-');
  store = openStore(t.dir);
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

async function* from(...parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield p;
}

/** An owner whose process has exited: what a SIGKILLed import leaves in its pending record. */
function deadOwner(): { pid: number; hostname: string; started_at: number } {
  const child = spawnSync(process.execPath, ['-e', '']);
  return { pid: child.pid!, hostname: hostname(), started_at: 1 };
}

/** Chunks of distinct content, `n` MiB. */
const mib = (n: number): Buffer => randomBytes(n * CHUNK_BYTES);

describe('collectGarbage', () => {
  it('collectGarbage removes the chunks of a dead process pending write and nothing anything refers to (ABI-STORE-051, ABI-STORE-052)', async () => {
    const kept = await importInline(store, mib(2), { label: 'kept' });
    const killed = await writeChunks(store, from(mib(3)));
    // The importer died: its record names a process that is gone.
    await rawDatabases(store).pending.put([killed.pending!, PENDING_HEADER], { owner: deadOwner(), created_at: Date.now() });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(5);

    const dry = await collectGarbage(store, { dryRun: true });
    expect(dry).toMatchObject({
      dry_run: true,
      removed: { chunks: 3, chunk_bytes: 3 * CHUNK_BYTES, blobs: 0, pending_writes: 1 },
      kept: { chunks: 2, blobs: 1 },
    });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(5);

    const report = await collectGarbage(store);
    expect(report.removed).toEqual({ chunks: 3, chunk_bytes: 3 * CHUNK_BYTES, blobs: 0, pending_writes: 1 });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(2);
    expect([...pendingWrites(store)]).toEqual([]);
    // ABI-STORE-055: the file does not shrink (gc's own commit may add a page or two); the pages are free for later writes.
    expect(report.space_after.file_bytes).toBeGreaterThanOrEqual(report.space_before.file_bytes);
    expect(report.space_after.file_bytes - report.space_before.file_bytes).toBeLessThan(64 * 1024);
    expect(report.space_after.free_bytes - report.space_before.free_bytes).toBeGreaterThanOrEqual(3 * CHUNK_BYTES);
    expect((await readBlobBytes(store, kept.sha256, 1 << 30)).length).toBe(2 * CHUNK_BYTES);
    expect((await collectGarbage(store)).removed).toEqual({ chunks: 0, chunk_bytes: 0, blobs: 0, pending_writes: 0 });
  });

  it('collectGarbage keeps every chunk a live writer relies on, one it found already stored included (ABI-STORE-050, ABI-STORE-053)', async () => {
    const first = mib(1);
    const second = mib(1);
    // An orphan with the writer's first chunk: the writer finds it and does not write it again.
    const orphan = await writeChunks(store, from(first));
    await store.transaction(() => discardBlob(store, orphan));
    let resume!: () => void;
    const paused = new Promise<void>((resolve) => (resume = resolve));
    async function* slow(): AsyncGenerator<Uint8Array> {
      yield first;
      await paused;
      yield second;
    }
    const writing = writeChunks(store, slow());
    const [firstKey] = orphan.chunks;
    // Wait until the writer has marked the chunk it found, then collect in the middle of its write.
    for (let i = 0; i < 400 && ![...pendingWrites(store)].some((w) => w.chunks.includes(firstKey!)); i++)
      await new Promise((r) => setTimeout(r, 25));
    const report = await collectGarbage(store);
    expect(report.kept).toMatchObject({ chunks: 1, live_pending_writes: 1 });
    expect(report.removed.chunks).toBe(0);
    resume();
    const blob = await writing;
    await store.transaction(() => commitBlob(store, blob));
    expect([...pendingWrites(store)]).toEqual([]);
    const bytes = await readBlobBytes(store, blob.sha256, 1 << 30);
    expect(bytes.equals(Buffer.concat([first, second]))).toBe(true);
  });

  it('collectGarbage removes a blob nothing names, and its chunks, but keeps blobs of artifacts, runs and modules', async () => {
    const artifact = await importInline(store, 'named by an artifact');
    const lone = await writeChunks(store, from(Buffer.from('named by nothing')));
    await store.transaction(() => commitBlob(store, lone));
    const report = await collectGarbage(store);
    expect(report.removed).toMatchObject({ blobs: 1, chunks: 1 });
    expect(rawDatabases(store).blobs.doesExist(lone.sha256)).toBe(false);
    expect(rawDatabases(store).blobs.doesExist(artifact.sha256)).toBe(true);
  });

  it('collectGarbage refuses with D-DATA-RECORD-INVALID, removing nothing, when an artifact record cannot be read (ABI-STORE-054)', async () => {
    await importInline(store, 'data');
    const orphan = await writeChunks(store, from(Buffer.from('orphan')));
    await store.transaction(() => discardBlob(store, orphan));
    await rawDatabases(store).artifacts.put('art_DAMAGED', asBinary(Buffer.from([0x92, 0x01])) as never);
    const err = await collectGarbage(store).catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'HelixError',
      code: 'D-DATA-RECORD-INVALID',
      details: { database: 'artifacts', key: 'art_DAMAGED' },
    });
    expect((err as Error).message).toMatch(/art_DAMAGED/);
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(2);
  });

  it('collectGarbage refuses with D-DATA-RECORD-INVALID, removing nothing, when a chunk or blob key is no sha256 digest (ABI-STORE-054)', async () => {
    await importInline(store, 'data');
    const orphan = await writeChunks(store, from(Buffer.from('orphan')));
    await store.transaction(() => discardBlob(store, orphan));
    // What a chunks tree that runs into another database's pages looks like: keys that are names.
    await rawDatabases(store).chunks.put('artifacts', Buffer.from('not a chunk'));
    const err = await collectGarbage(store).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'HelixError', code: 'D-DATA-RECORD-INVALID', details: { database: 'chunks', key: 'artifacts' } });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(3);
    await rawDatabases(store).chunks.remove('artifacts');
    await rawDatabases(store).blobs.put('runs', { size: 0, chunks: [] });
    const blobErr = await collectGarbage(store).catch((e: unknown) => e);
    expect(blobErr).toMatchObject({ name: 'HelixError', code: 'D-DATA-RECORD-INVALID', details: { database: 'blobs', key: 'runs' } });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(2);
  });

  it('an output a run never sealed ends its pending write, so gc reclaims its chunks (ABI-STORE-050)', async () => {
    const outputs = new RunOutputs(store, `run_${'0'.repeat(32)}`, [{ role: 'report', type: 'text' }] as never, 1 << 30);
    await outputs.write('report', Buffer.from('half a report'), false, {});
    expect(outputs.close()).toEqual([]);
    // Closing ends the writer: its last chunk is stored (under its pending write), then discarded.
    const settled = (): boolean => rawDatabases(store).chunks.getKeysCount() === 1 && [...pendingWrites(store)].length === 0;
    for (let i = 0; i < 400 && !settled(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(1);
    expect([...pendingWrites(store)]).toEqual([]);
    expect((await collectGarbage(store)).removed.chunks).toBe(1);
  });
});
