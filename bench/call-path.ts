// The call path on a trivial echo tool: Helix's sandboxed engine call (worker lane, fresh state
// per call, fuel) and an extism/v1 toolpack through the same engine, against @extism/extism in
// worker mode (the baseline) and the same module in-process on a reused instance (the floor).
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse as parseYaml } from 'yaml';
import { createEngine } from '../host/2-sandbox/engine/engine.js';
import { engineModule } from '../host/4-calls/tools/wasm-tool.js';
import { loadExtism } from '../host/2-sandbox/engine/extism.js';
import { findManifests, loadToolpacksOrThrow, type EngineOptions, type LoadedTool } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { packageRoot } from '../host/1-base/paths.js';
import type { BenchConfig } from './options.js';
import { makeRow, type Row } from './rows.js';
import { latency, quantile, throughput } from './stats.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const INPUT = { sequence: 'GATTACA'.repeat(8), id: 'read-0001', tags: ['bench', 'echo'], n: 42 };
const PACE_MS = 100;

/** The directory of a benchmark fixture toolpack. */
export function fixtureDir(name: string): string {
  return path.join(packageRoot(), 'bench', 'fixtures', name);
}

/** A fixture's module bytes and manifest. */
export function fixture(name: string): { bytes: Uint8Array; manifest: { module: string; entrypoint?: string } } {
  const dir = fixtureDir(name);
  const manifestFile = findManifests(dir)[0];
  if (manifestFile === undefined) throw new Error(`no manifest in ${dir}; run npm run build`);
  const manifest = parseYaml(readFileSync(manifestFile, 'utf8')) as { module: string; entrypoint?: string };
  return { bytes: readFileSync(path.join(dir, manifest.module)), manifest };
}

/** Exports of a helix/v1 module instance. */
export type Exports = Record<string, unknown> & { memory: WebAssembly.Memory };

/** One helix/v1 call on an existing instance, with the same encode/decode work as the host. */
export function callInstance(exports: Exports, input: unknown, entry = 'execute'): unknown {
  const bytes = encoder.encode(JSON.stringify(input));
  const ptr = (exports.alloc as (n: number) => number)(bytes.length) >>> 0;
  new Uint8Array(exports.memory.buffer, ptr, bytes.length).set(bytes);
  const packed = (exports[entry] as (p: number, l: number) => bigint)(ptr, bytes.length);
  const outPtr = Number(BigInt.asUintN(32, packed >> 32n));
  const outLen = Number(BigInt.asUintN(32, packed));
  const out = JSON.parse(decoder.decode(new Uint8Array(exports.memory.buffer, outPtr, outLen)));
  (exports.dealloc as (p: number, l: number) => void)(outPtr, outLen);
  (exports.dealloc as (p: number, l: number) => void)(ptr, bytes.length);
  return out;
}

interface Counts {
  readonly latency: number;
  readonly throughput: number;
  readonly warmup: number;
  readonly paced?: number;
}

