// Shared commits (ABI-STORE-035) on a real store: transactions queued together commit as one LMDB
// commit, one that throws fails alone, and closing the store commits what is still queued.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { groupedTransaction } from './commit-group.js';
import { newestCommitIn } from './header.js';
import { openStore, type Store } from './open-store.js';
import { rawDatabases } from './raw-access.js';

let t: { dir: string; cleanup: () => void };
let store: Store;

beforeEach(() => {
  t = tempDir('helix-commit-group-');
  store = openStore(t.dir);
});

afterEach(async () => {
  await store.close();
  t.cleanup();
});

const commits = (): number => newestCommitIn(store.path);

const put =
  (key: string): (() => string) =>
  () => {
    rawDatabases(store).kv.putSync(['group', key], { value: key });
    return key;
  };

describe('groupedTransaction', () => {
  it('commits the transactions queued in one turn as one commit, each with its own result', async () => {
    const before = commits();
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((k) => groupedTransaction(store, put(k))));
    expect(results).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(commits()).toBe(before + 1);
    for (const k of results) expect(rawDatabases(store).kv.get(['group', k])).toEqual({ value: k });
  });

  it('holds a group while writers are expected and commits it when the last one comes', async () => {
    const before = commits();
    let expected = 2;
    const first = groupedTransaction(store, put('first'), () => expected);
    expected = 1;
    const second = groupedTransaction(store, put('second'), () => expected);
    expected = 0;
    const third = groupedTransaction(store, put('third'), () => expected);
    expect(await Promise.all([first, second, third])).toEqual(['first', 'second', 'third']);
    expect(commits()).toBe(before + 1);
  });

  it('fails only the transaction that throws; the others commit', async () => {
    const outcomes = await Promise.allSettled([
      groupedTransaction(store, put('kept-1')),
      groupedTransaction(store, () => {
        rawDatabases(store).kv.putSync(['group', 'lost'], { value: 'lost' });
        throw new Error('this writer failed');
      }),
      groupedTransaction(store, put('kept-2')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'this writer failed' });
    expect(rawDatabases(store).kv.get(['group', 'kept-1'])).toEqual({ value: 'kept-1' });
    expect(rawDatabases(store).kv.get(['group', 'kept-2'])).toEqual({ value: 'kept-2' });
    expect(rawDatabases(store).kv.get(['group', 'lost'])).toBeUndefined();
  });

  it('commits what is still queued when the store closes', async () => {
    const queued = groupedTransaction(store, put('late'), () => 5);
    await store.close();
    expect(await queued).toBe('late');
    store = openStore(t.dir);
    expect(rawDatabases(store).kv.get(['group', 'late'])).toEqual({ value: 'late' });
  });
});
