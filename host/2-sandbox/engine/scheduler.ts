// The one scheduler behind every runner: a bounded FIFO queue of calls, at most `maxWorkers`
// workers, the deadline and the caller's cancel (a running call's worker is stopped, and a new
// worker takes its place), and the rule that a call the host has ended keeps that outcome whatever
// happens to its worker afterwards (ABI-FINAL-001). What a call needs is prepared only once it has
// a worker, so a call waiting in the queue holds nothing (ABI-ALLOC-009). The deadline pauses
// while a new worker's thread starts: that is the host's own cost, not the call's (ABI-DEADLINE-001).
import { performance } from 'node:perf_hooks';
import type { BrokerAnswer, BulkPart, ExecuteResult } from './protocol.js';
import { fault, type CallDecision, type ExecuteRequest, type Runner, type RunnerCall, type RunnerWorker } from './runner.js';
import type { VariantLease } from './variant-cache.js';

/** How many workers and waiting calls a scheduler allows. */
export interface SchedulerConfig {
  readonly maxWorkers: number;
  /** Workers started at once and kept; 0 starts each when a call first needs it. */
  readonly minWorkers: number;
  /** Most calls waiting for a worker before new ones get R-CAP-QUEUE-FULL. */
  readonly maxQueue: number;
}

/** Runs calls on one runner's workers. */
export interface Scheduler<W> {
  /** Runs one call; resolves with the guest's result or a classified fault, never rejects. */
  execute(request: ExecuteRequest): Promise<ExecuteResult>;
  /** Lends the idle workers to `use` (no call is sent to them meanwhile), for diagnostics. */
  withIdleWorkers<T>(use: (workers: readonly W[]) => Promise<T>): Promise<T>;
  /** Workers replaced so far because they were unfit (not those a deadline stopped). */
  readonly retired: number;
  /** Settles once no call is running on a worker. */
  settled(): Promise<void>;
  /** Ends queued calls, then closes the runner. */
  close(): Promise<void>;
}

/** Where a call was when it was stopped. */
type Phase = 'queue' | 'prepare' | 'run';

/** A call waiting for, being prepared on, or running on a worker. */
interface Job<W> {
  readonly request: ExecuteRequest;
  readonly resolve: (result: ExecuteResult) => void;
  timer?: NodeJS.Timeout;
  /** What was left of the deadline, and when, as its timer was last armed. */
  left: number;
  armedAt: number;
  /** Set while the call waits for its new worker's thread to start; the deadline is paused. */
  starting?: W;
  /** Set while the call has a worker but waits for what it needs to be prepared. */
  preparing?: W;
  /** Set once the call runs on its worker. */
  worker?: W;
  done: boolean;
  /** The first host decision that ended the call: its outcome from then on. */
  decision?: CallDecision;
}

