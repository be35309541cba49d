// The scheduler behind both runners, on real workers and real modules: a helix/v1 guest on the
// lanes and an extism/v1 plugin on the Extism lanes, each making one capability call first, so a
// broker that holds its answer keeps a call running for as long as a test needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EffectiveLimits } from '../../../abi/index.js';
import { stormGuest, stormPlugin } from '../../../test/helpers/catching-guests.js';
import { extismWat } from '../../../test/helpers/extism-wat.js';
import { toolpacksDir } from '../../../test/helpers/toolpack.js';
import { loadToolpacks, type LoadedTool } from '../../4-calls/loader/load-toolpacks.js';
import { loadPolicy } from '../../4-calls/policy/load-policy.js';
import { engineModule } from '../../4-calls/tools/wasm-tool.js';
import { createEngine, type Engine, type EngineModule } from './engine.js';
import type { CapabilityBroker, ExecuteResult } from './protocol.js';

const limits = { maxInputBytes: 65_536, maxOutputBytes: 65_536, fuel: 10_000_000_000, maxMemoryPages: 16, maxCapabilityCalls: 5 };
const capabilities = { abiVersion: 1, allow: ['clock.now_unix'] };
const plugin = stormPlugin(1);

let tools: Map<string, LoadedTool>;
let modules: Map<string, EngineModule>;
let cleanup: () => void;
const engines: Engine[] = [];

beforeAll(async () => {
  const dir = await toolpacksDir([
    { id: 's.helix', module: stormGuest(1), manifest: { limits, capabilities } },
    {
      id: 's.extism',
      module: extismWat(plugin.body, { data: plugin.data, extra: plugin.extra }),
      manifest: { abi: 'extism/v1', entrypoint: 'run', limits, capabilities },
    },
  ]);
  cleanup = dir.cleanup;
  const loaded = await loadToolpacks(dir.dir, loadPolicy(undefined).policy);
  tools = new Map(loaded.tools.map((t) => [t.manifest.id, t]));
  modules = new Map(await Promise.all(loaded.tools.map(async (t) => [t.manifest.id, engineModule(t, await t.module.prepare())] as const)));
}, 60_000);
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  cleanup?.();
});

/** A broker that answers at once, counting the calls that reached it. */
function answering(): CapabilityBroker & { calls: number } {
  const broker = Object.assign(
    async () => {
      broker.calls += 1;
      return { kind: 'answer' as const, response: new TextEncoder().encode('{"ok":true,"result":{"unix_ms":0}}'), fuel: 1 };
    },
    { calls: 0 },
  );
  return broker;
}

/** A broker that answers only once `release()` is called; `reached` settles when the call is inside it. */
function holding(): { broker: CapabilityBroker; reached: Promise<void>; release: () => void } {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const inner = answering();
  const broker: CapabilityBroker = async (request) => {
    reach();
    await released;
    return inner(request);
  };
  return { broker, reached, release };
}

