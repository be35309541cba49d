// Compiled variants of a module, one per memory cap a call asks for with memory_mb_limit, through
// the real host and its real workers: the engine keeps a bounded number of them (ABI-ALLOC-009),
// each worker only those the engine keeps (ABI-ALLOC-010), and an extism/v1 plugin's variants
// are bounded alike (ABI-ALLOC-011); a variant given up and asked for again is rebuilt
// and gives the same result and fuel. Host memory growth is printed, never asserted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MODULE_VARIANT_BYTES, MAX_MODULE_VARIANTS, type ResponseEnvelope } from '../abi/index.js';
import type { EngineStats } from '../host/2-sandbox/engine/engine.js';
import { createHost, type Host } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { bigModule } from './helpers/big-module.js';
import { extismWat } from './helpers/extism-wat.js';
import { echoModule, numberResultModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

/** Grows memory a page at a time until refused and answers the page count: the cap it ran under. */
const GROW_PROBE = `(block $b (loop $l (br_if $b (i32.eq (memory.grow (i32.const 1)) (i32.const -1))) (br $l)))
  (i64.extend_i32_u (memory.size))`;
/** The same as an Extism plugin: grows until refused, then traps, reporting the pages reached. */
const EXTISM_GROW = extismWat('(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable');
/** The default policy's memory ceiling, 1024 pages: memory_mb_limit 1 to 63 are 63 distinct caps below it. */
const CAPS = 63;
const PAGES_PER_MB = 16;
const limits = { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 100_000_000, maxMemoryPages: 1024 };
/** About 3 MiB of code, none of it run: large enough that the byte budget binds before the count. */
const BIG = bigModule({ functions: 1000, bodyBytes: 3000, callAll: false });

const home = tempDir('helix-home-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;
beforeAll(async () => {
  plugins = await toolpacksDir([
    { id: 'v.grow', module: numberResultModule(GROW_PROBE), manifest: { limits } },
    { id: 'v.echo', module: echoModule(), manifest: { limits } },
    { id: 'v.big', module: BIG, manifest: { limits } },
    { id: 'x.grow', module: EXTISM_GROW, manifest: { abi: 'extism/v1', entrypoint: 'run', limits } },
  ]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir, policy: loadPolicy(undefined), engine: { maxThreads: 2 } });
}, 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

const call = (tool: string, mb: number, input: unknown = {}): Promise<ResponseEnvelope> =>
  host.call({ tool_id: tool, input, constraints: { memory_mb_limit: mb } });
const rssMiB = (): number => process.memoryUsage().rss / 2 ** 20;

/** The keys (digest:cap) of each tool's own variant, which the loader made and the engine keeps. */
function defaultKeys(): Set<string> {
  return new Set(host.tools().flatMap((t) => (t.kind === 'wasm' ? [`${t.moduleDigest}:${t.limits.maxMemoryPages}`] : [])));
}

/** ABI-ALLOC-009 and -010: the engine within its bounds, each worker holding only what the engine holds. */
function expectBounded(stats: EngineStats): void {
  expect(stats.variants.keys.length).toBeLessThanOrEqual(MAX_MODULE_VARIANTS);
  expect(stats.variants.bytes).toBeLessThanOrEqual(MAX_MODULE_VARIANT_BYTES);
  expect(stats.workers.length).toBeGreaterThan(0);
  const held = new Set([...defaultKeys(), ...stats.variants.keys]);
  for (const worker of stats.workers) {
    expect(worker.modules.filter((key) => !held.has(key))).toEqual([]);
    expect(worker.instances.filter((key) => !worker.modules.includes(key))).toEqual([]);
  }
}

/**
 * A well-behaved call succeeds (the host survived), then the census: after that call at least
 * one worker is idle to answer it, whichever workers were replaced before.
 */
async function statsAfterCall(): Promise<EngineStats> {
  const r = await host.call({ tool_id: 'v.echo', input: { still: 'serving', n: ++served } });
  expect(r.status).toBe('success');
  expect(r.output).toEqual({ still: 'serving', n: served });
  return host.engineStats();
}
let served = 0;

describe('helix/v1 variants (ABI-ALLOC-009, ABI-ALLOC-010)', () => {
  it('the engine keeps at most MAX_MODULE_VARIANTS variants of a module, and its workers only those, whatever caps the calls ask for', async () => {
    const fuel = new Map<number, number>();
    const before = rssMiB();
    for (let mb = 1; mb <= CAPS; mb++) {
      const r = await call('v.grow', mb, { round: 1 });
      expect(r.output).toEqual({ value: mb * PAGES_PER_MB });
      fuel.set(mb, r.metrics.fuel_used);
    }
    const stats = await statsAfterCall();
    console.log(
      `v.grow under ${CAPS} distinct caps: ${stats.variants.keys.length} variants kept (${stats.variants.built} built, ${stats.variants.evicted} given up), workers hold ${stats.workers.map((w) => w.modules.length).join(' and ')} modules, ${stats.retired} replaced; rss ${before.toFixed(0)} -> ${rssMiB().toFixed(0)} MiB`,
    );
    expectBounded(stats);

    // The oldest caps were given up: asked for again, each is rebuilt and meters exactly as before.
    for (let mb = 1; mb <= 8; mb++) {
      const r = await call('v.grow', mb, { round: 2 });
      expect(r.output).toEqual({ value: mb * PAGES_PER_MB });
      expect(r.metrics.fuel_used).toBe(fuel.get(mb));
    }
    const after = await statsAfterCall();
    expect(after.variants.built).toBe(stats.variants.built + 8);
    expectBounded(after);
    // 39 variants given up by now: a worker told to drop MAX_MODULE_VARIANTS of them was replaced,
    // and the garbage they left in its heap went with it.
    expect(after.retired).toBeGreaterThan(0);
  }, 300_000);

  it('calls under distinct caps at once each run their own variant, and the bound holds once they end', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => call('v.grow', i + 1, { round: 3 })));
    for (const [i, r] of results.entries()) expect(r.output).toEqual({ value: (i + 1) * PAGES_PER_MB });
    expectBounded(await statsAfterCall());
  }, 300_000);

  it('the variants kept add up to at most MAX_MODULE_VARIANT_BYTES instrumented bytes', async () => {
    const before = rssMiB();
    for (let mb = 1; mb <= 40; mb++) expect((await call('v.big', mb)).output).toEqual({ value: 1 });
    const stats = await statsAfterCall();
    const digest = host.tools().find((t) => t.id === 'v.big')!.moduleDigest!;
    const big = stats.variants.keys.filter((key) => key.startsWith(`${digest}:`));
    console.log(
      `v.big (${(BIG.length / 2 ** 20).toFixed(1)} MiB) under 40 distinct caps: ${big.length} variants kept, ${(stats.variants.bytes / 2 ** 20).toFixed(1)} MiB instrumented; rss ${before.toFixed(0)} -> ${rssMiB().toFixed(0)} MiB`,
    );
    expect(big.length).toBeLessThan(40);
    expectBounded(stats);
  }, 300_000);
});

