// Reading artifacts back: one by id, a page in creation order, and the snapshot boundary that
// makes a listing replayable (list only created_at <= as_of_created_at).
import type { ArtifactRecord } from '../../abi/index.js';
import { HelixError } from '../../abi/index.js';
import type { Store } from '../store/open-store.js';
import { invalidRecord, readFailure, readRange, readRecord } from '../store/records.js';
import { checkArtifactId, checkInteger } from './inputs.js';

/** Options of listArtifacts. */
export interface ListOptions {
  /** Only artifacts created at or before this time (a snapshot boundary's as_of_created_at). */
  readonly asOfCreatedAt?: number;
  /** At most this many records. */
  readonly limit?: number;
  /** Start after this artifact (the last id of the previous page). */
  readonly afterId?: string;
}

/**
 * A point in the store's history: the newest created_at and how many artifacts it covers. A
 * type, not an interface, so it is assignable to Record<string, unknown> (canonical params).
 */
export type SnapshotBoundary = { readonly as_of_created_at: number; readonly artifact_count: number };

/**
 * The artifact with this id. I-REQ-INPUT for a malformed id, P-PRECOND-ARTIFACT-NOT-FOUND when
 * there is none, D-DATA-RECORD-INVALID when its stored record is damaged.
 */
export function getArtifact(store: Store, id: string): ArtifactRecord {
  checkArtifactId(id);
  // Records are parsed on the way out: a record of an older or damaged store is caught, not trusted.
  const record = readRecord(store, 'artifacts', id);
  if (record === undefined) {
    throw new HelixError('P-PRECOND-ARTIFACT-NOT-FOUND', { message: `No artifact ${id} is in the store at ${store.home}.`, details: { id } });
  }
  return record;
}

/** Artifacts in creation order, optionally up to a snapshot boundary and paged. */
export function listArtifacts(store: Store, opts: ListOptions = {}): ArtifactRecord[] {
  const asOf = opts.asOfCreatedAt === undefined ? undefined : checkInteger(opts.asOfCreatedAt, 'asOfCreatedAt', 0);
  const limit = opts.limit === undefined ? undefined : checkInteger(opts.limit, 'limit', 1);
  const after = opts.afterId === undefined ? undefined : getArtifact(store, checkArtifactId(opts.afterId, 'afterId'));
  // Keys are [created_at, id]; [asOf + 1] sorts after every [asOf, id], so the exclusive end
  // keeps exactly created_at <= asOf.
  const range = readRange(store, 'artifactsByTime', {
    ...(after === undefined ? {} : { start: [after.created_at, after.id] as [number, string] }),
    ...(asOf === undefined ? {} : { end: [asOf + 1] as unknown as [number, string] }),
  });
  const records: ArtifactRecord[] = [];
  for (const { key, value } of range) {
    if (after !== undefined && key[1] === after.id) continue;
    if (limit !== undefined && records.length >= limit) break;
    const record = readRecord(store, 'artifacts', value);
    if (record === undefined) throw invalidRecord('artifactsByTime', key, `it points at artifact ${value}, which is missing`);
    records.push(record);
  }
  return records;
}

/**
 * The store's current snapshot boundary: the newest created_at (0 when empty) and the count of
 * artifacts at or before it. Pass as_of_created_at to listArtifacts to see exactly those.
 */
export function snapshotBoundary(store: Store): SnapshotBoundary {
  try {
    let newest = 0;
    for (const key of store.db.artifactsByTime.getKeys({ reverse: true, limit: 1 })) newest = key[0];
    if (newest === 0) return { as_of_created_at: 0, artifact_count: 0 };
    // Counted up to `newest` (not all keys), so an import committing meanwhile cannot skew it.
    const count = store.db.artifactsByTime.getKeysCount({ end: [newest + 1] as unknown as [number, string] });
    return { as_of_created_at: newest, artifact_count: count };
  } catch (err) {
    throw readFailure('artifactsByTime', '(the newest keys)', err);
  }
}
