// What the scheduler (scheduler.ts) asks of each kind of module it runs: a runner prepares what a
// call needs (a compiled variant, an image), starts workers, and runs one call at a time on each.
// helix/v1 modules and extism/v1 plugins run on lanes (lane-runner.ts, extism.ts); nothing here
// assumes WebAssembly. Queueing, deadlines, cancellation and worker
// replacement belong to the scheduler alone.
import type { AbiId, EffectiveLimits, ErrorCode } from '../../../abi/index.js';
import type { InstrumentResult } from '../wasm/index.js';
import type { CapabilityBroker, ExecuteFault, ExecuteResult } from './protocol.js';
import type { VariantLease } from './variant-cache.js';

/** A module as the engine runs it: checked, instrumented for one memory cap, compiled. */
export interface EngineModule {
  readonly digest: string;
  /** helix/v1 runs in the workers' Sandbox, extism/v1 in their ExtismSandbox. */
  readonly abi: AbiId;
  readonly entrypoint: string;
  /** The module as built, for instrumenting variants with a smaller memory cap. */
  readonly bytes: Uint8Array;
  readonly instrumented: InstrumentResult;
  readonly compiled: WebAssembly.Module;
  /** The memory cap `instrumented` and `compiled` were made for. */
  readonly cap: number;
}

/** One call for the engine. */
export interface ExecuteRequest {
  readonly module: EngineModule;
  readonly input: Uint8Array;
  readonly limits: EffectiveLimits;
  /** Answers the guest's capability calls for this call. */
  readonly broker: CapabilityBroker;
  /** Aborting it cancels the call: dequeued if waiting, its worker stopped if running. */
  readonly signal?: AbortSignal;
}

/** A host decision that ends a call; the first one is the call's outcome (ABI-FINAL-001). */
export interface CallDecision {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

/** One call as a worker runs it, with what its runner prepared. */
export interface RunnerCall<V> {
  readonly request: ExecuteRequest;
  readonly variant: V;
  /** The request's broker; a refusal it answers is noted as the call's decision. */
  readonly broker: CapabilityBroker;
  /** Notes a decision the runner itself took (a bad pointer, a broker that failed, ...). */
  decide(decision: CallDecision): void;
  /** Whether no other call is running or waiting: a runner may then spend CPU on latency. */
  readonly alone: boolean;
}

/** What a worker tells the scheduler of its own accord. */
export interface WorkerEvents {
  /** The worker is gone (stopped, crashed or shut down): its place may go to a new one. */
  ended(): void;
  /** The worker should be replaced once it is idle (it holds too much it cannot free). */
  unfit(): void;
}

/** One worker of a runner: it runs one call at a time. */
export interface RunnerWorker<V> {
  /** `ready` for another call; `unfit` to be replaced when idle; `dead` gone or going. */
  readonly state: 'ready' | 'unfit' | 'dead';
  /**
   * Settles once the worker's thread has started (or stopped before it did); undefined when it is
   * up from the start. A call's deadline does not run while its new worker starts (ABI-DEADLINE-001).
   */
  readonly up?: Promise<void> | undefined;
  /** Runs one call; settles with its result or a classified fault, never rejects. */
  run(call: RunnerCall<V>): Promise<ExecuteResult>;
  /**
   * Stops the call running now, at once (a deadline, a cancel): the guest may be in an endless
   * loop, so the worker's thread or process goes with it; `run` then settles soon after.
   */
  stop(): void;
  /** Stops an idle worker that is to be replaced. */
  retire(): void;
}

/** One kind of module, run behind the scheduler. */
export interface Runner<V, W extends RunnerWorker<V> = RunnerWorker<V>> {
  /**
   * Whether close() ends the calls in flight (R-TIMEOUT-CANCELLED) rather than letting them
   * finish: a runner whose workers cannot finish a call once closing says true.
   */
  readonly endsCallsOnClose: boolean;
  /** What a call of `module` under `limits` needs; may throw when the module cannot run so. */
  prepare(module: EngineModule, limits: EffectiveLimits): VariantLease<V>;
  /** Starts a worker. */
  spawn(events: WorkerEvents): W;
  /** Stops every worker (those running a call finish it first unless `endsCallsOnClose`). */
  close(): Promise<void>;
}

/** A fault with its measures; engine-made faults measure nothing. */
export function fault(code: ErrorCode, message: string, details: Record<string, unknown>, fuelUsed = 0, memoryPages = 0): ExecuteFault {
  return { kind: 'fault', code, message, details, fuelUsed, memoryPages, recycled: false };
}
