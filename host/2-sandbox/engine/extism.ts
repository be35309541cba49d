// The extism/v1 runner: Extism plugins run on the engine's own lanes (lane-runner.ts), as helix/v1
// modules do, with the Extism kernel implemented by the engine in the worker (extism-kernel.ts,
// extism-sandbox.ts): instrumented like any module, restored from a post-start snapshot between
// calls, fresh state per call (ABI-EXTISM-006). The plugins get their own scheduler and workers,
// started when the first extism/v1 call comes, which end their calls when the engine closes
// (ABI-EXTISM-009). @extism/extism is not used to run them; it stays the reference the
// conformance test and the benchmark compare with (loadExtism).
import { createLaneRunner } from './lane-runner.js';
import type { ExecuteResult, WorkerCensus } from './protocol.js';
import type { ExecuteRequest } from './runner.js';
import { createScheduler } from './scheduler.js';
import { VariantCache } from './variant-cache.js';

/** Runs Extism plugins; `maxThreads` at once, the rest queue. */
export interface ExtismEngine {
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
  /** Stops every worker; calls in flight end at once (R-TIMEOUT-CANCELLED). */
  close(): Promise<void>;
  /** What the idle workers hold, for tests and diagnostics. */
  stats(): Promise<ExtismStats>;
  /** Settles once no call is running. */
  settled(): Promise<void>;
}

/** What the Extism workers hold (ABI-ALLOC-010, ABI-ALLOC-011). */
export interface ExtismStats {
  /** What each idle worker holds (busy workers are left out). */
  readonly workers: readonly WorkerCensus[];
}

/** Options of createExtismEngine (the engine passes its own config). */
export interface ExtismEngineConfig {
  readonly maxThreads: number;
  readonly maxQueue: number;
  /** Restore instances from their post-start snapshot where that equals a fresh one; default true. */
  readonly recycleInstances?: boolean;
  /** How long (µs) the main thread polls for a lone call's reply; default 50. */
  readonly spinMicros?: number;
  /** The cache of variants, shared with the helix/v1 lanes; default one of its own. */
  readonly variants?: VariantCache;
}

/** Creates the Extism engine; it starts no worker until a call comes. */
export function createExtismEngine(config: ExtismEngineConfig): ExtismEngine {
  const runner = createLaneRunner({
    minThreads: 0,
    maxThreads: config.maxThreads,
    recycleInstances: config.recycleInstances ?? true,
    spinMicros: config.spinMicros ?? 50,
    variants: config.variants ?? new VariantCache(),
    endsCallsOnClose: true,
  });
  const scheduler = createScheduler(runner, { maxWorkers: config.maxThreads, minWorkers: 0, maxQueue: config.maxQueue });
  return {
    execute: (request) => scheduler.execute(request),
    close: () => scheduler.close(),
    async stats() {
      const workers = await scheduler.withIdleWorkers((idle) => Promise.all(idle.map((worker) => worker.census())));
      return { workers: workers.filter((w) => w !== undefined) };
    },
    settled: () => scheduler.settled(),
  };
}

/**
 * Loads @extism/extism, the reference for conformance tests and the benchmark's baseline. The SDK
 * imports node:wasi, whose load prints an ExperimentalWarning on stderr; that one warning is
 * dropped while the SDK loads, every other goes through.
 */
export async function loadExtism(): Promise<typeof import('@extism/extism')['default']> {
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