/** Creates a scheduler over `runner`; `minWorkers` workers start at once. */
export function createScheduler<V, W extends RunnerWorker<V>>(runner: Runner<V, W>, config: SchedulerConfig): Scheduler<W> {
  const workers = new Set<W>();
  const idle: W[] = [];
  const queue: Job<W>[] = [];
  const runs = new Set<Promise<unknown>>();
  let closed = false;
  let running = 0;
  let retired = 0;

  const spawn = (): W => {
    const worker: W = runner.spawn({
      ended: () => {
        workers.delete(worker);
        const i = idle.indexOf(worker);
        if (i !== -1) idle.splice(i, 1);
        // A worker gone frees a place: a queued call may start on a new one.
        if (!closed && queue.length > 0) dispatch(queue.shift()!);
      },
      unfit: () => {
        if (idle.includes(worker)) retire(worker);
      },
    });
    workers.add(worker);
    return worker;
  };
  for (let i = 0; i < config.minWorkers; i++) idle.push(spawn());

  const finish = (job: Job<W>, result: ExecuteResult): void => {
    if (job.done) return;
    job.done = true;
    clearTimeout(job.timer);
    job.resolve(decided(job, result));
  };
  const arm = (job: Job<W>, ms: number): void => {
    job.left = ms;
    job.armedAt = performance.now();
    job.timer = setTimeout(() => onDeadline(job), Math.max(0, ms));
  };
  /** Starts `job` on `worker` once the worker's thread is up, with the deadline paused until then. */
  const startWhenUp = (job: Job<W>, worker: W): void => {
    const up = worker.up;
    if (up === undefined) {
      start(job, worker);
      return;
    }
    clearTimeout(job.timer);
    job.left -= performance.now() - job.armedAt;
    job.starting = worker;
    void up.then(() => {
      job.starting = undefined;
      if (!job.done && closed) finish(job, closedFault('queue'));
      if (job.done) return release(worker);
      arm(job, job.left);
      start(job, worker);
    });
  };
  const release = (worker: W): void => {
    if (worker.state === 'dead' || closed) return;
    if (worker.state === 'unfit') {
      retire(worker);
      return;
    }
    const next = queue.shift();
    if (next !== undefined) start(next, worker);
    else idle.push(worker);
  };
  /** Replaces an idle worker: the next call that needs one gets a new worker, as after a deadline. */
  const retire = (worker: W): void => {
    retired += 1;
    const i = idle.indexOf(worker);
    if (i !== -1) idle.splice(i, 1);
    worker.retire();
  };
  const start = (job: Job<W>, worker: W): void => {
    const { module, limits } = job.request;
    let lease: VariantLease<V>;
    try {
      lease = runner.prepare(module, limits);
    } catch (err) {
      finish(job, prepareFault(limits.maxMemoryPages, err));
      release(worker);
      return;
    }
    if (lease.ready !== undefined) {
      runOn(job, worker, lease.ready, lease);
      return;
    }
    job.preparing = worker;
    lease.value.then(
      (variant) => {
        job.preparing = undefined;
        if (!job.done && !closed) return runOn(job, worker, variant, lease);
        // The call ended (deadline, cancel) or the scheduler closed while it was prepared.
        finish(job, closedFault('prepare'));
        lease.release();
        release(worker);
      },
      (err: unknown) => {
        job.preparing = undefined;
        lease.release();
        finish(job, prepareFault(limits.maxMemoryPages, err));
        release(worker);
      },
    );
  };
  const runOn = (job: Job<W>, worker: W, variant: V, lease: VariantLease<V>): void => {
    job.worker = worker;
    running += 1;
    const call: RunnerCall<V> = {
      request: job.request,
      variant,
      broker: (request, bulk) => ask(job, request, bulk),
      decide: (decision) => {
        job.decision ??= decision;
      },
      // Only a lone call may spin: with others in flight the main thread has dispatching to do.
      alone: running === 1 && queue.length === 0,
    };
    const run = worker.run(call).then((result) => {
      running -= 1;
      // Released before the worker takes the next call, so an eviction this causes reaches the
      // worker ahead of that call (ABI-ALLOC-010).
      lease.release();
      runs.delete(run);
      finish(job, result);
      release(worker);
    });
    runs.add(run);
  };
  const dispatch = (job: Job<W>): void => {
    const worker = idle.pop() ?? (workers.size < config.maxWorkers ? spawn() : undefined);
    if (worker !== undefined) {
      startWhenUp(job, worker);
    } else if (queue.length >= config.maxQueue) {
      finish(
        job,
        fault('R-CAP-QUEUE-FULL', `${config.maxQueue} calls are already waiting.`, { retry_after_ms: 100, max_queue: config.maxQueue }),
      );
    } else {
      queue.push(job);
    }
  };
  /** Stops a job wherever it is: waiting (dequeued), preparing (its worker freed once ready) or running (its worker stopped). */
  const stop = (job: Job<W>): Phase => {
    if (job.worker !== undefined) {
      job.worker.stop();
      return 'run';
    }
    if (job.preparing !== undefined) return 'prepare';
    // Its worker is released when its thread is up.
    if (job.starting !== undefined) return 'queue';
    const i = queue.indexOf(job);
    if (i !== -1) queue.splice(i, 1);
    return 'queue';
  };
  const onDeadline = (job: Job<W>): void => {
    if (job.done) return;
    const timeoutMs = job.request.limits.timeoutMs;
    const phase = stop(job);
    const where = {
      queue: ' (it was still waiting for a worker)',
      prepare: ' (its module was still being compiled for its memory cap)',
      run: '; its worker was stopped',
    }[phase];
    finish(job, fault('R-TIMEOUT-001', `The call did not finish within ${timeoutMs} ms${where}.`, { timeout_ms: timeoutMs, phase }));
  };
  const onCancel = (job: Job<W>): void => {
    if (job.done) return;
    const phase = stop(job);
    finish(
      job,
      fault('R-TIMEOUT-CANCELLED', `The call was cancelled by its caller${phase === 'run' ? '; its worker was stopped' : ''}.`, { phase }),
    );
  };
  const onClose = (job: Job<W>): void => {
    if (job.done) return;
    const phase = stop(job);
    finish(
      job,
      phase === 'run'
        ? fault('R-TIMEOUT-CANCELLED', 'The call was cancelled: the engine closed; its worker was stopped.', {
            phase,
            reason: 'engine_closed',
          })
        : closedFault(phase),
    );
  };
  const inFlight = new Set<Job<W>>();
  const trackInFlight = runner.endsCallsOnClose;

  return {
    execute(request) {
      if (closed) return Promise.resolve(fault('S-TOOL-WORKER-LOST', 'The engine is closed.', {}));
      return new Promise<ExecuteResult>((resolve) => {
        // Calls in flight are tracked only where close() must end them.
        const job: Job<W> = trackInFlight
          ? {
              request,
              resolve: (result) => {
                inFlight.delete(job);
                resolve(result);
              },
              done: false,
              left: 0,
              armedAt: 0,
            }
          : { request, resolve, done: false, left: 0, armedAt: 0 };
        if (trackInFlight) inFlight.add(job);
        arm(job, request.limits.timeoutMs);
        const signal = request.signal;
        if (signal !== undefined) {
          if (signal.aborted) return onCancel(job);
          signal.addEventListener('abort', () => onCancel(job), { once: true });
        }
        dispatch(job);
      });
    },
    async withIdleWorkers(use) {
      const lent = idle.splice(0);
      try {
        return await use(lent);
      } finally {
        for (const worker of lent) release(worker);
      }
    },
    get retired() {
      return retired;
    },
    async settled() {
      while (runs.size > 0) await Promise.allSettled([...runs]);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) finish(job, closedFault('queue'));
      if (runner.endsCallsOnClose) for (const job of [...inFlight]) onClose(job);
      await runner.close();
    },
  };
}