/** The engine as the call pipeline drives it (no run record): latency, calls/s, paced latency. */
async function sandboxed(tool: LoadedTool, options: EngineOptions, calls: Counts, inFlight: number) {
  const engine = createEngine(options);
  const module = engineModule(tool, await tool.module.prepare());
  const refuse = async () => ({
    kind: 'abort' as const,
    code: 'A-AUTH-FORBIDDEN' as const,
    message: 'no capabilities in the benchmark',
    details: {},
  });
  const call = async () => {
    const r = await engine.execute({ module, input: encoder.encode(JSON.stringify(INPUT)), limits: tool.limits, broker: refuse });
    if (r.kind !== 'output' || r.output.status !== 'ok') throw new Error(`${tool.manifest.id} failed: ${JSON.stringify(r)}`);
  };
  try {
    const lat = await latency(call, calls.latency, calls.warmup);
    const tput = await throughput(
      Array.from({ length: inFlight }, () => call),
      calls.throughput,
    );
    // Calls that come PACE_MS apart, as an agent's do: only the call is timed.
    const paced: number[] = [];
    for (let i = 0; i < (calls.paced ?? 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
      const t = performance.now();
      await call();
      paced.push((performance.now() - t) * 1000);
    }
    return { ...lat, tput, paced: quantile(paced, 0.5) };
  } finally {
    await engine.close();
  }
}

/** The call-path rows: floor, Helix's engine (recycling on and off), extism/v1 through Helix, each against @extism/extism. */
export async function callPathRows(config: BenchConfig): Promise<Row[]> {
  const threads = availableParallelism();
  const c = config.calls;
  // (a) the floor: the echo module in-process on one reused instance, no isolation, no fuel.
  const echo = fixture('echo');
  const floorInstance = new WebAssembly.Instance(new WebAssembly.Module(echo.bytes), {});
  const floor = await latency(() => callInstance(floorInstance.exports as Exports, INPUT), c.latency, Math.min(200, c.latency));

  const policy = loadPolicy(undefined);
  const [loaded] = await loadToolpacksOrThrow(fixtureDir('echo'), policy.policy);
  const [loadedExtism] = await loadToolpacksOrThrow(fixtureDir('echo-extism'), policy.policy);
  const laneCalls = { latency: c.latency, throughput: c.throughput, warmup: Math.min(300, c.latency) };
  const helix = await sandboxed(loaded!, { recycleInstances: true }, laneCalls, threads * 4);
  const helixFresh = await sandboxed(loaded!, { recycleInstances: false }, laneCalls, threads * 4);
  // An extism/v1 toolpack through the same engine entry: fresh state per call under fuel,
  // deadline and memory caps. Its calls cost milliseconds today, so fewer of them.
  const extismCalls = {
    latency: c.extismLatency,
    throughput: c.extismThroughput,
    warmup: Math.min(20, c.extismLatency),
    paced: c.extismPaced,
  };
  const helixExtism = await sandboxed(loadedExtism!, {}, extismCalls, threads * 4);

  // (b) @extism/extism in worker mode: one plugin per thread (a plugin is not reentrant).
  const createPlugin = await loadExtism();
  const ext = fixture('echo-extism');
  const plugins = await Promise.all(
    Array.from({ length: threads }, () => createPlugin({ wasm: [{ data: ext.bytes }] }, { runInWorker: true, useWasi: false })),
  );
  const entry = ext.manifest.entrypoint ?? 'echo';
  const inputText = JSON.stringify(INPUT);
  const extismCall = (i: number) => async () => {
    const out = await plugins[i]!.call(entry, inputText);
    JSON.parse(out!.text());
  };
  const extism = await latency(extismCall(0), c.latency, Math.min(300, c.latency));
  const extismTput = await throughput(
    plugins.map((_, i) => extismCall(i)),
    c.throughput,
  );
  await Promise.all(plugins.map((p) => p.close()));

  const vsMedian = { name: `@extism/extism worker mode, median`, figure: extism.median };
  const vsTput = { name: `@extism/extism worker mode, ${threads} plugins`, figure: extismTput };
  const p99 = (x: { p99: number }) => `p99 ${x.p99.toFixed(0)} µs`;
  return [
    makeRow({
      id: 'call.floor',
      name: 'echo in-process on a reused instance, no fuel (the floor), median',
      unit: 'µs',
      figure: floor.median,
      baseline: vsMedian,
      samples: c.latency,
      note: p99(floor),
    }),
    makeRow({
      id: 'call.helix',
      name: 'helix/v1 echo through the engine (worker lane, fresh state, fuel), median',
      unit: 'µs',
      figure: helix.median,
      baseline: vsMedian,
      target: { of: 'ratio', op: '<=', value: 0.5 },
      samples: c.latency,
      note: p99(helix),
    }),
    makeRow({
      id: 'call.helix.throughput',
      name: `helix/v1 echo through the engine, ${threads * 4} in flight`,
      unit: 'calls/s',
      figure: helix.tput,
      baseline: vsTput,
      target: { of: 'ratio', op: '>=', value: 2 },
      samples: c.throughput,
    }),
    makeRow({
      id: 'call.helix.fresh',
      name: 'helix/v1 echo, recycling off (new instance per call), median',
      unit: 'µs',
      figure: helixFresh.median,
      baseline: vsMedian,
      samples: c.latency,
      note: p99(helixFresh),
    }),
    makeRow({
      id: 'extism.back_to_back',
      name: 'extism/v1 echo through the engine, back-to-back calls, median',
      unit: 'µs',
      figure: helixExtism.median,
      baseline: vsMedian,
      target: { of: 'ratio', op: '<=', value: 2 },
      samples: c.extismLatency,
      note: p99(helixExtism),
    }),
    makeRow({
      id: 'extism.throughput',
      name: `extism/v1 echo through the engine, ${threads * 4} in flight`,
      unit: 'calls/s',
      figure: helixExtism.tput,
      baseline: vsTput,
      samples: c.extismThroughput,
    }),
    makeRow({
      id: 'extism.paced',
      name: `extism/v1 echo through the engine, calls ${PACE_MS} ms apart, median`,
      unit: 'µs',
      figure: helixExtism.paced,
      baseline: vsMedian,
      samples: c.extismPaced,
    }),
  ];
}
