// The engine: compiled modules by digest and memory cap (a bounded cache of variants, ABI-ALLOC-009),
// a pool of sandbox workers (lanes on piscina threads), a FIFO queue, and the deadline: a call that
// overruns has its worker terminated, and a new worker takes its place. A call the broker has
// ended keeps that outcome whatever happens to its worker afterwards (ABI-FINAL-001).
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { DEFAULT_ENTRYPOINT, type AbiId, type EffectiveLimits } from '../../abi/index.js';
import type { LoadedTool } from '../loader/load-toolpacks.js';
import { packageRoot } from '../paths.js';
import { instrumentModule, type InstrumentResult } from '../wasm/index.js';
import { createExtismEngine, type ExtismEngine, type ExtismStats } from './extism.js';
import { Lane, type LaneBroker } from './lane.js';
import { VariantCache, type VariantLease, type VariantStats } from './variant-cache.js';
import type { BrokerAnswer, ExecuteFault, ExecuteResult, ExecuteTask, LaneStart, WorkerCensus } from './protocol.js';

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

/** A module as the engine runs it: checked, instrumented for one memory cap, compiled. */
export interface EngineModule {
  readonly digest: string;
  /** helix/v1 runs on the engine's lanes, extism/v1 on @extism/extism (extism.ts). */
  readonly abi: AbiId;
  readonly entrypoint: string;
  /** The module as built, for instrumenting variants with a smaller memory cap. */
  readonly bytes: Uint8Array;
  readonly instrumented: InstrumentResult;
  readonly compiled: WebAssembly.Module;
  /** The memory cap `instrumented` and `compiled` were made for. */
  readonly cap: number;
}

/** The engine's view of a loaded toolpack. */
export function engineModule(tool: LoadedTool): EngineModule {
  return { digest: tool.manifest.digest, abi: tool.manifest.abi, entrypoint: tool.manifest.entrypoint ?? DEFAULT_ENTRYPOINT, bytes: tool.module.bytes, instrumented: tool.module.instrumented, compiled: tool.module.compiled, cap: tool.limits.maxMemoryPages };
}

/** One call for the engine. */
export interface ExecuteRequest {
  readonly module: EngineModule;
  readonly input: Uint8Array;
  readonly limits: EffectiveLimits;
  /** Answers the guest's capability calls for this call. */
  readonly broker: LaneBroker;
  /** Aborting it cancels the call: dequeued if waiting, its worker stopped if running. */
  readonly signal?: AbortSignal;
}

/** What an engine holds, for tests and diagnostics. */
export interface EngineStats {
  /** Variants for caps other than the manifests' own, of both ABIs (ABI-ALLOC-009). */
  readonly variants: VariantStats;
  /** What each idle worker holds (busy workers are left out): ABI-ALLOC-010. */
  readonly workers: readonly WorkerCensus[];
  /** Workers replaced so far because they had dropped many variants (ABI-ALLOC-010). */
  readonly retired: number;
  /** The extism/v1 runtime's plugin counts, once it has started. */
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
  if (typeof config.recycleInstances !== 'boolean') throw new TypeError(`options.engine.recycleInstances must be a boolean, got ${String(config.recycleInstances)}`);
  for (const [name, value] of Object.entries(config)) {
    if (name === 'recycleInstances') continue;
    const min = name === 'minThreads' || name === 'spinMicros' ? 0 : 1;
    if (!Number.isInteger(value) || (value as number) < min) {
      throw new TypeError(`options.engine.${name} must be a ${min === 0 ? 'non-negative' : 'positive'} integer, got ${String(value)}`);
    }
  }
  if (config.minThreads > config.maxThreads) {
    throw new TypeError(`options.engine.minThreads (${config.minThreads}) must not exceed options.engine.maxThreads (${config.maxThreads})`);
  }
  return config;
}

/** Where the compiled worker lives: beside this file, or in dist/ when running from sources (tests). */
function workerFile(): string {
  const sibling = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  const built = path.join(packageRoot(), 'dist', 'host', 'engine', 'worker.js');
  if (existsSync(built)) return built;
  throw new Error(`The sandbox worker is not built (looked for ${sibling} and ${built}); run npm run build.`);
}