/** Asks the job's broker; notes its refusal as the call's decision, which a later deadline, cancel or lost worker cannot replace. */
async function ask<W>(job: Job<W>, request: Uint8Array, bulk: BulkPart | undefined): Promise<BrokerAnswer> {
  const answer = await (bulk === undefined ? job.request.broker(request) : job.request.broker(request, bulk));
  if (answer.kind === 'abort') job.decision ??= answer;
  return answer;
}

/** The call's outcome: the host's decision when it ended the call (a deadline, a cancel or a lost worker may come between), else `result`. */
function decided<W>(job: Job<W>, result: ExecuteResult): ExecuteResult {
  const decision = job.decision;
  if (decision === undefined || (result.kind === 'fault' && result.code === decision.code)) return result;
  return fault(decision.code, decision.message, decision.details, result.fuelUsed, result.memoryPages);
}

/** What the module cannot be prepared for: it cannot run under the call's memory cap. */
function prepareFault(cap: number, err: unknown): ExecuteResult {
  return fault(
    'S-TOOL-INSTANTIATE',
    `The module cannot run under a memory cap of ${cap} pages: ${err instanceof Error ? err.message : String(err)}`,
    { max_memory_pages: cap },
  );
}

function closedFault(phase: Phase): ExecuteResult {
  return fault('S-TOOL-WORKER-LOST', 'The engine closed before the call ran.', { phase });
}
