// The artifact layer end to end through its public entry: a multi-chunk file imported, listed,
// read back and exported byte for byte, and identical content stored once.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactRecordSchema, PolicySchema, type Policy } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { CHUNK_BYTES } from '../../3-store/blobs.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { exportArtifact, getArtifact, importFile, listArtifacts, snapshotBoundary } from './index.js';

let t: { dir: string; cleanup: () => void };
let root: string;
let store: Store;
let policy: Policy;
beforeEach(() => {
  t = tempDir('helix-artifacts-');
  root = realpathSync(t.dir);
  mkdirSync(path.join(root, 'data'));
  mkdirSync(path.join(root, 'out'));
  store = openStore(path.join(root, 'home'));
  policy = PolicySchema.parse({
    version: 1,
    tools: { allow: [] },
    paths: { importRoots: [path.join(root, 'data')], exportRoots: [path.join(root, 'out')] },
  });
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

describe('the artifact layer', () => {
  it('imports a multi-chunk file, lists and shows it, and exports identical bytes', async () => {
    const bytes = Buffer.concat([randomBytes(5.5 * 1024 * 1024), Buffer.from('\nthe end, in text\n')]);
    const file = path.join(root, 'data', 'mixed.bin');
    writeFileSync(file, bytes);
    const record = await importFile(store, policy, file, { label: 'random and text' });
    expect(ArtifactRecordSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({ size: bytes.length, type: 'binary', label: 'random and text', preview: { text: null } });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(Math.ceil(bytes.length / CHUNK_BYTES));

    expect(listArtifacts(store)).toEqual([record]);
    expect(getArtifact(store, record.id)).toEqual(record);
    expect(snapshotBoundary(store)).toEqual({ as_of_created_at: record.created_at, artifact_count: 1 });

    const dest = path.join(root, 'out', 'mixed.copy');
    expect(await exportArtifact(store, policy, record.id, dest)).toEqual({ path: dest, bytes: bytes.length });
    expect(readFileSync(dest).equals(bytes)).toBe(true);
  });

  it('stores identical content imported twice as one blob and two artifacts', async () => {
    const bytes = Buffer.concat([randomBytes(3 * CHUNK_BYTES), Buffer.from('tail')]);
    const a = path.join(root, 'data', 'a.bin');
    const b = path.join(root, 'data', 'b.bin');
    writeFileSync(a, bytes);
    writeFileSync(b, bytes);
    const first = await importFile(store, policy, a);
    const chunks = rawDatabases(store).chunks.getKeysCount();
    const second = await importFile(store, policy, b, { label: 'again' });
    expect(second.sha256).toBe(first.sha256);
    expect(second.id).not.toBe(first.id);
    expect(second.source).toMatchObject({ kind: 'import', path: b });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(chunks);
    expect(rawDatabases(store).blobs.getKeysCount()).toBe(1);
    expect(listArtifacts(store).map((r) => r.id)).toEqual([first.id, second.id]);
  });

  it('imports a FASTQ file with its type and record preview', async () => {
    const file = path.join(root, 'data', 'reads.fastq');
    writeFileSync(file, '@r1\nACGT\n+\nIIII\n@r2\nAC\n+\nII\n');
    const record = await importFile(store, policy, file, { type: undefined });
    expect(record).toMatchObject({ type: 'fastq', media_type: 'text/x-fastq', compression: null });
    expect(record.preview).toEqual({
      text: '@r1\nACGT\n+\nIIII\n@r2\nAC\n+\nII\n',
      records: [
        { id: 'r1', length: 4 },
        { id: 'r2', length: 2 },
      ],
      truncated: false,
    });
  });
});
