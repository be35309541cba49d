// Reading artifacts back: one by id, a page in creation order, and the snapshot boundary that
// makes a listing replayable (list only created_at <= as_of_created_at).
import type { ArtifactRecord } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';
import { artifactTimeBoundary, readArtifactRecord, readArtifactsByTime } from '../../3-store/artifact-records.js';
import type { Store } from '../../3-store/open-store.js';
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
  const record = readArtifactRecord(store, id);
  if (record === undefined) {
    throw new HelixError('P-PRECOND-ARTIFACT-NOT-FOUND', {
      message: `No artifact ${id} is in the store at ${store.home}.`,
      details: { id },
    });
  }
  return record;
}

/** Artifacts in creation order, optionally up to a snapshot boundary and paged. */
export function listArtifacts(store: Store, opts: ListOptions = {}): ArtifactRecord[] {
  const asOf = opts.asOfCreatedAt === undefined ? undefined : checkInteger(opts.asOfCreatedAt, 'asOfCreatedAt', 0);
  const limit = opts.limit === undefined ? undefined : checkInteger(opts.limit, 'limit', 1);
  const after = opts.afterId === undefined ? undefined : getArtifact(store, checkArtifactId(opts.afterId, 'afterId'));
  return readArtifactsByTime(store, {
    ...(after === undefined ? {} : { after }),
    ...(asOf === undefined ? {} : { asOfCreatedAt: asOf }),
    ...(limit === undefined ? {} : { limit }),
  });
}

/**
 * The store's current snapshot boundary: the newest created_at (0 when empty) and the count of
 * artifacts at or before it. Pass as_of_created_at to listArtifacts to see exactly those.
 */
export function snapshotBoundary(store: Store): SnapshotBoundary {
  const { newest, count } = artifactTimeBoundary(store);
  return { as_of_created_at: newest, artifact_count: count };
}
