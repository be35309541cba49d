// Content-addressed blobs in fixed-size chunks: large files stream in and out in constant
// memory, identical chunks are stored once, and every read checks the hashes, so damaged bytes
// raise D-DATA-CHECKSUM instead of being returned. Chunks written ahead of their blob are held
// by a pending write (pending.ts), so gc never takes them from a live writer.
import { createHash } from 'node:crypto';
import { HelixError } from '../../abi/index.js';
import type { BlobRecord } from './databases.js';
import { storeHandle, type Store } from './handle.js';
import { endPending, newPendingWrite, putPendingChunks } from './pending.js';
import { readFailure, readRecord } from './records.js';

/** Chunk size: big enough for few records per file, small enough to hold a few in memory. */
export const CHUNK_BYTES = 1 << 20;
/** Chunks stored per transaction: one commit (one flush of the file) for each 8 MiB. */
const BATCH_BYTES = 8 * CHUNK_BYTES;
/** A batch not yet full commits this long after its first chunk (a source that stalls). */
const BATCH_WAIT_MS = 20;

/** A blob whose chunks are all stored (or, when deferred, held); commitBlob makes it visible. */
export interface WrittenBlob {
  readonly sha256: string;
  readonly size: number;
  readonly chunks: readonly string[];
  /** Chunks held back for commitBlob to write inside its transaction (small data, `defer`). */
  readonly deferred?: ReadonlyArray<readonly [string, Uint8Array]>;
  /** The pending write holding the stored chunks until commitBlob or discardBlob ends it. */
  readonly pending?: string;
}

/** Options of writeChunks. */
export interface WriteChunksOptions {
  /**
   * Hold the chunks and let commitBlob write them in the caller's transaction, instead of
   * committing each chunk on its own. For small data on hot paths (a run's input and log):
   * one transaction instead of two. Do not use for data that may be large.
   */
  readonly defer?: boolean;
  /** The source never reuses a piece it has yielded (a file read stream), so pieces are kept without a copy. */
  readonly ownedPieces?: boolean;
}

const hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Streams `source` into chunks, stored 8 MiB to a transaction (one flush of the file per batch;
 * memory stays at about one batch). Unless deferred, the chunks are held by a pending write registered with the
 * first ones (ABI-STORE-050) and ended by commitBlob or discardBlob. Throws I-REQ-TOO-LARGE past
 * `maxBytes`; on any failure the pending write ends, leaving its chunks to gc.
 */
