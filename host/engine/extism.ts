// Runs extism/v1 toolpacks on @extism/extism 2.0.0-rc13 in worker mode, under the same limits
// as helix/v1 calls. Each call gets a fresh plugin (so a fresh instance and worker: no state
// survives, ABI-CALL-001) made of the instrumented plugin (fuel counter, memory cap) and the
// metering shim (extism-shim.ts); usually a spare made ahead of the call (ABI-EXTISM-006).
// Capability calls arrive as the host function `extism:host/user.helix_capability_call`, which
// Extism runs on the main thread, and go to the broker of the call the plugin serves: the same
// envelopes, allowlist, journal and limits as `helix_v1.capability_call`. The first exit the host
// function throws is the call's outcome: Extism stops the plugin's worker at once, and the host
// function answers nothing more (ABI-FINAL-006).
import type { CallContext, Plugin } from '@extism/extism';
import { EXTISM_CAPABILITY_CALL, EXTISM_USER_MODULE } from '../../abi/index.js';
import { instrumentModule } from '../wasm/index.js';
import type { EngineModule, ExecuteRequest } from './engine.js';
import { GuestAbort } from './decision.js';
import { classify, describe, fault } from './extism-outcome.js';
import { buildShim, decodeReport, PLUGIN_MODULE_NAME, REPORT_EXPORT, type ShimReport } from './extism-shim.js';
import type { ExecuteResult } from './protocol.js';
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
  /** The cache of variants, shared with the lanes' engine; default one of its own. */
  readonly variants?: VariantCache;
}

interface Variant {
  /** digest, memory cap and fuel: everything a plugin is made for. */
  readonly key: string;
  readonly plugin: WebAssembly.Module;
  readonly shim: WebAssembly.Module;
}

/** The host function of the call a plugin serves; a spare gets it when a call takes the spare. */
type CapabilityHandler = (ctx: CallContext, offset: bigint) => Promise<bigint>;

interface Slot {
  handler?: CapabilityHandler;
}

/** A plugin made ahead of need for one variant; it serves one call, then is closed. */
interface Spare {
  readonly key: string;
  readonly slot: Slot;
  /** The plugin, or why it could not be made; never rejects. */
  readonly ready: Promise<Plugin | Error>;
  /** listed: waiting in the pool; taken: a call has it; dropped: evicted, idle or engine closed. */
  status: 'listed' | 'taken' | 'dropped';
  idle?: NodeJS.Timeout;
}

/** One call's state, shared by the run, its deadline and its host function. */
interface CallState {
  done: boolean;
  plugin?: Plugin;
  started: boolean;
  /** Settles when the deadline or a cancel ended the call: a closed plugin's call never settles. */
  readonly stopped: Promise<typeof STOPPED>;
  /** Ends the call now with the fault for `why` (deadline, caller's cancel, engine closed). */
  end?: (why: 'deadline' | 'cancel' | 'closed') => void;
  /** The first exit the host function threw: the call's outcome from then on. */
  decision?: GuestAbort;
}

const STOPPED = Symbol('stopped');
const DEFAULT_SPARE_IDLE_MS = 30_000;

/**
 * Creates the Extism engine; it starts no worker until a call comes. Making a plugin (a worker
 * and an instance) is most of an Extism call's cost, so when a call ends the engine makes a
 * spare for the same variant in the background: the next call finds its plugin ready. A spare
 * still serves exactly one call and is then closed (ABI-CALL-001); nothing of the plugin runs
 * before its call (the shim runs the start function), so a spare is as fresh as a plugin made
 * on the spot. Spares are per variant (digest, memory cap, fuel: the plugin's limits), at most
 * `maxThreads` in all, made only of variants the engine still holds, and closed after `spareIdleMs`
 * unused, when their variant is given up (ABI-ALLOC-011) or on close().
 */
