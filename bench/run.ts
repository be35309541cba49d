// `npm run bench`: the isolated call path against (a) the same module in-process on a reused
// instance, the floor, and (b) @extism/extism in worker mode, which an extism/v1 toolpack run by
// the engine is measured against too; and fuel instrumentation against
// no instrumentation on a compute-heavy plugin. Every figure is a ratio within this one run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse as parseYaml } from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createEngine } from '../host/engine/engine.js';
import { createHost, findManifests, loadToolpacksOrThrow, type EngineOptions, type Host, type LoadedTool } from '../host/index.js';
import { createMcpServer } from '../host/mcp/index.js';
import { engineModule } from '../host/engine/engine.js';
import { loadPolicy } from '../host/policy/load-policy.js';
import { packageRoot } from '../host/paths.js';
import { FUEL_EXPORT, instrumentModule, START_EXPORT } from '../host/wasm/index.js';
import { latency, medianMs, quantile, throughput } from './stats.js';
import { loadExtism } from '../host/engine/extism.js';

// Through the host's loader: it keeps the SDK's WASI ExperimentalWarning (WASI is never used) off stderr.
const createPlugin = await loadExtism();

const root = packageRoot();
const fixtures = path.join(root, 'bench', 'fixtures');
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const INPUT = { sequence: 'GATTACA'.repeat(8), id: 'read-0001', tags: ['bench', 'echo'], n: 42 };
const N_LATENCY = Number(process.env.BENCH_LATENCY_CALLS ?? 3000);
const N_THROUGHPUT = Number(process.env.BENCH_THROUGHPUT_CALLS ?? 20000);
const N_EXTISM_LATENCY = Number(process.env.BENCH_EXTISM_LATENCY_CALLS ?? N_LATENCY);
const N_EXTISM_THROUGHPUT = Number(process.env.BENCH_EXTISM_THROUGHPUT_CALLS ?? N_THROUGHPUT);
const N_EXTISM_PACED = Number(process.env.BENCH_EXTISM_PACED_CALLS ?? 50);
const PACE_MS = 100;
const COMPUTE_ROUNDS = Number(process.env.BENCH_COMPUTE_ROUNDS ?? 300000);

interface Manifest {
  readonly module: string;
  readonly entrypoint?: string;
}

function fixture(name: string): { bytes: Uint8Array; manifest: Manifest } {
  const dir = path.join(fixtures, name);
  const manifestFile = findManifests(dir)[0];
  if (manifestFile === undefined) throw new Error(`no manifest in ${dir}; run npm run build`);
  const manifest = parseYaml(readFileSync(manifestFile, 'utf8')) as Manifest;
  return { bytes: readFileSync(path.join(dir, manifest.module)), manifest };
}

type Exports = Record<string, unknown> & { memory: WebAssembly.Memory };

