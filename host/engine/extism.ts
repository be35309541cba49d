// The extism/v1 runner: toolpacks run on @extism/extism 2.0.0-rc13 in worker mode, behind the
// same scheduler and limits as helix/v1 calls. Each call gets a fresh plugin (so a fresh instance
// and worker: no state survives, ABI-CALL-001) made of the instrumented plugin (fuel counter,
// memory cap) and the metering shim (extism-shim.ts), usually a spare made ahead of the call
// (extism-spares.ts, ABI-EXTISM-006); extism-call.ts runs the call itself.
import type { CallContext, Plugin } from '@extism/extism';
import { EXTISM_CAPABILITY_CALL, EXTISM_USER_MODULE } from '../../abi/index.js';
import { instrumentModule } from '../wasm/index.js';
import { ExtismCall } from './extism-call.js';
import { describe } from './extism-outcome.js';
import { buildShim, PLUGIN_MODULE_NAME } from './extism-shim.js';
import { SparePool, type PluginVariant, type Slot } from './extism-spares.js';
import { GuestAbort } from './decision.js';
import type { ExecuteResult } from './protocol.js';
import { fault, type ExecuteRequest, type Runner, type RunnerCall, type RunnerWorker } from './runner.js';
import { createScheduler } from './scheduler.js';
import { VariantCache, type VariantLease } from './variant-cache.js';

/** Runs Extism plugins; `maxThreads` plugins (each one worker) at once, the rest queue. */
export interface ExtismEngine {
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
  /** Stops every plugin and spare; calls in flight end at once (R-TIMEOUT-CANCELLED). */
  close(): Promise<void>;
  /** Counts for tests and diagnostics. */
  stats(): ExtismStats;
  /**
   * Settles when every run has finished (a call ended at its deadline returns before its run
   * has ordered the next spare) and every spare being made is ready or failed: for tests that
   * need a warm call.
   */
  settled(): Promise<void>;
}

/** What the Extism runtime holds and has done, for tests and diagnostics. */
export interface ExtismStats {
  /** Calls that found a warm spare, and calls that made their own plugin. */
  readonly warm: number;
  readonly cold: number;
  /** Spares held now, and the variants they were made for. */
  readonly spares: number;
  readonly spareKeys: readonly string[];
  /** Variants held for caps other than the manifests' own (ABI-ALLOC-009). */
  readonly variants: readonly string[];
}

/** Options of createExtismEngine (the engine passes its own config). */
export interface ExtismEngineConfig {
  readonly maxThreads: number;
  readonly maxQueue: number;
  /** A spare unused this long (ms) is closed, so an idle process keeps no workers; default 30 000. */
  readonly spareIdleMs?: number;
  /** The cache of variants, shared with the lanes' runner; default one of its own. */
  readonly variants?: VariantCache;
}

const DEFAULT_SPARE_IDLE_MS = 30_000;

/** The Extism runner with its counts. */
export interface ExtismRunner extends Runner<PluginVariant> {
  stats(): ExtismStats;
  /** Settles when every spare being made is ready or failed. */
  settled(): Promise<void>;
}

/**
 * Creates the Extism runner; it starts no worker until a call comes. A worker here is a place for
 * one call: each call makes (or takes) its own plugin, and closes it once it has its result.
 */