export async function writeChunks(
  store: Store,
  source: AsyncIterable<Uint8Array>,
  maxBytes = Number.MAX_SAFE_INTEGER,
  options: WriteChunksOptions = {},
): Promise<WrittenBlob> {
  const whole = createHash('sha256');
  const keys: string[] = [];
  const commits: Array<Promise<unknown>> = [];
  const deferred: Array<[string, Buffer]> = [];
  const pending = options.defer ? undefined : newPendingWrite();
  // Pieces gather until a chunk is full; small data never allocates a whole chunk.
  let pieces: Uint8Array[] = [];
  let filled = 0;
  let size = 0;
  let batch: Array<[string, Buffer]> = [];
  let batchBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const commitBatch = (): void => {
    clearTimeout(timer);
    timer = undefined;
    const entries = batch;
    batch = [];
    batchBytes = 0;
    if (entries.length === 0 || pending === undefined) return;
    const put = putPendingChunks(store, pending, entries);
    // Awaited below; the handler keeps a failure from being unhandled while another is awaited.
    put.catch(() => undefined);
    commits.push(put);
  };
  const flush = async (): Promise<void> => {
    if (filled === 0) return;
    const chunk = pieces.length === 1 ? Buffer.from(pieces[0]!.buffer, pieces[0]!.byteOffset, filled) : Buffer.concat(pieces, filled);
    pieces = [];
    filled = 0;
    const key = hex(chunk);
    keys.push(key);
    if (pending === undefined) {
      deferred.push([key, chunk]);
      return;
    }
    batch.push([key, chunk]);
    batchBytes += chunk.length;
    if (batchBytes >= BATCH_BYTES) commitBatch();
    else timer ??= setTimeout(commitBatch, BATCH_WAIT_MS);
    // One batch commits while the next fills, so reading and hashing overlap the commit's sync;
    // awaiting the older one keeps memory at two batches and a failure from going unseen.
    if (commits.length > 1) await commits.shift();
  };
  try {
    for await (const piece of source) {
      size += piece.length;
      if (size > maxBytes)
        throw new HelixError('I-REQ-TOO-LARGE', {
          message: `The data is larger than the limit of ${maxBytes} bytes.`,
          details: { max_bytes: maxBytes },
        });
      whole.update(piece);
      let offset = 0;
      while (offset < piece.length) {
        const n = Math.min(piece.length - offset, CHUNK_BYTES - filled);
        // Copied unless owned: a source may reuse its buffer once the piece is consumed.
        pieces.push(options.ownedPieces ? piece.subarray(offset, offset + n) : piece.slice(offset, offset + n));
        filled += n;
        offset += n;
        if (filled === CHUNK_BYTES) await flush();
      }
    }
    await flush();
    commitBatch();
    await Promise.all(commits);
  } catch (err) {
    clearTimeout(timer);
    await Promise.allSettled(commits);
    if (pending !== undefined) await store.transaction(() => endPending(store, pending.id)).catch(() => undefined);
    throw err;
  }
  return { sha256: whole.digest('hex'), size, chunks: keys, ...(pending === undefined ? { deferred } : { pending: pending.id }) };
}

/** Records the blob and ends its pending write; call inside the transaction that makes its artifact visible. */
export function commitBlob(store: Store, blob: WrittenBlob): void {
  const { db } = storeHandle(store);
  for (const [key, bytes] of blob.deferred ?? []) if (!db.chunks.doesExist(key)) db.chunks.putSync(key, bytes);
  if (!db.blobs.doesExist(blob.sha256)) db.blobs.putSync(blob.sha256, { size: blob.size, chunks: [...blob.chunks] });
  if (blob.pending !== undefined) endPending(store, blob.pending);
}

/**
 * Gives up a written blob that will never be committed (a failed run's outputs): its pending
 * write ends, so gc may reclaim the chunks no committed blob lists. Call inside a transaction.
 */
export function discardBlob(store: Store, blob: WrittenBlob): void {
  if (blob.pending !== undefined) endPending(store, blob.pending);
}

/** The blob record, or undefined when the blob is not stored. */
export function blobRecord(store: Store, sha256: string): BlobRecord | undefined {
  return readRecord(store, 'blobs', sha256);
}

/**
 * Reads one chunk and checks it against its hash. `transient` reads it without a copy of its
 * own: the bytes are lmdb-js's reused read buffer, valid only until the next read of the store,
 * so the caller copies them at once. It spares a fresh 1 MiB buffer per chunk, whose first
 * touch of each page faults (about half the host's time in a bulk read, measured).
 */
function readChunk(store: Store, blob: string, key: string, transient = false): Buffer {
  const chunks = storeHandle(store).db.chunks;
  let bytes: Buffer | undefined;
  try {
    if (transient) {
      // The reused buffer can be longer than the value; lmdb-js leaves the value's length in lastSize.
      const fast = chunks.getBinaryFast(key);
      bytes = fast?.subarray(0, (chunks as unknown as { lastSize: number }).lastSize);
    } else bytes = chunks.get(key) as Buffer | undefined;
  } catch (err) {
    throw readFailure('chunks', key, err);
  }
  if (bytes === undefined || hex(bytes) !== key) {
    throw new HelixError('D-DATA-CHECKSUM', {
      message: bytes === undefined ? `Blob ${blob} is missing chunk ${key}.` : `A chunk of blob ${blob} does not match its hash.`,
      details: { sha256: blob, chunk: key },
    });
  }
  return bytes;
}

