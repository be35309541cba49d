// A run collected from a fan-out node (abi/ABI.md, "Fan-out", ABI-FANOUT-005, -006), recorded as if
// it had run here: the run, its params and policy, module record, output and log artifacts,
// events, journal and audit records, with the bytes they name, in one transaction, so `helix
// verify` and `helix runs export` cover it. What the store already holds stays unless the
// collected run is a success replacing a run that did not succeed.
import type { ArtifactRecord, JournalEntry, RunEvent, RunRecord } from '../../../abi/index.js';
import { keepCollectedArtifact } from '../artifacts/index.js';
import { appendAudit, type AuditEntry } from '../../3-store/audit.js';
import { commitBlob, discardBlob, type WrittenBlob } from '../../3-store/blobs.js';
import { keepRunDocuments, type RunDocuments } from '../../3-store/documents.js';
import { writeJournal } from '../../3-store/journal.js';
import { keepModuleRecord } from '../../3-store/modules.js';
import type { Store } from '../../3-store/open-store.js';
import type { RecordValue } from '../../3-store/records.js';
import { appendRunEvent, putRun } from '../../3-store/runs.js';
import { getRun } from './run-store.js';

/** A run as a node recorded it, checked against the job it was made for, with what it left. */
export interface CollectedRun {
  readonly run: RunRecord;
  /** The run's output and log artifacts, as the node recorded them. */
  readonly artifacts: readonly ArtifactRecord[];
  /** The canonical params and policy the run id stands for. */
  readonly documents: RunDocuments;
  /** The module's record on the node; null for a run of no module. */
  readonly module: RecordValue<'modules'> | null;
  readonly events: readonly RunEvent[];
  readonly journal: readonly JournalEntry[];
  readonly audit: readonly AuditEntry[];
  /** Where it came from: the bundle directory and the node's hostname. */
  readonly from: { readonly bundle: string; readonly node: string };
}

/** Whether a collected run replaces what the store holds under its id (never a success, never a failure by a failure). */
export function replacesRun(existing: RunRecord | undefined, run: RunRecord): boolean {
  if (existing === undefined) return true;
  return run.status === 'succeeded' && (existing.status === 'failed' || existing.status === 'blocked' || existing.status === 'interrupted');
}

/**
 * Records `collected` with `blobs`, the pending writes (ABI-STORE-050) of every byte it names, in
 * one transaction; true when it entered the store, false when the store holds its run already
 * (read again under the write lock, since another collect may have committed meanwhile). The blobs
 * are discarded when the run is not recorded, refused or not.
 */
export async function recordCollectedRun(
  store: Store,
  collected: CollectedRun,
  blobs: readonly WrittenBlob[],
  now: () => number,
): Promise<boolean> {
  const runId = collected.run.run_id;
  return store
    .transaction(() => {
      const existing = getRun(store, runId);
      if (!replacesRun(existing, collected.run)) {
        for (const b of blobs) discardBlob(store, b);
        return false;
      }
      for (const b of blobs) commitBlob(store, b);
      keepRunDocuments(store, collected.documents);
      if (collected.module !== null) keepModuleRecord(store, collected.module);
      writeRun(store, collected, existing, now());
      for (const event of collected.events) appendRunEvent(store, runId, event);
      appendRunEvent(store, runId, {
        at: now(),
        kind: 'collected',
        detail: { bundle: collected.from.bundle, node: collected.from.node, status: collected.run.status },
      });
      writeJournal(store, runId, collected.journal);
      for (const a of collected.audit) appendAudit(store, a.at, a.record);
      appendAudit(store, now(), {
        kind: 'run.collected',
        run_id: runId,
        tool_id: collected.run.tool_id,
        bundle: collected.from.bundle,
        node: collected.from.node,
        status: collected.run.status,
      });
      return true;
    })
    .catch(async (err: unknown) => {
      // Refused inside the transaction (nothing of it was written): the blobs go to gc.
      await store.transaction(() => {
        for (const b of blobs) discardBlob(store, b);
      });
      throw err;
    });
}

/**
 * Writes the collected run and its artifacts; call inside the transaction. Attempts add up with
 * any attempt recorded here; the store's own creation time and idempotency key stay.
 */
function writeRun(store: Store, collected: CollectedRun, existing: RunRecord | undefined, at: number): void {
  for (const record of collected.artifacts) keepCollectedArtifact(store, record, at);
  const run = collected.run;
  putRun(store, {
    ...run,
    owner: null,
    attempts: (existing?.attempts ?? 0) + run.attempts,
    created_at: existing?.created_at ?? run.created_at,
    idempotency_key: existing?.idempotency_key ?? null,
  });
}
