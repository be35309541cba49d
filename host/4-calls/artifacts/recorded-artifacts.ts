// Artifacts that arrive with the record another store gave them (abi/ABI.md, "Fan-out"): a job's
// input artifacts imported on a node as the submitting store holds them (ABI-FANOUT-003), and a
// collected run's output and log artifacts kept in the submitting store (ABI-FANOUT-005).
import { HelixError, type ArtifactRecord } from '../../../abi/index.js';
import { lastArtifactCreatedAt, putArtifactRecord, readArtifactRecord } from '../../3-store/artifact-records.js';
import { commitBlob, type WrittenBlob } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';

/**
 * Stores the artifact `record` as given (its id and created_at too) unless the store holds it with
 * the same bytes: `stage` writes its bytes as a pending blob (ABI-STORE-050), checked on the way,
 * and the blob and the record are committed in one transaction.
 */
export async function importRecordedArtifact(store: Store, record: ArtifactRecord, stage: () => Promise<WrittenBlob>): Promise<void> {
  if (readArtifactRecord(store, record.id)?.sha256 === record.sha256) return;
  const blob = await stage();
  await store.transaction(() => {
    commitBlob(store, blob);
    putArtifactRecord(store, record);
  });
}

/**
 * Keeps a collected run's artifact `record`, whose blob the same transaction commits; call inside
 * it. A record the store holds with the same bytes stays as it is; one of that id naming other
 * bytes is D-DATA-BUNDLE-IDENTITY. A new one gets this store's next created_at (at least `at`), so
 * its time index stays strictly increasing.
 */
export function keepCollectedArtifact(store: Store, record: ArtifactRecord, at: number): void {
  const held = readArtifactRecord(store, record.id);
  if (held?.sha256 === record.sha256) return;
  if (held !== undefined) {
    throw new HelixError('D-DATA-BUNDLE-IDENTITY', {
      message: `The result's artifact ${record.id} names other bytes than this store's artifact of that id.`,
      details: { field: `artifact ${record.id}`, expected: held.sha256, actual: record.sha256 },
    });
  }
  putArtifactRecord(store, { ...record, created_at: Math.max(at, lastArtifactCreatedAt(store) + 1) });
}