/**
 * Streams a blob's bytes (all, or [start, end)), checking every chunk's hash; a full read also
 * checks the whole content hash before it ends.
 */
export async function* readBlob(store: Store, sha256: string, range: { start?: number; end?: number } = {}): AsyncGenerator<Buffer> {
  const record = blobRecord(store, sha256);
  if (record === undefined)
    throw new HelixError('D-DATA-CHECKSUM', { message: `Blob ${sha256} is not in the store.`, details: { sha256 } });
  const start = Math.max(0, range.start ?? 0);
  const end = Math.min(record.size, range.end ?? record.size);
  const full = start === 0 && end === record.size;
  const whole = full ? createHash('sha256') : undefined;
  let offset = 0;
  for (const key of record.chunks) {
    const chunkEnd = offset + CHUNK_BYTES;
    if (chunkEnd > start && offset < end) {
      const bytes = readChunk(store, sha256, key);
      const piece = bytes.subarray(Math.max(0, start - offset), Math.min(bytes.length, end - offset));
      whole?.update(piece);
      yield piece;
    }
    offset = chunkEnd;
    if (offset >= end) break;
  }
  if (whole !== undefined && whole.digest('hex') !== sha256) {
    throw new HelixError('D-DATA-CHECKSUM', { message: `Blob ${sha256} does not match its content hash.`, details: { sha256 } });
  }
}

/**
 * Bytes [start, end) of a blob in one buffer of their own (so it can be moved to another
 * thread), or in `into` when it is long enough (the result is then a view of it), every chunk checked; `chunk` is the key of the one stored chunk the range is exactly,
 * whose hash the read has just checked (a bulk read's journal names the bytes by it).
 */
export function readBlobRange(
  store: Store,
  sha256: string,
  start: number,
  end: number,
  into?: Uint8Array,
): { data: Uint8Array; size: number; chunk?: string } {
  const record = blobRecord(store, sha256);
  if (record === undefined)
    throw new HelixError('D-DATA-CHECKSUM', { message: `Blob ${sha256} is not in the store.`, details: { sha256 } });
  const from = Math.max(0, start);
  const to = Math.max(from, Math.min(record.size, end));
  const data = into !== undefined && into.length >= to - from ? into.subarray(0, to - from) : new Uint8Array(to - from);
  const full = from === 0 && to === record.size && record.chunks.length > 1;
  const whole = full ? createHash('sha256') : undefined;
  let chunk: string | undefined;
  for (let i = Math.floor(from / CHUNK_BYTES); i < record.chunks.length && i * CHUNK_BYTES < to; i++) {
    const key = record.chunks[i]!;
    const bytes = readChunk(store, sha256, key, true);
    const offset = i * CHUNK_BYTES;
    const piece = bytes.subarray(Math.max(0, from - offset), Math.min(bytes.length, to - offset));
    whole?.update(piece);
    data.set(piece, offset + Math.max(0, from - offset) - from);
    if (piece.length === bytes.length && piece.length === data.length) chunk = key;
  }
  if (whole !== undefined && whole.digest('hex') !== sha256) {
    throw new HelixError('D-DATA-CHECKSUM', { message: `Blob ${sha256} does not match its content hash.`, details: { sha256 } });
  }
  return { data, size: record.size, ...(chunk === undefined ? {} : { chunk }) };
}

/** A whole blob in memory (checked); refuses blobs above `maxBytes`. */
export async function readBlobBytes(store: Store, sha256: string, maxBytes: number): Promise<Buffer> {
  const record = blobRecord(store, sha256);
  if (record !== undefined && record.size > maxBytes) {
    throw new HelixError('I-REQ-TOO-LARGE', {
      message: `The blob is ${record.size} bytes, above the limit of ${maxBytes}.`,
      details: { size: record.size, max_bytes: maxBytes },
    });
  }
  const parts: Buffer[] = [];
  for await (const piece of readBlob(store, sha256)) parts.push(piece);
  return Buffer.concat(parts);
}