describe.each([
  ['helix/v1', 's.helix'],
  ['extism/v1', 's.extism'],
])('the scheduler with %s', (_abi, id) => {
  const newEngine = (maxQueue = 100): Engine => {
    const engine = createEngine({ maxThreads: 1, minThreads: 0, maxQueue });
    engines.push(engine);
    return engine;
  };
  const exec = (
    engine: Engine,
    broker: CapabilityBroker,
    extra: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<ExecuteResult> => {
    const tool = tools.get(id)!;
    const callLimits: EffectiveLimits = { ...tool.limits, timeoutMs: extra.timeoutMs ?? 60_000 };
    return engine.execute({
      module: modules.get(id)!,
      input: new TextEncoder().encode('{}'),
      limits: callLimits,
      broker,
      ...(extra.signal === undefined ? {} : { signal: extra.signal }),
    });
  };

  /** Starts a call that holds the engine's one worker until `release()`. */
  const occupy = async (engine: Engine): Promise<{ running: Promise<ExecuteResult>; release: () => void }> => {
    const held = holding();
    const running = exec(engine, held.broker);
    await held.reached;
    return { running, release: held.release };
  };

  it('never runs a queued call its caller cancelled before it started', async () => {
    const engine = newEngine();
    const first = await occupy(engine);
    const controller = new AbortController();
    const queued = answering();
    const cancelled = exec(engine, queued, { signal: controller.signal });
    controller.abort();
    expect(await cancelled).toMatchObject({ kind: 'fault', code: 'R-TIMEOUT-CANCELLED', details: { phase: 'queue' } });
    first.release();
    expect(await first.running).toMatchObject({ kind: 'output' });
    const next = answering();
    expect(await exec(engine, next)).toMatchObject({ kind: 'output' });
    expect(next.calls).toBe(1);
    expect(queued.calls).toBe(0);
  }, 60_000);

  it('does not count the start of a new worker thread against the deadline (ABI-DEADLINE-001)', async () => {
    const engine = newEngine();
    const broker = answering();
    // The engine has no worker yet: this call starts one. The main thread is then held for
    // longer than the whole deadline, so a deadline that ran while the thread came up would
    // have passed before the call could run.
    const call = exec(engine, broker, { timeoutMs: 1000 });
    const until = performance.now() + 1500;
    while (performance.now() < until);
    expect(await call).toMatchObject({ kind: 'output' });
    expect(broker.calls).toBe(1);
  }, 60_000);

  it('never runs a queued call whose deadline passed while it waited', async () => {
    const engine = newEngine();
    const first = await occupy(engine);
    const queued = answering();
    expect(await exec(engine, queued, { timeoutMs: 200 })).toMatchObject({
      kind: 'fault',
      code: 'R-TIMEOUT-001',
      details: { timeout_ms: 200, phase: 'queue' },
    });
    first.release();
    expect(await first.running).toMatchObject({ kind: 'output' });
    expect(await exec(engine, answering())).toMatchObject({ kind: 'output' });
    expect(queued.calls).toBe(0);
  }, 60_000);

  it('stops a call at its deadline and runs the call queued behind it on a new worker', async () => {
    const engine = newEngine();
    // A warm engine, so that the call reaches its broker well before its deadline.
    expect(await exec(engine, answering())).toMatchObject({ kind: 'output' });
    const stuck = holding();
    const overrun = exec(engine, stuck.broker, { timeoutMs: 2000 });
    await stuck.reached;
    const behind = answering();
    const queued = exec(engine, behind);
    expect(await overrun).toMatchObject({ kind: 'fault', code: 'R-TIMEOUT-001', details: { timeout_ms: 2000, phase: 'run' } });
    expect(await queued).toMatchObject({ kind: 'output' });
    expect(behind.calls).toBe(1);
    // The stopped call's broker answering late changes nothing.
    stuck.release();
    expect(await exec(engine, answering())).toMatchObject({ kind: 'output' });
  }, 60_000);

  it('refuses a call at once with R-CAP-QUEUE-FULL when maxQueue calls already wait', async () => {
    const engine = newEngine(1);
    const first = await occupy(engine);
    const waiting = exec(engine, answering());
    expect(await exec(engine, answering())).toMatchObject({ kind: 'fault', code: 'R-CAP-QUEUE-FULL', details: { max_queue: 1 } });
    first.release();
    expect(await first.running).toMatchObject({ kind: 'output' });
    expect(await waiting).toMatchObject({ kind: 'output' });
  }, 60_000);

  it('ends queued calls when the engine closes, and answers later ones that it is closed', async () => {
    const engine = newEngine();
    const first = await occupy(engine);
    const queued = answering();
    const waiting = exec(engine, queued);
    const closing = engine.close();
    expect(await waiting).toMatchObject({ kind: 'fault', code: 'S-TOOL-WORKER-LOST', details: { phase: 'queue' } });
    first.release();
    await closing;
    await first.running;
    expect(await exec(engine, answering())).toMatchObject({ kind: 'fault', code: 'S-TOOL-WORKER-LOST', message: 'The engine is closed.' });
    expect(queued.calls).toBe(0);
  }, 60_000);
});
