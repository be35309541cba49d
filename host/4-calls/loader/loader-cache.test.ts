// The load cache (ABI-LOAD-008) over a real store: a module is instrumented once per digest, cap
// and instrumenter; damaged or foreign entries are never used; the compiled form is made on first use.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PolicySchema } from '../../../abi/index.js';
import { echoModule } from '../../../test/helpers/guest-wat.js';
import { toolpacksDir, tempDir } from '../../../test/helpers/toolpack.js';
import { readAudit } from '../../3-store/audit.js';
import { writeLoadCache } from '../../3-store/load-cache.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { instrumentModule } from '../../2-sandbox/wasm/index.js';
import { moduleCacheKey, storeLoaderCache, type LoaderCache } from './loader-cache.js';
import { loadToolpacks } from './load-toolpacks.js';

const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, ceilings: { maxMemoryPages: 64 } });
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const INPUT = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };

async function setup(inputSchema: unknown = INPUT): Promise<{ dir: string; store: Store }> {
  const plugins = await toolpacksDir([{ id: 'cache.echo', module: echoModule(), inputSchema }]);
  const home = tempDir();
  const store = openStore(home.dir);
  cleanups.push(plugins.cleanup, home.cleanup, () => store.close());
  return { dir: plugins.dir, store };
}

/** The store's cache, with a count of the modules the loader had to instrument and hand to it. */
function counted(store: Store): { cache: LoaderCache; puts: string[] } {
  const real = storeLoaderCache(store, Date.now);
  const puts: string[] = [];
  return {
    puts,
    cache: {
      ...real,
      putModule: (d, cap, inst, problem) => {
        puts.push(problem ?? 'new');
        return real.putModule(d, cap, inst, problem);
      },
    },
  };
}

async function loadWith(dir: string, cache: LoaderCache) {
  const { tools, violations } = await loadToolpacks(dir, policy, { cache });
  expect(violations).toEqual([]);
  return tools[0]!;
}

