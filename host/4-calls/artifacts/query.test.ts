// Reading artifacts back on a real store: creation order, snapshot boundaries that replay, paging,
// and the errors for bad ids and damaged records.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { commitArtifact, importInline, prepareArtifact } from './prepare-artifact.js';
import { getArtifact, listArtifacts, snapshotBoundary } from './query.js';

let t: { dir: string; cleanup: () => void };
let store: Store;
beforeEach(() => {
  t = tempDir('helix-query-');
  store = openStore(t.dir);
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

async function* once(text: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(text);
}

const importN = async (n: number, prefix: string): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await importInline(store, `${prefix} ${i}\n`, { label: `${prefix}${i}` })).id);
  return ids;
};

describe('snapshotBoundary and listArtifacts', () => {
  it('snapshotBoundary is zero for an empty store', () => {
    expect(snapshotBoundary(store)).toEqual({ as_of_created_at: 0, artifact_count: 0 });
    expect(listArtifacts(store, { asOfCreatedAt: 0 })).toEqual([]);
  });

  it('listArtifacts as of a snapshot boundary returns what existed then, after more imports', async () => {
    const first = await importN(3, 'early');
    const boundary = snapshotBoundary(store);
    expect(boundary.artifact_count).toBe(3);
    await importN(2, 'late');
    const asOf = listArtifacts(store, { asOfCreatedAt: boundary.as_of_created_at });
    expect(asOf.map((a) => a.id)).toEqual(first);
    expect(asOf.at(-1)!.created_at).toBe(boundary.as_of_created_at);
    expect(listArtifacts(store)).toHaveLength(5);
    expect(snapshotBoundary(store).artifact_count).toBe(5);
  });

  it('commitArtifact gives strictly increasing created_at to commits in the same millisecond, in one transaction or many', async () => {
    const prepared = await Promise.all(
      [0, 1, 2, 3].map((i) => prepareArtifact(store, once(`p${i}`), { maxBytes: 10, source: { kind: 'inline' } })),
    );
    const now = 1_700_000_000_000;
    const inOne = store.transactionSync(() => prepared.slice(0, 2).map((p) => commitArtifact(store, p, now)));
    const inMany = prepared.slice(2).map((p) => store.transactionSync(() => commitArtifact(store, p, now)));
    const times = [...inOne, ...inMany].map((r) => r.created_at);
    expect(times).toEqual([now, now + 1, now + 2, now + 3]);
    // A clock that goes back does not break the order either.
    const later = await importInline(store, 'after a clock step back');
    expect(later.created_at).toBeGreaterThan(now + 3);
  });

  it('importInline run concurrently still yields distinct, strictly increasing created_at in id order', async () => {
    const records = await Promise.all(Array.from({ length: 20 }, (_, i) => importInline(store, `c${i}`)));
    const listed = listArtifacts(store);
    const times = listed.map((r) => r.created_at);
    expect(new Set(times).size).toBe(20);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(listed.map((r) => r.id)).toEqual([...records.map((r) => r.id)].sort());
  });

  it('listArtifacts pages with limit and afterId', async () => {
    const ids = await importN(5, 'p');
    const page1 = listArtifacts(store, { limit: 2 });
    const page2 = listArtifacts(store, { limit: 2, afterId: page1.at(-1)!.id });
    const page3 = listArtifacts(store, { limit: 2, afterId: page2.at(-1)!.id });
    expect([...page1, ...page2, ...page3].map((a) => a.id)).toEqual(ids);
    expect(page3).toHaveLength(1);
  });

  it('listArtifacts refuses bad options with I-REQ-INPUT naming the option', () => {
    expect(() => listArtifacts(store, { limit: 0 })).toThrow(
      expect.objectContaining({ code: 'I-REQ-INPUT', message: expect.stringMatching(/^Invalid limit/) }),
    );
    expect(() => listArtifacts(store, { asOfCreatedAt: -1 })).toThrow(
      expect.objectContaining({ code: 'I-REQ-INPUT', message: expect.stringMatching(/asOfCreatedAt/) }),
    );
    expect(() => listArtifacts(store, { afterId: 'nope' })).toThrow(
      expect.objectContaining({ code: 'I-REQ-INPUT', message: expect.stringMatching(/afterId/) }),
    );
  });
});

describe('getArtifact', () => {
  it('getArtifact returns the parsed record', async () => {
    const record = await importInline(store, '{"a":1}', { label: 'doc' });
    expect(getArtifact(store, record.id)).toEqual(record);
  });

  it('getArtifact refuses a malformed id and names a missing one', () => {
    expect(() => getArtifact(store, 'art_123')).toThrow(
      expect.objectContaining({ code: 'I-REQ-INPUT', message: expect.stringMatching(/"art_123" is not an artifact id/) }),
    );
    const missing = 'art_01JD3Q4Z8X9V0W1Y2Z3A4B5C6D';
    expect(() => getArtifact(store, missing)).toThrow(
      expect.objectContaining({ code: 'P-PRECOND-ARTIFACT-NOT-FOUND', details: { id: missing } }),
    );
  });

  it('getArtifact reports a damaged stored record with D-DATA-RECORD-INVALID instead of returning it', async () => {
    const record = await importInline(store, 'x');
    rawDatabases(store).artifacts.putSync(record.id, { ...record, size: -5 });
    expect(() => getArtifact(store, record.id)).toThrow(
      expect.objectContaining({
        code: 'D-DATA-RECORD-INVALID',
        details: expect.objectContaining({ violations: [expect.stringMatching(/^size: /)] }),
      }),
    );
    expect(() => listArtifacts(store)).toThrow(expect.objectContaining({ code: 'D-DATA-RECORD-INVALID' }));
  });
});