export function createExtismEngine(config: ExtismEngineConfig): ExtismEngine {
  const cache = config.variants ?? new VariantCache();
  const defaults = new Map<string, Promise<Variant>>();
  /** Keys of this runtime's variants in the cache, which the lanes' engine may share. */
  const held = new Set<string>();
  const live = new Set<Plugin>();
  const calls = new Set<CallState>();
  const waiting: Array<() => void> = [];
  const spares = new Map<string, Spare[]>();
  const making = new Set<Promise<unknown>>();
  const closing = new Set<Promise<unknown>>();
  const runs = new Set<Promise<ExecuteResult>>();
  const counts = { warm: 0, cold: 0 };
  const spareIdleMs = config.spareIdleMs ?? DEFAULT_SPARE_IDLE_MS;
  let spareCount = 0;
  let active = 0;
  let closed = false;

  // The loader's compiled module is the instrumented plugin for the tool's own cap, kept for the
  // host's life; a request asking for less memory gets its own variant, from the bounded cache,
  // and losing it closes its spares (ABI-ALLOC-011). The shim carries the fuel budget.
  const variantFor = (m: EngineModule, cap: number, fuel: number): VariantLease<Variant> => {
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
      const value = Promise.all([WebAssembly.compile(inst.bytes), shim(inst.hasStart)]).then(([plugin, s]): Variant => ({ key, plugin, shim: s }));
      held.add(key);
      const evicted = () => {
        held.delete(key);
        for (const spare of [...(spares.get(key) ?? [])]) drop(spare);
      };
      return { value, bytes: inst.bytes.length, evicted };
    });
  };
  const acquire = async (): Promise<void> => {
    if (active < config.maxThreads) {
      active += 1;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else active -= 1;
  };

  /** Makes a plugin of `variant`; its host function is whatever call `slot` holds when it runs. */
  const makePlugin = async (variant: Variant, maxMemoryPages: number, slot: Slot): Promise<Plugin> => {
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
        // No Extism timeoutMs: on a timeout it starts a replacement worker, which a
        // one-call plugin never needs and which would outlive a plugin closed by our deadline.
        timeoutMs: null,
        sharedArrayBufferSize: 1 << 20,
      },
    );
  };

  /** Closes a plugin in the background; close() waits for every one. */
  const retire = (plugin: Plugin): void => {
    const ending = plugin.close().catch(() => undefined);
    closing.add(ending);
    void ending.then(() => closing.delete(ending));
  };
  /** Removes a listed spare from the pool; its plugin is closed once it exists. */
  const drop = (spare: Spare): void => {
    if (spare.status !== 'listed') return;
    spare.status = 'dropped';
    clearTimeout(spare.idle);
    const list = spares.get(spare.key)!;
    list.splice(list.indexOf(spare), 1);
    if (list.length === 0) spares.delete(spare.key);
    spareCount -= 1;
    const retired = spare.ready.then((p) => {
      if (!(p instanceof Error)) retire(p);
    });
    closing.add(retired);
    void retired.then(() => closing.delete(retired));
  };
  /** Starts making a spare of `variant`; when the pool is full a spare of another variant gives way. */
  const warmUp = (variant: Variant, maxMemoryPages: number): void => {
    if (closed) return;
    if (spareCount >= config.maxThreads) {
      const other = [...spares.entries()].find(([key]) => key !== variant.key)?.[1][0];
      if (other === undefined) return;
      drop(other);
    }
    const slot: Slot = {};
    // Listed now, so a call coming at once takes it and waits for it rather than making another;
    // made on the next turn of the event loop, once the call that ordered it has its result.
    const ready = new Promise<void>((resolve) => setImmediate(resolve))
      .then<Plugin | Error>(async () => {
        if (spare.status === 'dropped') return new Error('The spare was dropped before it was made.');
        const plugin = await makePlugin(variant, maxMemoryPages, slot);
        // One call of the shim's report, which runs none of the plugin's code and changes none
        // of its state (it reads the fuel counter and memory size; Extism resets its own blocks
        // at each call): the worker's call path is then warm for the real call.
        try {
          await plugin.call(REPORT_EXPORT);
        } catch (err) {
          retire(plugin);
          throw err;
        }
        return plugin;
      })
      .catch((err: unknown) => new Error(describe(err).message));
    const spare: Spare = { key: variant.key, slot, ready, status: 'listed' };
    const list = spares.get(variant.key) ?? [];
    list.push(spare);
    spares.set(variant.key, list);
    spareCount += 1;
    const made = ready.then((p) => {
      making.delete(made);
      // A spare that failed is dropped; the call that takes the next one makes its own plugin.
      if (p instanceof Error) drop(spare);
      else if (spare.status === 'listed') spare.idle = setTimeout(() => drop(spare), spareIdleMs).unref();
    });
    making.add(made);
  };
  /** The oldest spare of `key`, ready or still being made, taken out of the pool. */
  const take = (key: string): Spare | undefined => {
    const list = spares.get(key);
    const spare = list?.shift();
    if (spare === undefined) return undefined;
    if (list!.length === 0) spares.delete(key);
    spareCount -= 1;
    spare.status = 'taken';
    clearTimeout(spare.idle);
    return spare;
  };

  const run = async (request: ExecuteRequest, state: CallState): Promise<ExecuteResult> => {
    const { module, input, limits, broker } = request;
    await acquire();
    // The variant is held from here, not while the call waits for a slot: waiting calls hold none.
    let lease: VariantLease<Variant> | undefined;
    try {
      if (state.done) return fault('R-TIMEOUT-001', 'The call ended before it started.', {}, 0, 0);
      let variant: Variant;
      try {
        lease = variantFor(module, limits.maxMemoryPages, limits.fuel);
        variant = await lease.value;
      } catch (err) {
        return fault('S-TOOL-INSTANTIATE', `The module cannot run under a memory cap of ${limits.maxMemoryPages} pages: ${(err as Error).message}`, { max_memory_pages: limits.maxMemoryPages }, 0, 0);
      }
      state.started = true;
      let capabilityFuel = 0;
      const serve = async (ctx: CallContext, offset: bigint): Promise<bigint> => {
        const request = ctx.read(offset);
        if (request === null) throw new GuestAbort('S-TOOL-BAD-POINTER', `${EXTISM_CAPABILITY_CALL}(${offset}) names no Extism memory block.`, { import: EXTISM_CAPABILITY_CALL, offset: offset.toString() });
        const answer = await broker(request.bytes().slice());
        // After a deadline the worker is gone: returning would leave Extism waiting for it.
        if (state.done) throw new GuestAbort('R-TIMEOUT-001', 'The call ended while the broker worked.');
        if (answer.kind === 'abort') throw new GuestAbort(answer.code, answer.message, answer.details);
        capabilityFuel += answer.fuel;
        if (capabilityFuel > limits.fuel) {
          throw new GuestAbort('S-TOOL-FUEL-EXHAUSTED', `The tool used up its fuel budget of ${limits.fuel}.`, { fuel_limit: limits.fuel, fuel_used: capabilityFuel, phase: 'capability' });
        }
        try {
          return ctx.store(answer.response);
        } catch (err) {
          throw new GuestAbort('S-TOOL-TRAP', `The answer does not fit in the plugin's Extism memory (capped at ${limits.maxMemoryPages} pages): ${(err as Error).message}`, { max_memory_pages: limits.maxMemoryPages, answer_bytes: answer.response.length });
        }
      };
      // Whatever the host function throws is the decision, and every later call gets it again
      // without reaching the broker. Extism stops the worker when a host function throws, so
      // the plugin cannot catch it; the refusal holds even if a later version did not.
      const capabilityCall: CapabilityHandler = async (ctx, offset) => {
        if (state.decision !== undefined) throw state.decision;
        try {
          return await serve(ctx, offset);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          throw (state.decision ??= err instanceof GuestAbort ? err : new GuestAbort('S-TOOL-WORKER-LOST', `The capability broker failed: ${message}`));
        }
      };
      // A spare of this very variant if there is one; either way the next call gets a spare,
      // ordered when this one ends so that making it does not slow this one down.
      const spare = take(variant.key);
      let made: Plugin | Error | undefined = spare === undefined ? undefined : await spare.ready;
      if (made instanceof Error) made = undefined;
      if (made !== undefined) {
        counts.warm += 1;
        spare!.slot.handler = capabilityCall;
      } else {
        counts.cold += 1;
        try {
          made = await makePlugin(variant, limits.maxMemoryPages, { handler: capabilityCall });
        } catch (err) {
          return fault('S-TOOL-INSTANTIATE', `The plugin could not be instantiated: ${describe(err).message}`, { error: describe(err).message }, 0, 0);
        }
      }
      const plugin: Plugin = made;
      state.plugin = plugin;
      live.add(plugin);
      try {
        if (state.done) return fault('R-TIMEOUT-001', 'The call ended while the plugin started.', {}, 0, 0);
        let output: Uint8Array | null = null;
        let failure: unknown;
        const called = await Promise.race([plugin.call(module.entrypoint, input).then((o) => ({ o }), (e: unknown) => ({ e })), state.stopped]);
        if (called === STOPPED) return fault('R-TIMEOUT-001', 'The call was stopped.', {}, 0, 0);
        if ('e' in called) failure = called.e;
        else output = called.o?.bytes().slice() ?? null;
        let report: ShimReport | null = null;
        if (state.decision === undefined && !state.done) {
          try {
            const reported = await Promise.race([plugin.call(REPORT_EXPORT), state.stopped]);
            report = reported === STOPPED || reported === null ? null : decodeReport(reported.bytes());
          } catch {
            report = null;
          }
        }
        return classify({ output, failure, decision: state.decision, report, capabilityFuel, limits, entrypoint: module.entrypoint, exportName: (index) => module.instrumented.info.exports.find((e) => e.kind === 'func' && e.index === index)?.name });
      } finally {
        live.delete(plugin);
        // A spare only of a variant still held after this call lets go of it.
        lease.release();
        if (defaults.has(variant.key) || cache.has(variant.key)) warmUp(variant, limits.maxMemoryPages);
        // The result is in hand: stopping the worker (a few ms) is off the call's path, but
        // close() still waits for it.
        retire(plugin);
      }
    } finally {
      lease?.release();
      release();
    }
  };

  return {
    async execute(request) {
      if (closed) return fault('S-TOOL-WORKER-LOST', 'The engine is closed.', {}, 0, 0);
      if (active >= config.maxThreads && waiting.length >= config.maxQueue) {
        return fault('R-CAP-QUEUE-FULL', `${config.maxQueue} calls are already waiting.`, { retry_after_ms: 100, max_queue: config.maxQueue }, 0, 0);
      }
      let markStopped!: (s: typeof STOPPED) => void;
      const state: CallState = { done: false, started: false, stopped: new Promise((resolve) => (markStopped = resolve)) };
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      // The deadline covers waiting, instantiation, execution and capability waits; on overrun
      // the plugin's worker is terminated (plugin.close), as a lane's would be.
      const stop = new Promise<ExecuteResult>((resolve) => {
        state.end = (why) => {
          if (state.done) return;
          state.done = true;
          markStopped(STOPPED);
          const phase = state.started ? 'run' : 'queue';
          void state.plugin?.close();
          const stopped = phase === 'run' ? '; its worker was stopped' : '';
          const decision = state.decision;
          if (decision !== undefined) {
            // The host function had already ended the call: that stays its outcome (ABI-FINAL-001).
            resolve(fault(decision.code, decision.message, decision.details, 0, 0));
          } else if (why === 'deadline') {
            resolve(fault('R-TIMEOUT-001', `The call did not finish within ${request.limits.timeoutMs} ms${phase === 'queue' ? ' (it was still waiting for a worker)' : stopped}.`, { timeout_ms: request.limits.timeoutMs, phase }, 0, 0));
          } else if (why === 'cancel') {
            resolve(fault('R-TIMEOUT-CANCELLED', `The call was cancelled by its caller${stopped}.`, { phase }, 0, 0));
          } else {
            // As the lanes' engine does for calls still queued when it closes.
            resolve(phase === 'queue' ? fault('S-TOOL-WORKER-LOST', 'The engine closed before the call ran.', { phase }, 0, 0) : fault('R-TIMEOUT-CANCELLED', `The call was cancelled: the engine closed${stopped}.`, { phase, reason: 'engine_closed' }, 0, 0));
          }
        };
        timer = setTimeout(() => state.end!('deadline'), Math.max(0, request.limits.timeoutMs));
        if (request.signal !== undefined) {
          onAbort = () => state.end!('cancel');
          if (request.signal.aborted) onAbort();
          else request.signal.addEventListener('abort', onAbort, { once: true });
        }
      });
      calls.add(state);
      const running = run(request, state);
      runs.add(running);
      const forget = () => runs.delete(running);
      running.then(forget, forget);
      try {
        const result = await Promise.race([running, stop]);
        state.done = true;
        return result;
      } finally {
        calls.delete(state);
        clearTimeout(timer);
        if (onAbort !== undefined) request.signal?.removeEventListener('abort', onAbort);
      }
    },
    async close() {
      closed = true;
      for (const list of [...spares.values()]) for (const spare of [...list]) drop(spare);
      // Calls in flight end now (their plugins are closed), not at their deadlines.
      for (const state of [...calls]) state.end?.('closed');
      await Promise.all([...live].map((p) => p.close()));
      // Runs close their own plugins; spares still being made are closed as they come. Wait for
      // both so no worker outlives close().
      await Promise.allSettled([...runs, ...making]);
      while (closing.size > 0) await Promise.all([...closing]);
    },
    stats() {
      return { ...counts, spares: spareCount, spareKeys: [...spares.values()].flatMap((list) => list.map((spare) => spare.key)), variants: [...held] };
    },
    async settled() {
      while (runs.size > 0 || making.size > 0) await Promise.allSettled([...runs, ...making]);
    },
  };
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