describe('the load cache of instrumented modules', () => {
  it('instruments a module on the first load only; a later load takes it from the store and it runs the same', async () => {
    const { dir, store } = await setup();
    const first = counted(store);
    const a = await loadWith(dir, first.cache);
    expect(first.puts).toEqual(['new']);
    const second = counted(store);
    const b = await loadWith(dir, second.cache);
    expect(second.puts).toEqual([]);
    const [pa, pb] = await Promise.all([a.module.prepare(), b.module.prepare()]);
    expect(Buffer.from(pb.instrumented.bytes).equals(Buffer.from(pa.instrumented.bytes))).toBe(true);
    expect(WebAssembly.Module.exports(pb.compiled).map((e) => e.name)).toContain('__helix_fuel');
    expect(b.module.info).toEqual(a.module.info);
    expect(b.module.instrumented).toEqual(a.module.instrumented);
  });

  it('does not trust damaged cached bytes: they are hashed on first use, instrumented again and rewritten, and the audit says so', async () => {
    const { dir, store } = await setup();
    const a = await loadWith(dir, storeLoaderCache(store, Date.now));
    const key = moduleCacheKey(a.manifest.digest, a.limits.maxMemoryPages);
    const entry = rawDatabases(store).loadCache.get(key) as { bytes: Uint8Array };
    const damaged = Uint8Array.from(entry.bytes);
    damaged[damaged.length - 1] = damaged.at(-1)! ^ 0xff;
    await store.transaction(() => rawDatabases(store).loadCache.put(key, { ...entry, bytes: damaged }));

    const again = counted(store);
    const b = await loadWith(dir, again.cache);
    const prepared = await b.module.prepare();
    expect(again.puts).toEqual([expect.stringMatching(/^the instrumented bytes do not hash to sha256:/)]);
    expect(
      Buffer.from(prepared.instrumented.bytes).equals(
        Buffer.from(instrumentModule(b.module.bytes, { maxMemoryPages: b.limits.maxMemoryPages }).bytes),
      ),
    ).toBe(true);
    expect(
      readAudit(store)
        .filter((r) => r.kind === 'store.load_cache_rebuilt')
        .map((r) => r.key),
    ).toEqual([key]);
    const fixed = counted(store);
    await (await loadWith(dir, fixed.cache)).module.prepare();
    expect(fixed.puts).toEqual([]);
  });

  it('ignores an entry whose seal does not hold (its facts damaged) and checks the module in full', async () => {
    const { dir, store } = await setup();
    const a = await loadWith(dir, storeLoaderCache(store, Date.now));
    const key = moduleCacheKey(a.manifest.digest, a.limits.maxMemoryPages);
    const entry = rawDatabases(store).loadCache.get(key) as { facts: { recyclable: boolean } };
    await store.transaction(() =>
      rawDatabases(store).loadCache.put(key, { ...entry, facts: { ...entry.facts, recyclable: !entry.facts.recyclable } }),
    );
    const again = counted(store);
    const b = await loadWith(dir, again.cache);
    expect(again.puts).toEqual(['new']);
    expect(b.module.instrumented.recyclable).toBe(a.module.instrumented.recyclable);
  });

  it('never reads an entry another instrumenter version wrote, even a sealed one', async () => {
    const { dir, store } = await setup();
    const probe = await loadWith(dir, { ...storeLoaderCache(store, Date.now), putModule: () => undefined });
    const foreign = instrumentModule(probe.module.bytes, { maxMemoryPages: 1 });
    const old = moduleCacheKey(probe.manifest.digest, probe.limits.maxMemoryPages, 'v0-0000000000000000');
    expect(old).not.toBe(moduleCacheKey(probe.manifest.digest, probe.limits.maxMemoryPages));
    await writeLoadCache(
      store,
      [
        {
          key: old,
          facts: { info: foreign.info, recyclable: foreign.recyclable, globalExports: foreign.globalExports, hasStart: foreign.hasStart },
          bytes: foreign.bytes,
        },
      ],
      Date.now(),
    );
    const again = counted(store);
    const b = await loadWith(dir, again.cache);
    expect(again.puts).toEqual(['new']);
    const prepared = await b.module.prepare();
    expect(Buffer.from(prepared.instrumented.bytes).equals(Buffer.from(foreign.bytes))).toBe(false);
  });
});

describe('the load cache of checked schemas', () => {
  it('compiles a schema checked at an earlier start on its first use, and it validates the same', async () => {
    const { dir, store } = await setup();
    const a = await loadWith(dir, storeLoaderCache(store, Date.now));
    let asked = 0;
    const real = storeLoaderCache(store, Date.now);
    const b = await loadWith(dir, {
      ...real,
      schemaChecked: (key) => {
        if (!real.schemaChecked(key)) return false;
        asked += 1;
        return true;
      },
    });
    expect(asked).toBe(2);
    for (const value of [{ n: 3 }, { n: 0 }, {}, { n: 'x' }]) expect(b.validateInputRefs(value)).toEqual(a.validateInputRefs(value));
    expect(b.validateInput({ n: 0 })).toEqual([{ path: '/n', keyword: 'minimum', message: expect.stringContaining('(found 0)') }]);
  });

  it('checks a changed schema in full: a bad one is refused even when its earlier form was cached', async () => {
    const { dir, store } = await setup();
    await loadWith(dir, storeLoaderCache(store, Date.now));
    const manifest = path.join(dir, 'cache.echo', 'cache_echo.tool.yaml');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('type: integer', 'type: integr'));
    const { violations } = await loadToolpacks(dir, policy, { cache: storeLoaderCache(store, Date.now) });
    expect(violations.map((v) => `${v.field}: ${v.reason}`)).toEqual([
      expect.stringMatching(/^inputSchema\.properties\.n\.type: not a valid JSON Schema: /),
    ]);
  });
});
