// Runs in the store: the status machine with its allowed transitions, one transaction per state
// change that belongs together (record, params, policy, links, events, artifacts), events, and
// runs a dead process left `running`, settled as `interrupted` by whichever reader finds them.
import {
  type CallMetrics,
  HelixError,
  RUN_TRANSITIONS,
  type RunEvent,
  type RunLink,
  type RunRecord,
  RunRecordSchema,
  type RunResult,
  type RunStatus,
} from '../../../abi/index.js';
import { appendAudit } from '../../3-store/audit.js';
import { bindIdempotencyKey, keepRunDocuments } from '../../3-store/documents.js';
import type { Store } from '../../3-store/open-store.js';
import { currentOwner, isOtherLiveOwner, type Owner } from '../../3-store/owner.js';
import { groupedTransaction } from '../../3-store/commit-group.js';
import {
  appendRunEvent,
  putActiveRun,
  putRun,
  readActiveRun,
  readActiveRuns,
  readAllRuns,
  readRun,
  readRunEvents,
  removeActiveRun,
} from '../../3-store/runs.js';

/** Reads a run as stored, checked against its schema; undefined when absent. */
export function getRun(store: Store, runId: string): RunRecord | undefined {
  return readRun(store, runId);
}

/**
 * Reads a run for showing it: a run whose owning process is gone is first recorded as
 * `interrupted` (ABI-STORE-020), so every reader sees the same status. Undefined when absent.
 */
export function observeRun(store: Store, runId: string): RunRecord | undefined {
  const run = getRun(store, runId);
  return run !== undefined && isDead(run) ? (settleDeadRuns(store, [runId], Date.now(), 'read').get(runId) ?? getRun(store, runId)) : run;
}

/** Reads a run for showing it (see observeRun) or throws P-PRECOND-RUN-NOT-FOUND. */
export function requireRun(store: Store, runId: string): RunRecord {
  const run = observeRun(store, runId);
  if (run === undefined)
    throw new HelixError('P-PRECOND-RUN-NOT-FOUND', {
      message: `No run ${runId} is in the store ${store.home}.`,
      details: { run_id: runId },
    });
  return run;
}

/** Refuses a transition the status machine does not allow (a host bug, never a user error). */
export function checkTransition(from: RunStatus | undefined, to: RunStatus): void {
  const allowed = from === undefined ? ['queued', 'running', 'blocked'] : RUN_TRANSITIONS[from];
  if (!allowed.includes(to)) throw new Error(`run status cannot go from ${from ?? '(new)'} to ${to}`);
}

/** A run's events in order. */
export function runEvents(store: Store, runId: string): RunEvent[] {
  return readRunEvents(store, runId);
}

/** What starting (or refusing) a run records. */
export interface RunStart {
  readonly run_id: string;
  readonly tool_id: string;
  readonly tool_version: string;
  readonly contract_version: string;
  readonly module_digest: string | null;
  readonly policy_hash: string;
  readonly canonical_policy: string;
  readonly params_hash: string;
  readonly canonical_params: string;
  readonly inputs: readonly RunLink[];
  readonly idempotency_key: string | null;
  readonly call_id: string;
}

function baseRecord(start: RunStart, existing: RunRecord | undefined, now: number): RunRecord {
  return {
    run_id: start.run_id,
    tool_id: start.tool_id,
    tool_version: start.tool_version,
    contract_version: start.contract_version,
    module_digest: start.module_digest,
    policy_hash: start.policy_hash,
    params_hash: start.params_hash,
    status: existing?.status ?? 'queued',
    attempts: existing?.attempts ?? 0,
    created_at: existing?.created_at ?? now,
    started_at: existing?.started_at ?? null,
    finished_at: existing?.finished_at ?? null,
    owner: null,
    metrics: existing?.metrics ?? null,
    result: existing?.result ?? null,
    inputs: [...start.inputs],
    outputs: existing?.outputs ?? [],
    log_artifact_id: existing?.log_artifact_id ?? null,
    idempotency_key: start.idempotency_key ?? existing?.idempotency_key ?? null,
    last_call_id: start.call_id,
    input_sha256: existing?.input_sha256 ?? null,
    output_sha256: existing?.output_sha256 ?? null,
    journal: existing?.journal ?? { entries: 0, head: null },
  };
}

function putShared(store: Store, start: RunStart): void {
  keepRunDocuments(store, start);
  if (start.idempotency_key !== null) bindIdempotencyKey(store, start.idempotency_key, start.run_id);
}

/** How long a run executes before its start is committed on its own (ABI-STORE-034). */
export const BEGIN_AFTER_MS = 200;

