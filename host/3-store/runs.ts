// Run records in the store: the run itself, the index of runs now `running` with their owners,
// and each run's events. Typed operations over those three databases; the status machine and
// which writes belong together are host/4-calls/runs/run-store.ts, which calls these inside one transaction.
import { type RunEvent, RunEventSchema, type RunRecord, RunRecordSchema } from '../../abi/index.js';
import { storeHandle, type Store } from './handle.js';
import type { Owner } from './owner.js';
import { readRange, readRecord } from './records.js';

/** Reads a run as stored, checked against its schema; undefined when absent. */
export function readRun(store: Store, runId: string): RunRecord | undefined {
  return readRecord(store, 'runs', runId);
}

/** Every stored run, checked, in run id order. */
export function readAllRuns(store: Store): RunRecord[] {
  return [...readRange(store, 'runs')].map((e) => e.value);
}

/**
 * Writes a run record, parsed first so a bad one throws before anything is written; call inside a
 * transaction. Returns the record as written.
 */
export function putRun(store: Store, run: RunRecord): RunRecord {
  const checked = RunRecordSchema.parse(run);
  storeHandle(store).db.runs.put(run.run_id, checked);
  return checked;
}

/** Enters a run in the index of running runs, with its owner; call inside a transaction. */
export function putActiveRun(store: Store, runId: string, owner: Owner): void {
  storeHandle(store).db.activeRuns.put(runId, { ...owner });
}

/** Takes a run out of the index of running runs; call inside a transaction. */
export function removeActiveRun(store: Store, runId: string): void {
  storeHandle(store).db.activeRuns.remove(runId);
}

/** The owner the index of running runs holds for a run, checked; undefined when it holds none. */
export function readActiveRun(store: Store, runId: string): Owner | undefined {
  return readRecord(store, 'activeRuns', runId);
}

/** The index of running runs: each run id with its owner, checked, in run id order. */
export function readActiveRuns(store: Store): Array<{ runId: string; owner: Owner }> {
  return [...readRange(store, 'activeRuns')].map(({ key, value }) => ({ runId: key, owner: value }));
}

/** Appends an event to a run's log, after its last one; call inside a transaction. */
export function appendRunEvent(store: Store, runId: string, event: RunEvent): void {
  const { runEvents } = storeHandle(store).db;
  let seq = 0;
  for (const key of runEvents.getKeys({ start: [runId, Number.MAX_SAFE_INTEGER], end: [runId, -1], reverse: true, limit: 1 }))
    seq = key[1] + 1;
  runEvents.put([runId, seq], RunEventSchema.parse(event));
}

/** A run's events in order, checked. */
export function readRunEvents(store: Store, runId: string): RunEvent[] {
  return [...readRange(store, 'runEvents', { start: [runId, 0], end: [runId, Number.MAX_SAFE_INTEGER] })].map((e) => e.value);
}
