// Artifact records in the store: each record by id, the time index that lists them in creation
// order (a run's log is left out of it), and the store-wide clock that keeps created_at strictly
// increasing. Reads are checked, so a damaged record is D-DATA-RECORD-INVALID wherever it is read.
import type { ArtifactRecord } from '../../abi/index.js';
import { storeHandle, type Store } from './handle.js';
import { invalidRecord, readFailure, readRange, readRecord } from './records.js';

/** The meta key of the newest created_at any artifact was given. */
const LAST_CREATED_AT = 'last_created_at';

/** Whether an artifact is the log of a run (source role `log`, reserved for the host). */
export function isRunLog(record: ArtifactRecord): boolean {
  return record.source.kind === 'run' && record.source.role === 'log';
}

/** The artifact record under `id`, checked; undefined when there is none. */
export function readArtifactRecord(store: Store, id: string): ArtifactRecord | undefined {
  return readRecord(store, 'artifacts', id);
}

/** The newest created_at the store has handed out, or 0. Read inside the transaction that hands out the next. */
export function lastArtifactCreatedAt(store: Store): number {
  const last = storeHandle(store).db.meta.get(LAST_CREATED_AT);
  return typeof last === 'number' ? last : 0;
}

/**
 * Writes an artifact record, its time index entry (not for a run's log: it is reached through its
 * run) and the store clock; call inside the transaction that commits its blob.
 */
export function putArtifactRecord(store: Store, record: ArtifactRecord): void {
  const { db } = storeHandle(store);
  db.artifacts.putSync(record.id, record);
  // Indexing a run's log would move the snapshot boundary of artifact_list with every run, so no
  // listing could ever replay.
  if (!isRunLog(record)) db.artifactsByTime.putSync([record.created_at, record.id], record.id);
  db.meta.putSync(LAST_CREATED_AT, record.created_at);
}

/** Where a listing in creation order starts and ends. */
export interface ArtifactTimeRange {
  /** Start after this artifact (its own entry is skipped). */
  readonly after?: { readonly created_at: number; readonly id: string };
  /** Only artifacts created at or before this time. */
  readonly asOfCreatedAt?: number;
  /** At most this many records. */
  readonly limit?: number;
}

/** Listed artifacts in creation order, checked; an index entry whose artifact is missing is D-DATA-RECORD-INVALID. */
export function readArtifactsByTime(store: Store, range: ArtifactTimeRange = {}): ArtifactRecord[] {
  const { after, asOfCreatedAt: asOf, limit } = range;
  // Keys are [created_at, id]; [asOf + 1] sorts after every [asOf, id], so the exclusive end
  // keeps exactly created_at <= asOf.
  const entries = readRange(store, 'artifactsByTime', {
    ...(after === undefined ? {} : { start: [after.created_at, after.id] as [number, string] }),
    ...(asOf === undefined ? {} : { end: [asOf + 1] as unknown as [number, string] }),
  });
  const records: ArtifactRecord[] = [];
  for (const { key, value } of entries) {
    if (after !== undefined && key[1] === after.id) continue;
    if (limit !== undefined && records.length >= limit) break;
    const record = readArtifactRecord(store, value);
    if (record === undefined) throw invalidRecord('artifactsByTime', key, `it points at artifact ${value}, which is missing`);
    records.push(record);
  }
  return records;
}

/** The newest created_at in the time index (0 when empty) and how many entries are at or before it. */
export function artifactTimeBoundary(store: Store): { newest: number; count: number } {
  const { artifactsByTime } = storeHandle(store).db;
  try {
    let newest = 0;
    for (const key of artifactsByTime.getKeys({ reverse: true, limit: 1 })) newest = key[0];
    if (newest === 0) return { newest: 0, count: 0 };
    // Counted up to `newest` (not all keys), so an import committing meanwhile cannot skew it.
    return { newest, count: artifactsByTime.getKeysCount({ end: [newest + 1] as unknown as [number, string] }) };
  } catch (err) {
    throw readFailure('artifactsByTime', '(the newest keys)', err);
  }
}