/** One execution of a run by this process: when it began, and whether its start is committed yet. */
export interface RunAttempt {
  readonly startedAt: number;
  /** Set by beginRun when it writes the start (a run still executing after BEGIN_AFTER_MS). */
  durable: boolean;
}

/** How a run ended, applied inside its finishing transaction; `abandon` gives up what it holds when the run is not recorded. */
export type RunFinisher = ((record: RunRecord) => RunFinish) & { readonly abandon?: () => void };

/** The `started` event of the next attempt at a run. */
export function startedEvent(start: RunStart, existing: RunRecord | undefined, at: number): RunEvent {
  return { at, kind: 'started', detail: { attempt: (existing?.attempts ?? 0) + 1, call_id: start.call_id, pid: currentOwner().pid } };
}

/** Whether a stored run is being executed by another live process (a caller joins it). */
export function isRunningElsewhere(run: RunRecord | undefined): boolean {
  return run?.status === 'running' && run.owner !== null && isOtherLiveOwner(run.owner);
}

/**
 * Writes the start of a new attempt: the record `running` under `owner`, params, policy, input
 * links and its `started` event; call inside a transaction. A run left running by a dead owner is
 * first recorded interrupted; one a live process is executing too (it began after this attempt,
 * which had not committed its start, ABI-STORE-034) is taken over, since this attempt ends first.
 */
function writeAttempt(store: Store, start: RunStart, existing: RunRecord | undefined, at: number, owner: Owner): RunRecord {
  let from = existing?.status;
  if (existing?.status === 'running') {
    if (!isRunningElsewhere(existing)) appendRunEvent(store, start.run_id, { at, kind: 'interrupted', detail: { owner: existing.owner } });
    from = 'interrupted';
  }
  checkTransition(from, 'running');
  const record = baseRecord(start, existing, at);
  const next: RunRecord = {
    ...record,
    status: 'running',
    attempts: record.attempts + 1,
    started_at: at,
    finished_at: null,
    owner: { ...owner },
  };
  putShared(store, start);
  putRun(store, next);
  appendRunEvent(store, start.run_id, startedEvent(start, existing, at));
  return next;
}

/**
 * Commits the start of a run still executing after BEGIN_AFTER_MS (ABI-STORE-034): `running`
 * under this process, in the index of running runs, so other processes join it and a crash
 * leaves it to be recorded `interrupted`; `attempt.durable` is set with it. Writes nothing when
 * another process has meanwhile begun or finished the run. Shares its commit (ABI-STORE-035).
 */
export function beginRun(store: Store, start: RunStart, attempt: RunAttempt): Promise<void> {
  const owner: Owner = currentOwner();
  return groupedTransaction(store, () => {
    const existing = getRun(store, start.run_id);
    if (existing?.status === 'succeeded' || isRunningElsewhere(existing)) return;
    writeAttempt(store, start, existing, attempt.startedAt, owner);
    putActiveRun(store, start.run_id, owner);
    attempt.durable = true;
  });
}

/** How a run ended. */
export interface RunFinish {
  readonly status: 'succeeded' | 'failed';
  readonly result: RunResult;
  readonly metrics: CallMetrics;
  readonly outputs: readonly RunLink[];
  readonly log_artifact_id: string | null;
  readonly input_sha256?: string | null;
  readonly output_sha256?: string | null;
  readonly journal?: { entries: number; head: string | null };
}

/** Writes the end of a running run: record, links, event, out of the running index; call inside a transaction. */
function writeFinish(store: Store, current: RunRecord, finish: RunFinisher, now: number): RunRecord {
  const f = finish(current);
  checkTransition(current.status, f.status);
  const next: RunRecord = {
    ...current,
    status: f.status,
    finished_at: now,
    owner: null,
    metrics: f.metrics,
    result: f.result,
    outputs: [...f.outputs],
    log_artifact_id: f.log_artifact_id,
    input_sha256: f.input_sha256 ?? null,
    output_sha256: f.output_sha256 ?? null,
    journal: f.journal ?? { entries: 0, head: null },
  };
  putRun(store, next);
  removeActiveRun(store, current.run_id);
  appendRunEvent(store, current.run_id, {
    at: now,
    kind: 'finished',
    detail: { status: f.status, code: f.result.error?.code ?? null, duration_ms: f.metrics.duration_ms },
  });
  return next;
}

/**
 * Ends an attempt in one transaction, shared with the other runs ending now (ABI-STORE-035):
 * the record, links, events, and through `finish` the output and log artifacts, become visible
 * together. An attempt whose start was not committed (ABI-STORE-034) is begun and ended in this
 * one transaction. When another process has meanwhile recorded the run as succeeded, that
 * record stands: this attempt is abandoned and the caller gets the stored run (`joined`).
 */
