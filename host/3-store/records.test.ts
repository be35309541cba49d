// The checked reads on a real store whose records are damaged byte by byte (through a raw view of
// the same LMDB database): each damage is one D-DATA error naming the database, the key and what
// is wrong (ABI-STORE-020), never a ZodError or a decoder's exception.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { HelixError } from '../../abi/index.js';
import { sha256Digest } from '../1-base/hashing.js';
import { openStore, STORE_DATABASES, type Store, type StoreDatabaseName } from './open-store.js';
import { rawDatabases, rawRoot } from './raw-access.js';
import { readRange, readRecord } from './records.js';

let t: { dir: string; cleanup: () => void };
let store: Store;
beforeEach(() => {
  t = tempDir('helix-records-');
  store = openStore(path.join(t.dir, 'home'));
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

/** Overwrites the stored bytes of `key` in `db`, as disk damage would. */
function corrupt(db: StoreDatabaseName, key: unknown, bytes: Buffer): void {
  const raw = rawRoot(store).openDB({ name: STORE_DATABASES[db].name, encoding: 'binary' });
  raw.putSync(key as string, bytes);
}

/** The HelixError `read` throws. */
function failure(read: () => unknown): HelixError {
  try {
    read();
  } catch (err) {
    expect(err).toBeInstanceOf(HelixError);
    return err as HelixError;
  }
  throw new Error('the read succeeded');
}

const RUN_ID = `run_${'a'.repeat(32)}`;

describe('readRecord', () => {
  it('returns a sound record parsed and undefined for an absent key', () => {
    rawDatabases(store).kv.putSync(['t', 'k'], { n: 1 });
    expect(readRecord(store, 'kv', ['t', 'k'])).toEqual({ n: 1 });
    expect(readRecord(store, 'runs', RUN_ID)).toBeUndefined();
  });

  it('refuses bytes that do not decode with D-DATA-RECORD-INVALID naming the database and key', () => {
    // 0xc1 is the one byte MessagePack never uses.
    corrupt('runs', RUN_ID, Buffer.from([0xc1, 0xc1, 0xc1]));
    const err = failure(() => readRecord(store, 'runs', RUN_ID));
    expect(err.code).toBe('D-DATA-RECORD-INVALID');
    expect(err.details).toMatchObject({ database: 'runs', key: RUN_ID, problem: expect.stringMatching(/cannot be decoded/) });
    expect(err.message).toContain(`The record ${RUN_ID} in the store's runs database is damaged`);
  });

  it('refuses a record that decodes but breaks its schema, listing the violations', () => {
    rawDatabases(store).runs.putSync(RUN_ID, { run_id: RUN_ID, status: 'exploded' } as never);
    const err = failure(() => readRecord(store, 'runs', RUN_ID));
    expect(err.code).toBe('D-DATA-RECORD-INVALID');
    expect(err.details.violations).toEqual(
      expect.arrayContaining([expect.stringMatching(/^status: /), expect.stringMatching(/^tool_id: /)]),
    );
    expect(JSON.stringify(err.details)).not.toContain('ZodError');
  });

  it('refuses a record stored under another key than the one it names', () => {
    rawDatabases(store).journal.putSync(['run_x', 3], { seq: 4 } as never);
    expect(failure(() => readRecord(store, 'journal', ['run_x', 3])).details).toMatchObject({
      database: 'run_journal',
      key: '["run_x",3]',
    });
    rawDatabases(store).artifactsByTime.putSync([5, 'art_01ARZ3NDEKTSV4RRFFQ69G5FAV'], 'art_01ARZ3NDEKTSV4RRFFQ69G5FAW');
    expect(failure(() => readRecord(store, 'artifactsByTime', [5, 'art_01ARZ3NDEKTSV4RRFFQ69G5FAV'])).details.problem).toMatch(
      /points at art_01ARZ3NDEKTSV4RRFFQ69G5FAW/,
    );
  });

  it('refuses params whose text no longer hashes to their key with D-DATA-CHECKSUM', () => {
    const text = '{"a":1}';
    rawDatabases(store).params.putSync(sha256Digest(text), '{"a":2}');
    expect(failure(() => readRecord(store, 'params', sha256Digest(text))).code).toBe('D-DATA-CHECKSUM');
    rawDatabases(store).policies.putSync('sha256:x', 'not json');
    expect(failure(() => readRecord(store, 'policies', 'sha256:x')).details).toMatchObject({
      database: 'policies',
      violations: ['(record): is not JSON text'],
    });
  });

  it('checks blob, module and kv records too', () => {
    corrupt('blobs', 'b'.repeat(64), Buffer.from([0x92, 0x01])); // a truncated array
    expect(failure(() => readRecord(store, 'blobs', 'b'.repeat(64))).details).toMatchObject({ database: 'blobs' });
    rawDatabases(store).modules.putSync('sha256:m', { digest: 'sha256:m' });
    expect(failure(() => readRecord(store, 'modules', 'sha256:m')).details).toMatchObject({ database: 'modules' });
    corrupt('kv', ['tool', 'key'], Buffer.from([0xd9])); // a string header with no string
    expect(failure(() => readRecord(store, 'kv', ['tool', 'key'])).details).toMatchObject({ database: 'kv', key: '["tool","key"]' });
  });
});

describe('readRange', () => {
  it('yields sound records in key order and stops at the damaged one, naming its key', () => {
    for (let seq = 0; seq < 4; seq++) rawDatabases(store).runEvents.putSync(['run_r', seq], { at: seq, kind: 'k', detail: {} });
    expect([...readRange(store, 'runEvents', { start: ['run_r', 0], end: ['run_r', 99] })].map((e) => e.value.at)).toEqual([0, 1, 2, 3]);
    corrupt('runEvents', ['run_r', 2], Buffer.from([0xc1]));
    const seen: number[] = [];
    const err = failure(() => {
      for (const e of readRange(store, 'runEvents', { start: ['run_r', 0], end: ['run_r', 99] })) seen.push(e.value.at);
    });
    expect(seen).toEqual([0, 1]);
    expect(err.details).toMatchObject({ database: 'run_events', key: '["run_r",2]' });
  });
});
