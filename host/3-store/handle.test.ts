// The store's face: an open store carries no raw LMDB handle, and its transactions are the guarded
// ones (test/architecture.test.ts keeps the handle and the test seam inside host/3-store).
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { kvGet, kvPut } from './kv.js';
import { openStore } from './open-store.js';
import { rawDatabases } from './raw-access.js';

const t = tempDir('helix-handle-');
afterAll(() => t.cleanup());

describe('the store face', () => {
  it('openStore returns a store without its LMDB handle, whose transactions commit what they write', async () => {
    const store = openStore(path.join(t.dir, 'home'));
    try {
      expect(Object.keys(store).sort()).toEqual(['close', 'flushed', 'home', 'path', 'transaction', 'transactionSync']);
      expect(store.transactionSync(() => 7)).toBe(7);
      await kvPut(store, 't.one', 'k', { n: 1 });
      await expect(store.transaction(() => rawDatabases(store).kv.get(['t.one', 'k']))).resolves.toEqual({ n: 1 });
      await store.flushed();
      expect(kvGet(store, 't.one', 'k')).toEqual({ n: 1 });
    } finally {
      await store.close();
    }
  });
});
