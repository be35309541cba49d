// Runs in the store: the status machine with its allowed transitions, one transaction per state
// change that belongs together (record, params, policy, links, events, artifacts), events, and
// runs a dead process left `running`, settled as `interrupted` by whichever reader finds them.
import { type CallMetrics, HelixError, RUN_TRANSITIONS, type RunEvent, type RunLink, type RunRecord, RunRecordSchema, type RunResult, type RunStatus } from '../../abi/index.js';
import { appendAudit } from '../store/audit.js';
import { bindIdempotencyKey, keepRunDocuments } from '../store/documents.js';
import type { Store } from '../store/open-store.js';
import { currentOwner, isOtherLiveOwner, type Owner } from '../store/owner.js';
import { appendRunEvent, putActiveRun, putRun, readActiveRun, readActiveRuns, readAllRuns, readRun, readRunEvents, removeActiveRun } from '../store/runs.js';

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
  if (run === undefined) throw new HelixError('P-PRECOND-RUN-NOT-FOUND', { message: `No run ${runId} is in the store ${store.home}.`, details: { run_id: runId } });
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

/**
 * Marks a run `running` (creating it, or re-running a failed, blocked or interrupted one) in one
 * transaction with its params, policy, input links, owner and a `started` event. Returns the
 * record, or the existing record unchanged when another process got there first.
 */
export async function beginRun(store: Store, start: RunStart, now: number): Promise<{ started: boolean; record: RunRecord }> {
  const owner: Owner = currentOwner();
  return store.transaction(() => {
    const existing = getRun(store, start.run_id);
    if (existing !== undefined && (existing.status === 'succeeded' || (existing.status === 'running' && existing.owner !== null && isOtherLiveOwner(existing.owner)))) {
      return { started: false, record: existing };
    }
    // A run still marked running by a dead owner was interrupted; record that before re-running.
    if (existing?.status === 'running') {
      appendRunEvent(store, start.run_id, { at: now, kind: 'interrupted', detail: { owner: existing.owner } });
      existing.status = 'interrupted';
    }
    const record = baseRecord(start, existing, now);
    checkTransition(existing?.status, 'running');
    const next: RunRecord = { ...record, status: 'running', attempts: record.attempts + 1, started_at: now, finished_at: null, owner: { ...owner } };
    putShared(store, start);
    putRun(store, next);
    putActiveRun(store, start.run_id, owner);
    appendRunEvent(store, start.run_id, { at: now, kind: 'started', detail: { attempt: next.attempts, call_id: start.call_id, pid: owner.pid } });
    return { started: true, record: next };
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

/**
 * Ends a run: record, links, event and the removal from the active set in one transaction.
 * `commitArtifacts` runs inside the same transaction, so output and log artifacts become
 * visible exactly when the run does.
 */
export async function finishRun(store: Store, runId: string, finish: (record: RunRecord) => RunFinish, now: number): Promise<RunRecord> {
  return store.transaction(() => {
    const current = getRun(store, runId);
    if (current === undefined) throw new HelixError('P-PRECOND-RUN-NOT-FOUND', { message: `Run ${runId} vanished from the store ${store.home} before it finished.`, details: { run_id: runId } });
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
    removeActiveRun(store, runId);
    appendRunEvent(store, runId, { at: now, kind: 'finished', detail: { status: f.status, code: f.result.error?.code ?? null, duration_ms: f.metrics.duration_ms } });
    return next;
  });
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
  const stale = readActiveRuns(store).filter(({ owner }) => isGone(owner)).map(({ runId }) => runId);
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
