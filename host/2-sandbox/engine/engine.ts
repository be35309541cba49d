// The engine: one scheduler (scheduler.ts) per kind of module, each over lanes (lane-runner.ts):
// helix/v1 modules, and extism/v1 plugins with the engine's Extism kernel (extism.ts), whose
// workers start only when the first such call comes. Both share the bounded cache of variants
// (ABI-ALLOC-009).
import { availableParallelism } from 'node:os';
import { createExtismEngine, type ExtismEngine, type ExtismStats } from './extism.js';
import { createLaneRunner } from './lane-runner.js';
import type { ExecuteResult, WorkerCensus } from './protocol.js';
import type { ExecuteRequest } from './runner.js';
import { createScheduler } from './scheduler.js';
import { VariantCache, type VariantStats } from './variant-cache.js';

export type { EngineModule, ExecuteRequest } from './runner.js';

/** Options of createEngine; every one has a default. */
export interface EngineOptions {
  /** Most worker threads; default the number of CPUs. */
  readonly maxThreads?: number;
  /** Workers kept warm; default 1. */
  readonly minThreads?: number;
  /** Most calls waiting for a worker before new ones get R-CAP-QUEUE-FULL; default 10 000. */
  readonly maxQueue?: number;
  /**
   * Reuse an instance by restoring its post-start snapshot when that is provably the same as a
   * fresh instance (ABI-CALL-001); default true. False gives every call a new instance.
   */
  readonly recycleInstances?: boolean;
  /**
   * When a call is the only one in flight, the main thread polls this long (µs) for its reply
   * before yielding to the event loop, trading a little CPU for latency; default 50, 0 to off.
   */
  readonly spinMicros?: number;
}

/** EngineOptions with defaults applied and checked. */
export interface EngineConfig {
  readonly maxThreads: number;
  readonly minThreads: number;
  readonly maxQueue: number;
  readonly recycleInstances: boolean;
  readonly spinMicros: number;
}

/** What an engine holds, for tests and diagnostics. */
export interface EngineStats {
  /** Variants for caps other than the manifests' own, of both ABIs (ABI-ALLOC-009). */
  readonly variants: VariantStats;
  /** What each idle worker holds (busy workers are left out): ABI-ALLOC-010. */
  readonly workers: readonly WorkerCensus[];
  /** Workers replaced so far because they had dropped many variants (ABI-ALLOC-010). */
  readonly retired: number;
  /** What the extism/v1 runtime's idle workers hold, once it has started. */
  readonly extism: ExtismStats | undefined;
}

/** Runs guest calls in isolated workers. */
export interface Engine {
  readonly config: EngineConfig;
  /** Runs one call; resolves with the guest's result or a classified fault, never rejects for guest behaviour. */
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
  /** What the engine and its idle workers hold now. */
  stats(): Promise<EngineStats>;
  /** Stops every worker. */
  close(): Promise<void>;
}

/** Normalises and checks engine options; errors name the option path. */
export function resolveEngineConfig(options: EngineOptions = {}): EngineConfig {
  const cpus = Math.max(1, availableParallelism());
  const config: EngineConfig = {
    maxThreads: options.maxThreads ?? cpus,
    minThreads: options.minThreads ?? 1,
    maxQueue: options.maxQueue ?? 10_000,
    recycleInstances: options.recycleInstances ?? true,
    spinMicros: options.spinMicros ?? 50,
  };
  if (typeof config.recycleInstances !== 'boolean')
    throw new TypeError(`options.engine.recycleInstances must be a boolean, got ${String(config.recycleInstances)}`);
  for (const [name, value] of Object.entries(config)) {
    if (name === 'recycleInstances') continue;
    const min = name === 'minThreads' || name === 'spinMicros' ? 0 : 1;
    if (!Number.isInteger(value) || (value as number) < min) {
      throw new TypeError(`options.engine.${name} must be a ${min === 0 ? 'non-negative' : 'positive'} integer, got ${String(value)}`);
    }
  }
  if (config.minThreads > config.maxThreads) {
    throw new TypeError(
      `options.engine.minThreads (${config.minThreads}) must not exceed options.engine.maxThreads (${config.maxThreads})`,
    );
  }
  return config;
}

/** Creates an engine; `minThreads` workers start at once. */
export function createEngine(options: EngineOptions = {}): Engine {
  const config = resolveEngineConfig(options);
  const variants = new VariantCache();
  const lanes = createScheduler(createLaneRunner({ ...config, variants }), {
    maxWorkers: config.maxThreads,
    minWorkers: config.minThreads,
    maxQueue: config.maxQueue,
  });
  // Extism plugins get workers of their own, started only when needed.
  let extism: ExtismEngine | undefined;
  let closed = false;
  return {
    config,
    async execute(request) {
      // Once closed, the lanes' scheduler answers every call (S-TOOL-WORKER-LOST), and no Extism workers start.
      if (closed || request.module.abi !== 'extism/v1') return lanes.execute(request);
      extism ??= createExtismEngine({ ...config, variants });
      return extism.execute(request);
    },
    async stats() {
      const workers = await lanes.withIdleWorkers((idle) => Promise.all(idle.map((worker) => worker.census())));
      return {
        variants: variants.stats(),
        workers: workers.filter((w) => w !== undefined),
        retired: lanes.retired,
        extism: await extism?.stats(),
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await lanes.close();
      await extism?.close();
    },
  };
}
