// The store's face: an open store carries no raw LMDB handle, its transactions are the guarded
// ones, and no production file outside host/3-store reaches the handle or the test seam.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { packageRoot } from '../1-base/paths.js';
import { kvGet, kvPut } from './kv.js';
import { openStore } from './open-store.js';
import { rawDatabases } from './raw-access.js';

const t = tempDir('helix-handle-');
afterAll(() => t.cleanup());

/** The .ts files under `dir`, tests left out, as paths from the package root. */
function sources(dir: string): string[] {
  const root = packageRoot();
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

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

  it('no production file outside host/3-store imports the store handle or the raw-access seam', () => {
    const outside = ['host', 'capabilities', 'scripts', 'bench', 'abi']
      .flatMap(sources)
      .filter((f) => !f.startsWith(`host${path.sep}3-store${path.sep}`));
    expect(outside.length).toBeGreaterThan(50);
    const reaching = outside.filter((f) =>
      /from '[^']*store\/(handle|raw-access)\.js'/.test(readFileSync(path.join(packageRoot(), f), 'utf8')),
    );
    expect(reaching).toEqual([]);
  });
});
