// In-progress writes (ABI-STORE-050): a writer that stores chunks before the blob listing them
// commits registers a pending record naming its process with its first chunk and marks every
// chunk it relies on, so `helix gc` in another process never takes a chunk from a live writer.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { currentOwner, isOtherLiveOwner, type Owner } from './owner.js';
import { storeHandle, type Store } from './handle.js';
import { walk } from './walk.js';

/** The header of a pending write: who writes, since when. */
export const PendingRecordSchema = z.strictObject({
  owner: z.strictObject({ pid: z.number().int(), hostname: z.string(), started_at: z.number().int() }),
  created_at: z.number().int(),
});
export type PendingRecord = z.infer<typeof PendingRecordSchema>;

/** Second key element of a header; every chunk mark sorts after it (hex digests). */
export const PENDING_HEADER = '';
/** Sorts after every lowercase hex digest: the end of one write's key range. */
const RANGE_END = 'g';

/** One pending write as stored: its header (undefined when absent) and the chunks it marked. */
export interface PendingWrite {
  readonly id: string;
  readonly header: unknown;
  readonly chunks: readonly string[];
}

/** A pending write of this process, registered in the store with its first chunk. */
export interface PendingWriter {
  readonly id: string;
  readonly record: PendingRecord;
  registered: boolean;
}

/** A new pending write owned by this process (nothing is stored until its first chunk). */
export function newPendingWrite(now: number = Date.now()): PendingWriter {
  return { id: randomBytes(12).toString('hex'), record: { owner: { ...currentOwner() }, created_at: now }, registered: false };
}

/**
 * Marks each key as relied on by `write` and stores its chunk unless it is already there, in one
 * transaction that also registers the write with its first chunks: one commit (one flush of the
 * file) for all of them. The existence check and the mark cannot be split by a gc in between, so a
 * chunk found (deduplicated) is protected exactly like one written, and no chunk is ever stored
 * before the record that holds it.
 */
export function putPendingChunks(
  store: Store,
  write: PendingWriter,
  chunks: ReadonlyArray<readonly [string, Uint8Array]>,
): Promise<unknown> {
  const { db } = storeHandle(store);
  const header = write.registered ? undefined : write.record;
  write.registered = true;
  return store.transaction(() => {
    if (header !== undefined) db.pending.putSync([write.id, PENDING_HEADER], header);
    for (const [key, bytes] of chunks) {
      db.pending.putSync([write.id, key], true);
      if (!db.chunks.doesExist(key)) db.chunks.putSync(key, bytes);
    }
  });
}

/** Removes write `id` (header and marks). Synchronous: call inside the transaction that commits or abandons its blob. */
export function endPending(store: Store, id: string): number {
  const { db } = storeHandle(store);
  const keys = [...db.pending.getKeys({ start: [id, PENDING_HEADER], end: [id, RANGE_END] })];
  for (const key of keys) db.pending.removeSync(key);
  return keys.length;
}

/** Whether the owner of a pending write still runs: this process, or another live one. */
export function isLiveWriter(owner: Owner): boolean {
  const me = currentOwner();
  if (owner.pid === me.pid && owner.hostname === me.hostname && owner.started_at === me.started_at) return true;
  return isOtherLiveOwner(owner);
}

/** The pending writes in key order, each with its marked chunks (one write's marks in memory at a time). */
export function* pendingWrites(store: Store): Generator<PendingWrite> {
  let current: { id: string; header: unknown; chunks: string[] } | undefined;
  for (const { key, value, error } of walk(storeHandle(store).db.pending)) {
    const [id, second] = Array.isArray(key) ? key : [String(key), PENDING_HEADER];
    if (current !== undefined && current.id !== id) {
      yield current;
      current = undefined;
    }
    current ??= { id: String(id), header: undefined, chunks: [] };
    // A header that does not decode stays defined (and fails its schema): it is damaged, not absent.
    if (second === PENDING_HEADER) current.header = error === undefined ? value : { undecodable: error };
    else current.chunks.push(String(second));
  }
  if (current !== undefined) yield current;
}