export function endRun(
  store: Store,
  start: RunStart,
  attempt: RunAttempt,
  finish: RunFinisher,
  now: number,
  expected: () => number = () => 0,
): Promise<{ record: RunRecord; joined: boolean }> {
  return groupedTransaction(
    store,
    () => {
      const current = getRun(store, start.run_id);
      // Running under this process: its start was committed (one attempt per run id runs in a process).
      if (current?.status === 'running' && current.owner !== null && isSelf(current.owner))
        return { record: writeFinish(store, current, finish, now), joined: false };
      if (current?.status === 'succeeded') {
        finish.abandon?.();
        return { record: current, joined: true };
      }
      const running = writeAttempt(store, start, current, attempt.startedAt, currentOwner());
      return { record: writeFinish(store, running, finish, now), joined: false };
    },
    expected,
  );
}

/** Records a run the policy refused (status `blocked`), with the refusal as its result. */
export async function blockRun(store: Store, start: RunStart, result: RunResult, now: number): Promise<RunRecord> {
  return store.transaction(() => {
    const existing = getRun(store, start.run_id);
    checkTransition(existing?.status, 'blocked');
    const next: RunRecord = { ...baseRecord(start, existing, now), status: 'blocked', finished_at: now, result };
    putShared(store, start);
    putRun(store, next);
    appendRunEvent(store, start.run_id, { at: now, kind: 'blocked', detail: { code: result.error?.code ?? null } });
    appendAudit(store, now, { kind: 'run.blocked', run_id: start.run_id, tool_id: start.tool_id, code: result.error?.code ?? null });
    return next;
  });
}

/** Whether `owner` is a process that is gone (never this one). */
function isGone(owner: Owner): boolean {
  return !isOtherLiveOwner(owner) && !isSelf(owner);
}

/** Whether a run is marked running by a process that is gone. */
function isDead(run: RunRecord): boolean {
  return run.status === 'running' && run.owner !== null && isGone(run.owner);
}

/**
 * Records as `interrupted` those of `runIds` still marked running by an owner that is gone, in
 * one transaction that reads each run again: a run another process restarted meanwhile has a live
 * owner and is left alone. Returns the runs it changed, by id.
 */
function settleDeadRuns(store: Store, runIds: readonly string[], now: number, foundBy: 'startup' | 'read'): Map<string, RunRecord> {
  return store.transactionSync(() => {
    const done = new Map<string, RunRecord>();
    for (const runId of runIds) {
      // A restart replaces the index entry with its own, live owner; a gone one is stale.
      const active = readActiveRun(store, runId);
      if (active !== undefined && isGone(active)) removeActiveRun(store, runId);
      const run = getRun(store, runId);
      if (run === undefined || !isDead(run)) continue;
      checkTransition(run.status, 'interrupted');
      const next: RunRecord = RunRecordSchema.parse({ ...run, status: 'interrupted', owner: null, finished_at: now });
      putRun(store, next);
      appendRunEvent(store, runId, { at: now, kind: 'interrupted', detail: { owner: run.owner, found_by: foundBy } });
      done.set(runId, next);
    }
    return done;
  });
}

/** Marks every run left `running` by a process that is gone as `interrupted`. Returns their ids. */
export async function recoverInterrupted(store: Store, now: number): Promise<string[]> {
  const stale = readActiveRuns(store)
    .filter(({ owner }) => isGone(owner))
    .map(({ runId }) => runId);
  if (stale.length === 0) return [];
  return [...settleDeadRuns(store, stale, now, 'startup').keys()];
}

function isSelf(owner: Owner): boolean {
  const me = currentOwner();
  return owner.pid === me.pid && owner.hostname === me.hostname && owner.started_at === me.started_at;
}

/** Runs, newest first, optionally filtered; runs of dead processes are settled first (see observeRun). */
export function listRuns(store: Store, filter: { status?: RunStatus; toolId?: string; limit?: number } = {}): RunRecord[] {
  const all = readAllRuns(store);
  const dead = all.filter(isDead).map((r) => r.run_id);
  const settled = dead.length === 0 ? new Map<string, RunRecord>() : settleDeadRuns(store, dead, Date.now(), 'read');
  const runs: RunRecord[] = [];
  for (const stored of all) {
    const r = settled.get(stored.run_id) ?? stored;
    if (filter.status !== undefined && r.status !== filter.status) continue;
    if (filter.toolId !== undefined && r.tool_id !== filter.toolId) continue;
    runs.push(r);
  }
  runs.sort((a, b) => (b.started_at ?? b.created_at) - (a.started_at ?? a.created_at) || a.run_id.localeCompare(b.run_id));
  return filter.limit === undefined ? runs : runs.slice(0, filter.limit);
}
