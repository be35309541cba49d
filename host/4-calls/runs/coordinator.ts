// Replay and idempotency (README "Runs, artifacts and provenance"): a call whose run already succeeded
// returns the stored result without executing; a call whose run is in flight, here or in
// another process sharing the store, joins it, so both callers get one outcome. A run commits
// once, when it ends, unless it is still executing after BEGIN_AFTER_MS (ABI-STORE-034).
import type { RunEvent, RunRecord } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';
import { bindIdempotencyKey, idempotencyRun } from '../../3-store/documents.js';
import type { Store } from '../../3-store/open-store.js';
import { isOtherLiveOwner } from '../../3-store/owner.js';
import {
  beginRun,
  BEGIN_AFTER_MS,
  blockRun,
  endRun,
  getRun,
  isRunningElsewhere,
  startedEvent,
  type RunAttempt,
  type RunFinisher,
  type RunStart,
} from './run-store.js';

/** How a coordinated run ended for this caller. */
export interface RunOutcome {
  readonly record: RunRecord;
  /** The stored result of an earlier success was returned; nothing ran. */
  readonly replayed: boolean;
  /** This caller joined a run another caller had started. */
  readonly joined: boolean;
}

/**
 * Executes a run: `unstoredEvents` gives, at the moment it is called, the events of this attempt
 * not yet in the store (its `started` event until the start is committed), for the run's log.
 */
export type ExecuteRun = (unstoredEvents: () => RunEvent[]) => Promise<RunFinisher>;

/** How often a caller waiting on another process's run looks at the store. */
const POLL_MS = 25;

/** Coordinates runs of one store within this process. */
export class RunCoordinator {
  readonly #inflight = new Map<string, Promise<RunRecord>>();
  /** Runs of this process executing now: a finishing transaction waits briefly to share their commit. */
  #executing = 0;

  /**
   * `beginAfterMs`: how long a run executes before its start is committed on its own
   * (default BEGIN_AFTER_MS, ABI-STORE-034).
   */
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly beginAfterMs: number = BEGIN_AFTER_MS,
  ) {}

  /**
   * Runs `execute` under the identity in `start`, unless the run already succeeded (replay)
   * or is in flight (join). `execute` returns how the run ended, applied inside the finishing
   * transaction (for output and log artifacts).
   */
  async run(start: RunStart, deadlineMs: number, execute: ExecuteRun): Promise<RunOutcome> {
    this.#checkIdempotency(start);
    const existing = getRun(this.store, start.run_id);
    if (existing?.status === 'succeeded') {
      await this.#bindKey(start);
      return { record: existing, replayed: true, joined: false };
    }
    const inflight = this.#inflight.get(start.run_id);
    if (inflight !== undefined) {
      const record = await inflight;
      await this.#bindKey(start);
      return { record, replayed: false, joined: true };
    }

    const promise = this.#start(start, existing, deadlineMs, execute);
    this.#inflight.set(
      start.run_id,
      promise.then((o) => o.record),
    );
    try {
      return await promise;
    } finally {
      this.#inflight.delete(start.run_id);
    }
  }

  /** Records a call the policy refused as a `blocked` run. */
  async block(start: RunStart, result: RunRecord['result'] & object): Promise<RunRecord> {
    return blockRun(this.store, start, result, this.now());
  }

  async #start(start: RunStart, existing: RunRecord | undefined, deadlineMs: number, execute: ExecuteRun): Promise<RunOutcome> {
    if (isRunningElsewhere(existing)) return { record: await this.#waitForOther(start.run_id, deadlineMs), replayed: false, joined: true };
    const attempt: RunAttempt = { startedAt: this.now(), durable: false };
    const started = startedEvent(start, existing, attempt.startedAt);
    // A run still executing after beginAfterMs commits its start, so other processes see it
    // running and join it, and a crash leaves it to be recorded interrupted (ABI-STORE-034).
    const timer = setTimeout(() => {
      // Not committed, it stays to the finishing transaction, which records the start with the end.
      beginRun(this.store, start, attempt).catch(() => undefined);
    }, this.beginAfterMs);
    const expected = (): number => this.#executing;
    let finish: RunFinisher;
    this.#executing += 1;
    try {
      finish = await execute(() => (attempt.durable ? [] : [started]));
    } catch (err) {
      this.#executing -= 1;
      clearTimeout(timer);
      // A host bug while running: record the run as failed rather than leave it `running`.
      const message = err instanceof Error ? err.message : String(err);
      finish = () => ({
        status: 'failed',
        result: { status: 'terminal_error', error: { code: 'S-TOOL-WORKER-LOST', message, details: {} }, warnings: [] },
        metrics: { duration_ms: 0, fuel_used: 0, memory_peak_pages: 0 },
        outputs: [],
        log_artifact_id: null,
      });
      await endRun(this.store, start, attempt, finish, this.now(), expected);
      throw err;
    }
    this.#executing -= 1;
    clearTimeout(timer);
    const ended = await endRun(this.store, start, attempt, finish, this.now(), expected);
    return { record: ended.record, replayed: false, joined: ended.joined };
  }

  /** Waits for a run another live process is executing, until it ends or the deadline. */
  async #waitForOther(runId: string, deadlineMs: number): Promise<RunRecord> {
    for (;;) {
      const run = getRun(this.store, runId);
      if (run === undefined) throw new Error(`run ${runId} vanished while being waited for`);
      if (run.status !== 'running' || run.owner === null || !isOtherLiveOwner(run.owner)) return run;
      if (this.now() >= deadlineMs) {
        throw new HelixError('R-TIMEOUT-001', {
          message: `Run ${runId} is still running in process ${run.owner.pid}; the deadline passed while waiting for it.`,
          details: { run_id: runId, phase: 'join', owner_pid: run.owner.pid },
        });
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * Binds a key first presented on a replayed or joined call to the run it was answered with, so
   * the key cannot later be used for a different request (an executed run binds its key when it
   * is recorded). Nothing is written when the key is unset or already bound to this run.
   */
  async #bindKey(start: RunStart): Promise<void> {
    const key = start.idempotency_key;
    if (key === null || idempotencyRun(this.store, key) === start.run_id) return;
    await this.store.transaction(() => {
      this.#checkIdempotency(start);
      if (idempotencyRun(this.store, key) === undefined) bindIdempotencyKey(this.store, key, start.run_id);
    });
  }

  #checkIdempotency(start: RunStart): void {
    if (start.idempotency_key === null) return;
    const bound = idempotencyRun(this.store, start.idempotency_key);
    if (bound !== undefined && bound !== start.run_id) {
      throw new HelixError('I-REQ-IDEMPOTENCY-CONFLICT', {
        message: `idempotency_key was used for run ${bound}, a different request.`,
        details: { idempotency_key: start.idempotency_key, bound_run_id: bound, run_id: start.run_id },
      });
    }
  }
}