export function createExtismRunner(config: ExtismEngineConfig): ExtismRunner {
  const cache = config.variants ?? new VariantCache();
  const defaults = new Map<string, Promise<PluginVariant>>();
  /** Keys of this runner's variants in the cache, which the lanes' runner may share. */
  const held = new Set<string>();
  const runs = new Set<Promise<unknown>>();
  const counts = { warm: 0, cold: 0 };
  const spares = new SparePool(makePlugin, config.maxThreads, config.spareIdleMs ?? DEFAULT_SPARE_IDLE_MS);

  /** Runs one call on a plugin used for it alone; the next call of its variant gets a spare. */
  const run = async (call: ExtismCall, { variant, request }: RunnerCall<PluginVariant>): Promise<ExecuteResult> => {
    const pages = request.limits.maxMemoryPages;
    // A spare of this very variant if there is one; either way the next call gets a spare,
    // ordered when this one ends so that making it does not slow this one down.
    const spare = spares.take(variant.key);
    let made: Plugin | Error | undefined = spare === undefined ? undefined : await spare.ready;
    if (made instanceof Error) made = undefined;
    if (made !== undefined) {
      counts.warm += 1;
      spare!.slot.handler = call.capabilityCall;
    } else {
      counts.cold += 1;
      try {
        made = await makePlugin(variant, pages, { handler: call.capabilityCall });
      } catch (err) {
        return fault('S-TOOL-INSTANTIATE', `The plugin could not be instantiated: ${describe(err).message}`, { error: describe(err).message });
      }
    }
    try {
      return await call.runOn(made);
    } finally {
      // A spare only of a variant still held after this call.
      if (defaults.has(variant.key) || cache.has(variant.key)) spares.warmUp(variant, pages);
      // The result is in hand: stopping the worker (a few ms) is off the call's path, but
      // close() still waits for it.
      spares.retire(made);
    }
  };

  return {
    endsCallsOnClose: true,
    // The loader's compiled module is the instrumented plugin for the tool's own cap, kept for the
    // host's life; a request asking for less memory gets its own variant, from the bounded cache,
    // and losing it closes its spares (ABI-ALLOC-011). The shim carries the fuel budget.
    prepare(m, { maxMemoryPages: cap, fuel }): VariantLease<PluginVariant> {
      const key = `${m.digest}:${cap}:${fuel}`;
      const shim = (hasStart: boolean) => WebAssembly.compile(buildShim(m.entrypoint, fuel, hasStart));
      if (cap === m.cap) {
        let own = defaults.get(key);
        if (own === undefined) {
          own = shim(m.instrumented.hasStart).then((s) => ({ key, plugin: m.compiled, shim: s }));
          defaults.set(key, own);
        }
        return { value: own, ready: undefined, release: () => undefined };
      }
      return cache.acquire(key, () => {
        const inst = instrumentModule(m.bytes, { maxMemoryPages: cap });
        const value = Promise.all([WebAssembly.compile(inst.bytes), shim(inst.hasStart)]).then(([plugin, s]): PluginVariant => ({ key, plugin, shim: s }));
        held.add(key);
        const evicted = () => {
          held.delete(key);
          spares.dropVariant(key);
        };
        return { value, bytes: inst.bytes.length, evicted };
      });
    },
    spawn(): RunnerWorker<PluginVariant> {
      let current: ExtismCall | undefined;
      return {
        state: 'ready',
        run(runnerCall) {
          const call = (current = new ExtismCall(runnerCall));
          const running = run(call, runnerCall);
          runs.add(running);
          const forget = () => {
            runs.delete(running);
            if (current === call) current = undefined;
          };
          running.then(forget, forget);
          return running;
        },
        stop: () => current?.stop(),
        retire: () => undefined,
      };
    },
    async close() {
      // Runs close their own plugins; spares still being made are closed as they come. Wait for
      // both so no worker outlives close().
      await Promise.allSettled([...runs]);
      await spares.close();
    },
    stats() {
      return { ...counts, spares: spares.count, spareKeys: spares.keys(), variants: [...held] };
    },
    settled: () => spares.settled(),
  };
}

/**
 * Creates the Extism engine: the Extism runner behind its own scheduler, `maxThreads` calls at
 * once. The host's engine makes one when the first extism/v1 call comes.
 */
export function createExtismEngine(config: ExtismEngineConfig): ExtismEngine {
  const runner = createExtismRunner(config);
  const scheduler = createScheduler(runner, { maxWorkers: config.maxThreads, minWorkers: 0, maxQueue: config.maxQueue });
  return {
    execute: (request) => scheduler.execute(request),
    close: () => scheduler.close(),
    stats: () => runner.stats(),
    async settled() {
      await scheduler.settled();
      await runner.settled();
    },
  };
}

/** Makes a plugin of `variant`; its host function is whatever call `slot` holds when it runs. */
async function makePlugin(variant: PluginVariant, maxMemoryPages: number, slot: Slot): Promise<Plugin> {
  const createPlugin = await loadExtism();
  // Extism runs host functions on the main thread while the plugin's worker blocks, so the
  // broker's asynchronous work (store, network) is fine here.
  const capabilityCall = (ctx: CallContext, offset: bigint): Promise<bigint> =>
    slot.handler !== undefined ? slot.handler(ctx, offset) : Promise.reject(new GuestAbort('S-TOOL-WORKER-LOST', 'The plugin asked for a capability while no call was bound to it.'));
  return createPlugin(
    { wasm: [{ name: PLUGIN_MODULE_NAME, module: variant.plugin }, { name: 'main', module: variant.shim }] },
    {
      runInWorker: true,
      useWasi: false,
      logLevel: 'silent',
      functions: { [EXTISM_USER_MODULE]: { [EXTISM_CAPABILITY_CALL]: capabilityCall } },
      // Extism's own memory (input, output, answers, vars) is capped like linear memory;
      // the plugin's linear memory is capped by the instrumenter (ABI-MEMORY-002).
      memory: { maxPages: maxMemoryPages, maxVarBytes: maxMemoryPages * 65_536, maxHttpResponseBytes: 0 },
      allowedHosts: [],
      // No Extism timeoutMs: on a timeout it starts a replacement worker, which a one-call plugin
      // never needs and which would outlive a plugin closed by our deadline.
      timeoutMs: null,
      sharedArrayBufferSize: 1 << 20,
    },
  );
}

/**
 * Loads @extism/extism on first use. The SDK imports node:wasi, which Helix never enables
 * (`useWasi: false`) but whose load prints an ExperimentalWarning on stderr; that one warning is
 * dropped while the SDK loads, every other goes through.
 */
export async function loadExtism(): Promise<(typeof import('@extism/extism'))['default']> {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (!text.includes('WASI')) (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return (await import('@extism/extism')).default;
  } finally {
    process.emitWarning = emit;
  }
}