/** One helix/v1 call on an existing instance, with the same encode/decode work as the host. */
function callInstance(exports: Exports, input: unknown, entry = 'execute'): unknown {
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

function row(cells: Array<string | number>): string {
  return `| ${cells.map((c) => (typeof c === 'number' ? c.toFixed(c >= 100 ? 0 : 2) : c)).join(' | ')} |`;
}

async function main(): Promise<void> {
  const threads = availableParallelism();
  const lines: string[] = [];
  const say = (s: string) => {
    lines.push(s);
    process.stdout.write(`${s}\n`);
  };
  say(`# Helix benchmark (${new Date().toISOString()}, Node ${process.version}, ${threads} CPUs)`);
  say('');

  // (a) the floor: the echo module in-process on one reused instance, no isolation, no fuel.
  const echo = fixture('echo');
  const floorInstance = new WebAssembly.Instance(new WebAssembly.Module(echo.bytes), {});
  const floor = await latency(() => callInstance(floorInstance.exports as Exports, INPUT), N_LATENCY, 200);

  // Helix's sandboxed call path: the engine as the call pipeline drives it (worker lane, fresh
  // state per call, fuel, output bounds and envelope checks), without the run record.
  const policy = loadPolicy(undefined);
  const [loaded] = await loadToolpacksOrThrow(path.join(fixtures, 'echo'), policy.policy);
  const [loadedExtism] = await loadToolpacksOrThrow(path.join(fixtures, 'echo-extism'), policy.policy);
  const refuse = async () => ({ kind: 'abort' as const, code: 'A-AUTH-FORBIDDEN' as const, message: 'no capabilities in the benchmark', details: {} });
  const sandboxed = async (tool: LoadedTool, options: EngineOptions, calls: { latency: number; throughput: number; warmup: number; paced?: number }) => {
    const engine = createEngine(options);
    const module = engineModule(tool, await tool.module.prepare());
    const call = async () => {
      const r = await engine.execute({ module, input: encoder.encode(JSON.stringify(INPUT)), limits: tool.limits, broker: refuse });
      if (r.kind !== 'output' || r.output.status !== 'ok') throw new Error(`${tool.manifest.id} failed: ${JSON.stringify(r)}`);
    };
    const lat = await latency(call, calls.latency, calls.warmup);
    const tput = await throughput(Array.from({ length: threads * 4 }, () => call), calls.throughput);
    // Calls that come PACE_MS apart, as an agent's do: only the call is timed.
    const pacedSamples: number[] = [];
    for (let i = 0; i < (calls.paced ?? 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
      const t = performance.now();
      await call();
      pacedSamples.push((performance.now() - t) * 1000);
    }
    await engine.close();
    return { ...lat, tput, paced: { median: quantile(pacedSamples, 0.5), p99: quantile(pacedSamples, 0.99) } };
  };
  const laneCalls = { latency: N_LATENCY, throughput: N_THROUGHPUT, warmup: 300 };
  const helix = await sandboxed(loaded!, { recycleInstances: true }, laneCalls);
  const helixFresh = await sandboxed(loaded!, { recycleInstances: false }, laneCalls);
  // An extism/v1 toolpack through the same engine entry: on its own worker lanes with the
  // engine's Extism kernel, the instance restored from its post-start snapshot per call (no state
  // survives a call), under fuel, deadline and memory caps; back to back and paced.
  const helixExtism = await sandboxed(loadedExtism!, {}, { latency: N_EXTISM_LATENCY, throughput: N_EXTISM_THROUGHPUT, warmup: 300, paced: N_EXTISM_PACED });

  // The whole recorded call (host.call): envelope, validation, run identity, the run's two
  // durable LMDB commits (started, finished with its log), response.
  const home = mkdtempSync(path.join(tmpdir(), 'helix-bench-'));
  const host: Host = await createHost({ pluginsDir: path.join(fixtures, 'echo'), policy, home });
  // Every call differs (n), so each one executes: an identical call would replay from the store.
  let n = 0;
  const recordedCall = async () => {
    const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: n++ } });
    if (r.status !== 'success' || r.replayed) throw new Error(`bench.echo did not execute: ${JSON.stringify(r.error ?? r.warnings)}`);
  };
  const recorded = await latency(recordedCall, Math.min(N_LATENCY, 1000), 100);
  const recordedTput = await throughput(Array.from({ length: threads * 8 }, () => recordedCall), Math.min(N_THROUGHPUT, 5000));
  const replayCall = async () => {
    const r = await host.call({ tool_id: 'bench.echo', input: { ...INPUT, n: 0 } });
    if (!r.replayed) throw new Error('expected a replay');
  };
  const replay = await latency(replayCall, N_LATENCY, 100);

  // The same recorded call as an MCP tools/call, client and server in one process over the
  // SDK's in-memory transport: what the MCP layer adds (JSON-RPC, result shaping) to host.call.
  const mcp = createMcpServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientSide);
  const mcpCall = async () => {
    const r = await client.callTool({ name: 'bench-echo', arguments: { ...INPUT, n: n++ } });
    if (r.isError === true || (r._meta as Record<string, unknown>)['helix/replayed'] !== false) throw new Error(`bench-echo over MCP did not execute: ${JSON.stringify(r.content)}`);
  };
  const mcpRecorded = await latency(mcpCall, Math.min(N_LATENCY, 1000), 100);
  const mcpTput = await throughput(Array.from({ length: threads * 8 }, () => mcpCall), Math.min(N_THROUGHPUT, 5000));
  await client.close();
  await mcp.close();
  await host.close();
  rmSync(home, { recursive: true, force: true });

  // (b) Extism in worker mode: one plugin per thread (a plugin is not reentrant).
  const ext = fixture('echo-extism');
  const plugins = await Promise.all(Array.from({ length: threads }, () => createPlugin({ wasm: [{ data: ext.bytes }] }, { runInWorker: true, useWasi: false })));
  const entry = ext.manifest.entrypoint ?? 'echo';
  const inputText = JSON.stringify(INPUT);
  const extismCall = (i: number) => async () => {
    const out = await plugins[i]!.call(entry, inputText);
    JSON.parse(out!.text());
  };
  const extism = await latency(extismCall(0), N_LATENCY, 300);
  const extismTput = await throughput(plugins.map((_, i) => extismCall(i)), N_THROUGHPUT);
  await Promise.all(plugins.map((p) => p.close()));

  say(`## Sandboxed call path: echo tool, ${N_LATENCY} sequential calls for latency, ${N_THROUGHPUT} calls with ${threads * 4} in flight for throughput`);
  say('');
  say('| path | median µs | p99 µs | calls/s | median vs Extism | calls/s vs Extism |');
  say('| --- | --- | --- | --- | --- | --- |');
  say(row(['(a) floor: in-process, reused instance, no fuel', floor.median, floor.p99, '-', floor.median / extism.median, '-']));
  say(row(['Helix sandboxed call: worker lane, fresh state per call, fuel', helix.median, helix.p99, helix.tput, helix.median / extism.median, helix.tput / extismTput]));
  say(row(['Helix sandboxed call, recycling off (new instance per call)', helixFresh.median, helixFresh.p99, helixFresh.tput, helixFresh.median / extism.median, helixFresh.tput / extismTput]));
  say(row([`(b) Extism 2.0.0-rc13, worker mode, ${threads} plugins`, extism.median, extism.p99, extismTput, 1, 1]));
  say(row([`extism/v1 toolpack through Helix: worker lane, engine's Extism kernel, fresh state per call, fuel (${N_EXTISM_LATENCY} back-to-back, ${N_EXTISM_THROUGHPUT} for calls/s)`, helixExtism.median, helixExtism.p99, helixExtism.tput, helixExtism.median / extism.median, helixExtism.tput / extismTput]));
  say(row([`extism/v1 toolpack through Helix, calls ${PACE_MS} ms apart (${N_EXTISM_PACED} calls)`, helixExtism.paced.median, helixExtism.paced.p99, '-', helixExtism.paced.median / extism.median, '-']));
  say('');
  say(`Targets: Helix median below 0.5x Extism (got ${(helix.median / extism.median).toFixed(2)}x); Helix throughput at least 2x Extism (got ${(helix.tput / extismTput).toFixed(2)}x); extism/v1 back to back at most 2x Extism (got ${(helixExtism.median / extism.median).toFixed(2)}x).`);
  say('');
  say('## The recorded call: host.call with run identity and the run record in LMDB');
  say('');
  say('| path | median µs | p99 µs | calls/s |');
  say('| --- | --- | --- | --- |');
  say(row(['host.call, new run (two durable commits)', recorded.median, recorded.p99, recordedTput]));
  say(row(['host.call, replay of a succeeded run', replay.median, replay.p99, '-']));
  say('');
  say('## The same call through MCP: tools/call from the SDK client, in-memory transport');
  say('');
  say('| path | median µs | p99 µs | calls/s | median vs host.call | calls/s vs host.call |');
  say('| --- | --- | --- | --- | --- | --- |');
  say(row(['tools/call, new run', mcpRecorded.median, mcpRecorded.p99, mcpTput, mcpRecorded.median / recorded.median, mcpTput / recordedTput]));
  say('');

  // Fuel overhead on a compute-heavy plugin, both in-process on reused instances.
  const compute = fixture('compute');
  const plain = new WebAssembly.Instance(new WebAssembly.Module(compute.bytes), {}).exports as Exports;
  const inst = instrumentModule(compute.bytes, { maxMemoryPages: 65536 });
  const metered = new WebAssembly.Instance(new WebAssembly.Module(inst.bytes), {}).exports as Exports;
  const fuel = metered[FUEL_EXPORT] as WebAssembly.Global;
  fuel.value = 1n << 62n;
  if (inst.hasStart) (metered[START_EXPORT] as () => void)();
  const input = { rounds: COMPUTE_ROUNDS };
  const a = callInstance(plain, input);
  const b = callInstance(metered, input);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`instrumented output differs: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  const before = fuel.value as bigint;
  callInstance(metered, input);
  const fuelPerCall = Number(before - (fuel.value as bigint));
  // Interleave the two so drift in machine load hits both alike.
  const plainMs: number[] = [];
  const meteredMs: number[] = [];
  for (let i = 0; i < 7; i++) {
    plainMs.push(medianMs(() => callInstance(plain, input), 3));
    fuel.value = 1n << 62n;
    meteredMs.push(medianMs(() => callInstance(metered, input), 3));
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const overhead = med(meteredMs) / med(plainMs);
  say(`## Fuel overhead: bench.compute, rounds=${COMPUTE_ROUNDS}, median of 7x3 interleaved runs`);
  say('');
  say('| module | median ms | vs uninstrumented |');
  say('| --- | --- | --- |');
  say(row(['uninstrumented', med(plainMs), 1]));
  say(row([`instrumented (${fuelPerCall.toLocaleString('en')} fuel per call)`, med(meteredMs), overhead]));
  say('');
  say(`Target: at most 1.10x (got ${overhead.toFixed(3)}x).`);
  writeFileSync(path.join(root, 'bench', 'last-run.md'), `${lines.join('\n')}\n`);
}

await main();