interface Variant {
  readonly key: string;
  readonly module: WebAssembly.Module;
  readonly recyclable: boolean;
  readonly hasStart: boolean;
  readonly globalExports: readonly string[];
}

/** A call waiting for, or running on, a lane. */
interface Job {
  readonly request: ExecuteRequest;
  readonly timeoutMs: number;
  readonly resolve: (result: ExecuteResult) => void;
  timer?: NodeJS.Timeout;
  /** Set while the call has a lane but waits for its variant to compile. */
  preparing?: Lane;
  /** Set once the call's task is on its lane. */
  lane?: Lane;
  done: boolean;
  /** The broker's abort, once it has ended the call: the call's outcome from then on. */
  decision?: BrokerAnswer & { readonly kind: 'abort' };
}

/** Creates an engine; `minThreads` workers start at once. */
export function createEngine(options: EngineOptions = {}): Engine {
  const config = resolveEngineConfig(options);
  // Each worker runs one long-lived `serve` task (a lane), so piscina's per-task queue,
  // timing histograms and atomics wake-ups are not on the call path; piscina starts,
  // terminates (on a deadline) and replaces the threads.
  const pool = new Piscina<LaneStart, string>({
    filename: workerFile(),
    minThreads: config.minThreads,
    maxThreads: config.maxThreads,
    idleTimeout: 2 ** 31 - 1,
    recordTiming: false,
    atomics: 'disabled',
  });
  const variants = new VariantCache();
  const lanes = new Set<Lane>();
  const idle: Lane[] = [];
  const queue: Job[] = [];
  let closed = false;
  let running = 0;
  let retired = 0;
  // Extism plugins bring their own workers; the engine starts that runtime only when needed.
  let extism: ExtismEngine | undefined;

  const onLaneEnd = (lane: Lane): void => {
    lanes.delete(lane);
    const i = idle.indexOf(lane);
    if (i !== -1) idle.splice(i, 1);
    // A dead lane frees a slot: a queued call may start on a replacement.
    if (!closed && queue.length > 0) dispatch(queue.shift()!);
  };
  const newLane = (): Lane => {
    const lane = new Lane(pool, onLaneEnd);
    lanes.add(lane);
    return lane;
  };
  for (let i = 0; i < config.minThreads; i++) idle.push(newLane());

  const finish = (job: Job, result: ExecuteResult): void => {
    if (job.done) return;
    job.done = true;
    clearTimeout(job.timer);
    job.resolve(decided(job, result));
  };
  const release = (lane: Lane): void => {
    if (lane.dead || closed) return;
    if (lane.stale) return retire(lane);
    const next = queue.shift();
    if (next !== undefined) start(next, lane);
    else idle.push(lane);
  };
  /**
   * Starts `job` on `lane` once its variant is compiled. The variant is resolved here, not when
   * the call comes, so a call waiting in the queue holds none (ABI-ALLOC-009).
   */
  const start = (job: Job, lane: Lane): void => {
    const cap = job.request.limits.maxMemoryPages;
    let lease: VariantLease<Variant>;
    try {
      lease = variantFor(job.request.module, cap);
    } catch (err) {
      finish(job, prepareFault(cap, err));
      release(lane);
      return;
    }
    if (lease.ready !== undefined) return runOn(job, lane, lease.ready, lease);
    job.preparing = lane;
    lease.value.then(
      (variant) => {
        job.preparing = undefined;
        if (!job.done && !closed) return runOn(job, lane, variant, lease);
        // The call ended (deadline, cancel) or the engine closed while the variant compiled.
        finish(job, engineFault('S-TOOL-WORKER-LOST', 'The engine closed before the call ran.', {}));
        lease.release();
        release(lane);
      },
      (err: unknown) => {
        job.preparing = undefined;
        lease.release();
        finish(job, prepareFault(cap, err));
        release(lane);
      },
    );
  };
  const runOn = (job: Job, lane: Lane, variant: Variant, lease: VariantLease<Variant>): void => {
    const { module, input, limits } = job.request;
    const task: ExecuteTask = {
      kind: 'execute',
      key: variant.key,
      recyclable: variant.recyclable && config.recycleInstances,
      hasStart: variant.hasStart,
      globalExports: variant.globalExports,
      entrypoint: module.entrypoint,
      input,
      fuel: limits.fuel,
      maxOutputBytes: limits.maxOutputBytes,
      maxMemoryPages: limits.maxMemoryPages,
    };
    job.lane = lane;
    running += 1;
    // Spin only for a lone call: with others in flight the main thread has dispatching to do.
    const spinMs = running === 1 && queue.length === 0 ? config.spinMicros / 1000 : 0;
    void lane.run(task, variant.module, (request) => ask(job, request), spinMs).then((outcome) => {
      running -= 1;
      // Released before the lane takes the next call, so an eviction this causes reaches the
      // worker ahead of that call's task (ABI-ALLOC-010).
      lease.release();
      if (job.done) return;
      if (outcome.kind === 'lost') {
        finish(job, engineFault('S-TOOL-WORKER-LOST', `The worker running the call stopped: ${outcome.message}`, { error: outcome.message }));
      } else if (outcome.reply.kind === 'host-error' || outcome.reply.kind === 'census') {
        finish(job, engineFault('S-TOOL-WORKER-LOST', 'The worker failed while serving the call.', { error: outcome.reply.kind === 'census' ? 'the worker answered a census' : outcome.reply.message }));
      } else {
        finish(job, outcome.reply);
      }
      release(lane);
    });
  };
  const dispatch = (job: Job): void => {
    const lane = idle.pop() ?? (lanes.size < config.maxThreads ? newLane() : undefined);
    if (lane !== undefined) {
      start(job, lane);
    } else if (queue.length >= config.maxQueue) {
      finish(job, engineFault('R-CAP-QUEUE-FULL', `${config.maxQueue} calls are already waiting.`, { retry_after_ms: 100, max_queue: config.maxQueue }));
    } else {
      queue.push(job);
    }
  };
  /** Stops a job wherever it is: waiting (dequeued), preparing (its lane freed once the variant is ready) or running (its worker terminated). */
  const stop = (job: Job): 'queue' | 'prepare' | 'run' => {
    if (job.lane !== undefined) {
      // The guest may be in an endless loop: only stopping its thread is safe.
      job.lane.kill();
      return 'run';
    }
    if (job.preparing !== undefined) return 'prepare';
    const i = queue.indexOf(job);
    if (i !== -1) queue.splice(i, 1);
    return 'queue';
  };
  const onDeadline = (job: Job): void => {
    if (job.done) return;
    const phase = stop(job);
    const where = { queue: ' (it was still waiting for a worker)', prepare: ' (its module was still being compiled for its memory cap)', run: '; its worker was stopped' }[phase];
    finish(job, engineFault('R-TIMEOUT-001', `The call did not finish within ${job.timeoutMs} ms${where}.`, { timeout_ms: job.timeoutMs, phase }));
  };
  const onCancel = (job: Job): void => {
    if (job.done) return;
    const phase = stop(job);
    finish(job, engineFault('R-TIMEOUT-CANCELLED', `The call was cancelled by its caller${phase === 'run' ? '; its worker was stopped' : ''}.`, { phase }));
  };

  /** Tells every worker that holds `key` to drop it, and replaces idle ones left stale (ABI-ALLOC-010). */
  const forget = (key: string, bytes: number): void => {
    for (const lane of lanes) lane.forget(key, bytes);
    for (const lane of idle.filter((l) => l.stale)) retire(lane);
  };
  /** Stops an idle lane's worker; a call that needs one gets a new worker, as after a deadline. */
  const retire = (lane: Lane): void => {
    retired += 1;
    const i = idle.indexOf(lane);
    if (i !== -1) idle.splice(i, 1);
    lane.kill();
  };
  // The loader compiled each module for the tool's own memory cap, and keeps it for the host's
  // life: that variant costs nothing more to keep, and is never evicted. A request asking for
  // less memory needs its own variant, from the bounded cache.
  const variantFor = (m: EngineModule, cap: number): VariantLease<Variant> => {
    const key = `${m.digest}:${cap}`;
    if (cap === m.cap) {
      const own: Variant = { key, module: m.compiled, recyclable: m.instrumented.recyclable, hasStart: m.instrumented.hasStart, globalExports: m.instrumented.globalExports };
      return { value: Promise.resolve(own), ready: own, release: () => undefined };
    }
    return variants.acquire(key, () => {
      const inst = instrumentModule(m.bytes, { maxMemoryPages: cap });
      const value = WebAssembly.compile(inst.bytes).then((module): Variant => ({ key, module, recyclable: inst.recyclable, hasStart: inst.hasStart, globalExports: inst.globalExports }));
      return { value, bytes: inst.bytes.length, evicted: () => forget(key, inst.bytes.length) };
    });
  };

  return {
    config,
    async execute({ module, input, limits, broker, signal }) {
      if (closed) return engineFault('S-TOOL-WORKER-LOST', 'The engine is closed.', {});
      if (module.abi === 'extism/v1') {
        extism ??= createExtismEngine({ ...config, variants });
        return extism.execute({ module, input, limits, broker, ...(signal === undefined ? {} : { signal }) });
      }
      return new Promise<ExecuteResult>((resolve) => {
        const job: Job = { request: { module, input, limits, broker }, timeoutMs: limits.timeoutMs, resolve, done: false };
        job.timer = setTimeout(() => onDeadline(job), Math.max(0, limits.timeoutMs));
        if (signal !== undefined) {
          if (signal.aborted) return onCancel(job);
          signal.addEventListener('abort', () => onCancel(job), { once: true });
        }
        dispatch(job);
      });
    },
    async stats() {
      // Idle lanes are taken out of the pool while they answer, so no call is sent to one meanwhile.
      const asked = idle.splice(0);
      const workers = await Promise.all(asked.map((lane) => lane.census()));
      for (const lane of asked) release(lane);
      return { variants: variants.stats(), workers: workers.filter((w) => w !== undefined), retired, extism: extism?.stats() };
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) finish(job, engineFault('S-TOOL-WORKER-LOST', 'The engine closed before the call ran.', {}));
      await Promise.all([...lanes].map((lane) => lane.shutdown()));
      await extism?.close();
      await pool.destroy();
    },
  };
}