describe('extism/v1 variants (ABI-ALLOC-011)', () => {
  it('the engine keeps at most MAX_MODULE_VARIANTS variants of a plugin, and its Extism workers only those', async () => {
    const fuel = new Map<number, number>();
    for (let mb = 1; mb <= CAPS; mb++) {
      const r = await call('x.grow', mb);
      expect(r.error).toMatchObject({
        code: 'S-TOOL-TRAP',
        details: { memory_pages: mb * PAGES_PER_MB, max_memory_pages: mb * PAGES_PER_MB },
      });
      fuel.set(mb, r.metrics.fuel_used);
    }
    const stats = await statsAfterCall();
    const extism = stats.extism!;
    console.log(
      `x.grow under ${CAPS} distinct caps: ${stats.variants.keys.length} variants kept, Extism workers hold ${extism.workers.map((w) => w.modules.length).join(' and ')} modules`,
    );
    expectBounded(stats);
    const own = [...host.tools()].find((t) => t.id === 'x.grow')!;
    const held = new Set([...stats.variants.keys, `${own.moduleDigest}:${own.limits.maxMemoryPages}`]);
    for (const worker of extism.workers) expect(worker.modules.filter((key) => !held.has(key))).toEqual([]);

    for (let mb = 1; mb <= 8; mb++) {
      const r = await call('x.grow', mb);
      expect(r.error?.details).toMatchObject({ memory_pages: mb * PAGES_PER_MB });
      expect(r.metrics.fuel_used).toBe(fuel.get(mb));
    }
    expect((await statsAfterCall()).variants.keys.length).toBeLessThanOrEqual(MAX_MODULE_VARIANTS);
  }, 300_000);
});
