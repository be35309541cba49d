// Making artifacts on a real LMDB store: previews, visibility only after commit, dedupe, and
// the refusals of bad metadata.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactRecordSchema } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { newestCommitIn } from '../../3-store/header.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { commitArtifact, importInline, prepareArtifact } from './prepare-artifact.js';
import { listArtifacts } from './query.js';

let t: { dir: string; cleanup: () => void };
let store: Store;
beforeEach(() => {
  t = tempDir('helix-prepare-');
  store = openStore(t.dir);
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

async function* pieces(data: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

const fasta = (n: number, len: (i: number) => number): string =>
  Array.from(
    { length: n },
    (_, i) =>
      `>seq${i} sample\n${'ACGTTGCA'
        .repeat(len(i) / 8)
        .replace(/(.{60})/g, '$1\n')
        .replace(/\n$/, '')}\n`,
  ).join('');

describe('importInline', () => {
  it('importInline records a FASTA preview: the first lines and the first five records', async () => {
    const record = await importInline(
      store,
      fasta(8, (i) => 80 * (i + 1)),
      { label: 'eight sequences' },
    );
    expect(ArtifactRecordSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      type: 'fasta',
      compression: null,
      media_type: 'text/x-fasta',
      label: 'eight sequences',
      source: { kind: 'inline' },
    });
    expect(record.preview.records).toEqual([0, 1, 2, 3, 4].map((i) => ({ id: `seq${i}`, length: 80 * (i + 1) })));
    expect(record.preview.text!.endsWith('\n')).toBe(true);
    expect(record.preview.text!.slice(0, -1).split('\n')).toHaveLength(20);
    expect(record.preview.text!.startsWith('>seq0 sample\nACGTTGCA')).toBe(true);
    expect(record.preview.truncated).toBe(true);
  });

  it('importInline shows a small text whole, untruncated', async () => {
    const record = await importInline(store, 'a\tb\n1\t2\n');
    expect(record.type).toBe('tsv');
    expect(record.preview).toEqual({ text: 'a\tb\n1\t2\n', truncated: false });
  });

  it('importInline previews gzip FASTQ from its decompressed content, records read through the whole stream', async () => {
    // Reads of 30 kb: five records need about 300 kB of content, far past the 64 KiB head.
    const read = (i: number): string => 'ACGT'.repeat(7500 + i);
    const fastq = Array.from({ length: 7 }, (_, i) => `@read${i}\r\n${read(i)}\r\n+\r\n${'I'.repeat(read(i).length)}\r\n`).join('');
    const record = await importInline(store, gzipSync(Buffer.from(fastq)), { label: null });
    expect(record).toMatchObject({ type: 'fastq', compression: 'gzip', media_type: 'text/x-fastq' });
    expect(record.preview.records).toEqual([0, 1, 2, 3, 4].map((i) => ({ id: `read${i}`, length: read(i).length })));
    expect(record.preview.text!.startsWith('@read0\nACGT')).toBe(true);
    expect(record.preview.text!.length).toBeLessThanOrEqual(4096);
  });

  it('importInline lists the records of a gzip FASTA larger than the head up to its end', async () => {
    const bases = (n: number): string => Array.from(randomBytes(n), (b) => 'ACGT'[b & 3]).join('');
    const text = `>one\n${bases(250_000).replace(/(.{80})/g, '$1\n')}\n>two\n${bases(150_000)}\n`;
    const gz = gzipSync(Buffer.from(text));
    expect(gz.length).toBeGreaterThan(64 * 1024);
    const record = await importInline(store, gz);
    expect(record).toMatchObject({ type: 'fasta', compression: 'gzip', size: gz.length });
    expect(record.preview.records).toEqual([
      { id: 'one', length: 250_000 },
      { id: 'two', length: 150_000 },
    ]);
  });

  it('importInline stores a truncated gzip FASTA as it is, listing only the records it could read whole', async () => {
    const text = Array.from({ length: 3 }, (_, i) => `>r${i}\n${'ACGT'.repeat(50)}\n`).join('');
    const gz = gzipSync(Buffer.from(text));
    const cut = gz.subarray(0, gz.length - 12);
    const record = await importInline(store, cut);
    expect(record).toMatchObject({ type: 'fasta', compression: 'gzip', size: cut.length });
    expect(record.preview.records).toEqual([
      { id: 'r0', length: 200 },
      { id: 'r1', length: 200 },
    ]);
  });

  it('importInline has no text preview for binary content', async () => {
    const record = await importInline(store, new Uint8Array([0, 1, 2, 3, 255, 254]));
    expect(record).toMatchObject({ type: 'binary', preview: { text: null, truncated: true } });
    expect(record.preview.records).toBeUndefined();
  });

  it('importInline takes a type override and keeps the detected compression', async () => {
    const record = await importInline(store, gzipSync(Buffer.from('chr1\t10\t20\nchr1\t30\t40\n')), { type: 'bed' });
    expect(record).toMatchObject({ type: 'bed', compression: 'gzip', media_type: 'text/plain' });
    expect(record.preview.text).toBe('chr1\t10\t20\nchr1\t30\t40\n');
  });

  it('importInline refuses data over its limit with I-REQ-TOO-LARGE and stores nothing', async () => {
    await expect(importInline(store, 'x'.repeat(11), { maxBytes: 10 })).rejects.toMatchObject({
      code: 'I-REQ-TOO-LARGE',
      details: { size: 11, max_bytes: 10 },
    });
    expect(rawDatabases(store).artifacts.getKeysCount()).toBe(0);
  });

  it('importInline refuses a bad type, label or limit with I-REQ-INPUT naming the field', async () => {
    await expect(importInline(store, 'x', { type: 'FASTA' })).rejects.toMatchObject({
      code: 'I-REQ-INPUT',
      details: { violations: [expect.stringMatching(/^type: /)] },
    });
    await expect(importInline(store, 'x', { type: 'fa sta' })).rejects.toMatchObject({ code: 'I-REQ-INPUT' });
    await expect(importInline(store, 'x', { label: 'two\nlines' })).rejects.toMatchObject({
      code: 'I-REQ-INPUT',
      details: { violations: [expect.stringMatching(/^label: /)] },
    });
    await expect(importInline(store, 'x', { label: 'l'.repeat(201) })).rejects.toMatchObject({ code: 'I-REQ-INPUT' });
    await expect(importInline(store, 'x', { maxBytes: -1 })).rejects.toMatchObject({
      code: 'I-REQ-INPUT',
      details: { violations: [expect.stringMatching(/^maxBytes: /)] },
    });
    expect(rawDatabases(store).artifacts.getKeysCount()).toBe(0);
  });

  it('importInline stores identical content once as a blob but as two artifacts', async () => {
    const a = await importInline(store, 'same bytes\n', { label: 'first' });
    const b = await importInline(store, 'same bytes\n', { label: 'second' });
    expect(a.id).not.toBe(b.id);
    expect(a.sha256).toBe(b.sha256);
    expect(rawDatabases(store).blobs.getKeysCount()).toBe(1);
    expect(rawDatabases(store).artifacts.getKeysCount()).toBe(2);
  });
});

describe('prepareArtifact and commitArtifact', () => {
  it('prepareArtifact stores chunks but the artifact appears only when commitArtifact runs in a transaction', async () => {
    const data = Buffer.from(fasta(3, () => 64));
    const prepared = await prepareArtifact(store, pieces(data, 7), { maxBytes: 1 << 20, source: { kind: 'inline' }, label: 'staged' });
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(1);
    expect(rawDatabases(store).blobs.getKeysCount()).toBe(0);
    expect(listArtifacts(store)).toEqual([]);
    const record = await store.transaction(() => commitArtifact(store, prepared));
    expect(listArtifacts(store)).toEqual([record]);
    expect(record.preview.records).toHaveLength(3);
    expect(record.size).toBe(data.length);
  });

  it('prepareArtifact links a run output to its run and refuses a malformed run id', async () => {
    const runId = `run_${'ab'.repeat(16)}`;
    const prepared = await prepareArtifact(store, pieces(Buffer.from('{"ok":true}'), 4), {
      maxBytes: 100,
      type: 'json',
      source: { kind: 'run', run_id: runId, role: 'output' },
      createdByRun: runId,
    });
    const record = store.transactionSync(() => commitArtifact(store, prepared));
    expect(record).toMatchObject({ created_by_run: runId, source: { kind: 'run', run_id: runId, role: 'output' }, type: 'json' });
    await expect(
      prepareArtifact(store, pieces(Buffer.from('x'), 1), { maxBytes: 10, source: { kind: 'inline' }, createdByRun: 'run_x' }),
    ).rejects.toMatchObject({
      code: 'I-REQ-INPUT',
    });
    await expect(
      prepareArtifact(store, pieces(Buffer.from('x'), 1), { maxBytes: 10, source: { kind: 'disk' } as never }),
    ).rejects.toMatchObject({ code: 'I-REQ-INPUT' });
  });

  it('prepareArtifact passes on the error of a failing source and commits nothing', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('>a\nACGT\n');
      throw new Error('source broke');
    }
    await expect(prepareArtifact(store, failing(), { maxBytes: 100, source: { kind: 'inline' } })).rejects.toThrow('source broke');
    expect(rawDatabases(store).blobs.getKeysCount()).toBe(0);
    expect(rawDatabases(store).artifacts.getKeysCount()).toBe(0);
  });
});

describe('storing chunks', () => {
  it('stores a 20 MiB artifact in 8 MiB transactions: four commits, not one per chunk (ABI-STORE-036)', async () => {
    const commits = (): number => newestCommitIn(store.path);
    const data = randomBytes(20 * 1024 * 1024);
    const before = commits();
    const record = await importInline(store, data, { maxBytes: data.length });
    // Three batches of chunks (8, 8 and 4 MiB) and the artifact's own transaction.
    expect(commits()).toBe(before + 4);
    expect(record.size).toBe(data.length);
    expect(rawDatabases(store).chunks.getKeysCount()).toBe(20);
  });
});