/**
 * Asks the job's broker; notes its abort on the job, so that a deadline, a cancel or a lost
 * worker that follows cannot replace it as the call's outcome.
 */
async function ask(job: Job, request: Uint8Array): Promise<BrokerAnswer> {
  const answer = await job.request.broker(request);
  if (answer.kind === 'abort') job.decision ??= answer;
  return answer;
}

/**
 * The call's outcome: the broker's abort when it ended the call (the sandbox reports it too, but a
 * deadline, a cancel or a lost worker may come between), else `result`.
 */
function decided(job: Job, result: ExecuteResult): ExecuteResult {
  const decision = job.decision;
  if (decision === undefined || (result.kind === 'fault' && result.code === decision.code)) return result;
  return { kind: 'fault', code: decision.code, message: decision.message, details: decision.details, fuelUsed: result.fuelUsed, memoryPages: result.memoryPages, recycled: false };
}

/** A variant that cannot be built: the module cannot run under the call's memory cap. */
function prepareFault(cap: number, err: unknown): ExecuteFault {
  return engineFault('S-TOOL-INSTANTIATE', `The module cannot run under a memory cap of ${cap} pages: ${err instanceof Error ? err.message : String(err)}`, { max_memory_pages: cap });
}

function engineFault(code: ExecuteFault['code'], message: string, details: Record<string, unknown>): ExecuteFault {
  return { kind: 'fault', code, message, details, fuelUsed: 0, memoryPages: 0, recycled: false };
}
