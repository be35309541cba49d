// The lanes' runner, for helix/v1 modules and extism/v1 plugins alike: each worker is a lane
// (lane.ts) on a piscina thread, which keeps compiled modules and recyclable instances between
// calls (ABI-CALL-001, ABI-ALLOC-008, ABI-EXTISM-006). A module runs as
// the loader compiled it for its manifest's memory cap, or as a variant for a smaller cap from the
// bounded cache (ABI-ALLOC-009); a worker that has dropped many variants is unfit and replaced
// when idle (ABI-ALLOC-010).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { AbiId } from '../../../abi/index.js';
import { packageRoot } from '../../1-base/paths.js';
import { prepareModule } from '../modules/module-pipeline.js';
import { Lane, type LaneOutcome } from './lane.js';
import type { ExecuteResult, ExecuteTask, LaneStart, WorkerCensus } from './protocol.js';
import { fault, type EngineModule, type Runner, type RunnerCall, type RunnerWorker, type WorkerEvents } from './runner.js';
import type { VariantCache, VariantLease } from './variant-cache.js';

/** What the lane runner takes from the engine's config. */
export interface LaneRunnerConfig {
  readonly minThreads: number;
  readonly maxThreads: number;
  readonly recycleInstances: boolean;
  readonly spinMicros: number;
  /** The cache of variants, shared by every runner of the engine. */
  readonly variants: VariantCache;
  /** Whether close() stops the calls in flight (R-TIMEOUT-CANCELLED) rather than letting them finish; default false. */
  readonly endsCallsOnClose?: boolean;
}

/** A module compiled for one memory cap, as a lane runs it. */
export interface LaneVariant {
  /** digest and memory cap. */
  readonly key: string;
  /** helix/v1 runs in the worker's Sandbox, extism/v1 in its ExtismSandbox. */
  readonly abi: AbiId;
  readonly module: WebAssembly.Module;
  readonly recyclable: boolean;
  readonly hasStart: boolean;
  readonly globalExports: readonly string[];
}

/** One lane as the scheduler sees it. */
export class LaneWorker implements RunnerWorker<LaneVariant> {
  constructor(
    readonly lane: Lane,
    readonly config: LaneRunnerConfig,
  ) {}

  get state(): 'ready' | 'unfit' | 'dead' {
    return this.lane.dead ? 'dead' : this.lane.stale ? 'unfit' : 'ready';
  }

  get up(): Promise<void> | undefined {
    return this.lane.isUp ? undefined : this.lane.up;
  }

  run({ request, variant, broker, alone }: RunnerCall<LaneVariant>): Promise<ExecuteResult> {
    const { module, input, limits } = request;
    const task: ExecuteTask = {
      kind: 'execute',
      ...(variant.abi === 'extism/v1' ? { abi: 'extism/v1' } : {}),
      key: variant.key,
      recyclable: variant.recyclable && this.config.recycleInstances,
      hasStart: variant.hasStart,
      globalExports: variant.globalExports,
      entrypoint: module.entrypoint,
      input,
      fuel: limits.fuel,
      maxOutputBytes: limits.maxOutputBytes,
      maxMemoryPages: limits.maxMemoryPages,
    };
    // A plain `then`, not `await`: one promise hop less on the call path.
    return this.lane.run(task, variant.module, broker, alone ? this.config.spinMicros / 1000 : 0).then(laneResult);
  }

  stop(): void {
    this.lane.kill();
  }

  retire(): void {
    this.lane.kill();
  }

  /** What the worker holds; undefined when it is busy or gone (ABI-ALLOC-010). */
  census(): Promise<WorkerCensus | undefined> {
    return this.lane.census();
  }
}

/** The call's result from how its task on the lane ended. */
function laneResult(outcome: LaneOutcome): ExecuteResult {
  if (outcome.kind === 'lost')
    return fault('S-TOOL-WORKER-LOST', `The worker running the call stopped: ${outcome.message}`, { error: outcome.message });
  const reply = outcome.reply;
  if (reply.kind === 'host-error' || reply.kind === 'census') {
    return fault('S-TOOL-WORKER-LOST', 'The worker failed while serving the call.', {
      error: reply.kind === 'census' ? 'the worker answered a census' : reply.message,
    });
  }
  return reply;
}

/** The helix/v1 runner and its piscina pool. */
export function createLaneRunner(config: LaneRunnerConfig): Runner<LaneVariant, LaneWorker> {
  // Each worker runs one long-lived `serve` task (a lane), so piscina's per-task queue, timing
  // histograms and atomics wake-ups are not on the call path; piscina starts and terminates the
  // threads.
  const pool = new Piscina<LaneStart, string>({
    filename: workerFile(),
    minThreads: config.minThreads,
    maxThreads: config.maxThreads,
    idleTimeout: 2 ** 31 - 1,
    recordTiming: false,
    atomics: 'disabled',
  });
  const lanes = new Map<LaneWorker, WorkerEvents>();

  /** Tells every worker that holds `key` to drop it; those left unfit are replaced when idle (ABI-ALLOC-010). */
  const forget = (key: string, bytes: number): void => {
    for (const worker of lanes.keys()) worker.lane.forget(key, bytes);
    for (const [worker, events] of lanes) if (worker.state === 'unfit') events.unfit();
  };
  return {
    endsCallsOnClose: config.endsCallsOnClose ?? false,
    // The loader compiled each module for the tool's own memory cap, and keeps it for the host's
    // life: that variant costs nothing more to keep, and is never evicted. A request asking for
    // less memory needs its own variant, from the bounded cache.
    prepare(m: EngineModule, limits): VariantLease<LaneVariant> {
      const cap = limits.maxMemoryPages;
      const key = `${m.digest}:${cap}`;
      if (cap === m.cap) {
        const own: LaneVariant = {
          key,
          abi: m.abi,
          module: m.compiled,
          recyclable: m.instrumented.recyclable,
          hasStart: m.instrumented.hasStart,
          globalExports: m.instrumented.globalExports,
        };
        return { value: Promise.resolve(own), ready: own, release: () => undefined };
      }
      return config.variants.acquire(key, () => {
        const { instrumented: inst, compiled } = prepareModule(m.bytes, { abi: m.abi, digest: m.digest }, cap);
        const value = compiled.then(
          (module): LaneVariant => ({
            key,
            abi: m.abi,
            module,
            recyclable: inst.recyclable,
            hasStart: inst.hasStart,
            globalExports: inst.globalExports,
          }),
        );
        return { value, bytes: inst.bytes.length, evicted: () => forget(key, inst.bytes.length) };
      });
    },
    spawn(events) {
      const worker: LaneWorker = new LaneWorker(
        new Lane(pool, () => {
          lanes.delete(worker);
          events.ended();
        }),
        config,
      );
      lanes.set(worker, events);
      return worker;
    },
    async close() {
      await Promise.all([...lanes.keys()].map((worker) => worker.lane.shutdown()));
      await pool.destroy();
    },
  };
}

/** Where the compiled worker lives: beside this file, or in dist/ when running from sources (tests). */
function workerFile(): string {
  const sibling = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = path.join(packageRoot(), 'dist', 'host', '2-sandbox', 'engine', 'worker.js');
  if (existsSync(built)) return built;
  throw new Error(`The sandbox worker is not built (looked for ${sibling} and ${built}); run npm run build.`);
}
