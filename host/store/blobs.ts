// Content-addressed blobs in fixed-size chunks: large files stream in and out in constant
// memory, identical chunks are stored once, and every read checks the hashes, so damaged bytes
// raise D-DATA-CHECKSUM instead of being returned.
import { createHash } from 'node:crypto';
import { HelixError } from '../errors.js';
import type { BlobRecord, Store } from './open-store.js';

/** Chunk size: big enough for few records per file, small enough to hold a few in memory. */
export const CHUNK_BYTES = 1 << 20;
/** Chunk writes in flight before the writer waits (bounds memory on fast sources). */
const MAX_PENDING = 8;

/** A blob whose chunks are all stored; commitBlob makes it visible. */
export interface WrittenBlob {
  readonly sha256: string;
  readonly size: number;
  readonly chunks: readonly string[];
}

const hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Streams `source` into chunks (awaiting their commits, so memory stays bounded). Throws
 * I-REQ-TOO-LARGE past `maxBytes`; chunks already written stay invisible (no blob points at them).
 */
export async function writeChunks(store: Store, source: AsyncIterable<Uint8Array>, maxBytes = Number.MAX_SAFE_INTEGER): Promise<WrittenBlob> {
  const whole = createHash('sha256');
  const chunks: string[] = [];
  const pending: Array<Promise<unknown>> = [];
  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let filled = 0;
  let size = 0;
  const flush = async (): Promise<void> => {
    if (filled === 0) return;
    const chunk = filled === CHUNK_BYTES ? buffer : Buffer.from(buffer.subarray(0, filled));
    const key = hex(chunk);
    chunks.push(key);
    if (!store.db.chunks.doesExist(key)) pending.push(store.db.chunks.put(key, chunk));
    if (pending.length >= MAX_PENDING) await pending.shift();
    buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    filled = 0;
  };
  for await (const piece of source) {
    size += piece.length;
    if (size > maxBytes) {
      await Promise.all(pending);
      throw new HelixError('I-REQ-TOO-LARGE', { message: `The data is larger than the limit of ${maxBytes} bytes.`, details: { max_bytes: maxBytes } });
    }
    whole.update(piece);
    let offset = 0;
    while (offset < piece.length) {
      const n = Math.min(piece.length - offset, CHUNK_BYTES - filled);
      buffer.set(piece.subarray(offset, offset + n), filled);
      filled += n;
      offset += n;
      if (filled === CHUNK_BYTES) await flush();
    }
  }
  await flush();
  await Promise.all(pending);
  return { sha256: whole.digest('hex'), size, chunks };
}

/** Records the blob; call inside the transaction that makes its artifact visible. */
export function commitBlob(store: Store, blob: WrittenBlob): void {
  if (!store.db.blobs.doesExist(blob.sha256)) store.db.blobs.putSync(blob.sha256, { size: blob.size, chunks: [...blob.chunks] });
}

/** The blob record, or undefined when the blob is not stored. */
export function blobRecord(store: Store, sha256: string): BlobRecord | undefined {
  return store.db.blobs.get(sha256);
}

/** Reads one chunk and checks it against its hash. */
function readChunk(store: Store, blob: string, key: string): Buffer {
  const bytes = store.db.chunks.get(key) as Buffer | undefined;
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
  const record = store.db.blobs.get(sha256);
  if (record === undefined) throw new HelixError('D-DATA-CHECKSUM', { message: `Blob ${sha256} is not in the store.`, details: { sha256 } });
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

/** A whole blob in memory (checked); refuses blobs above `maxBytes`. */
export async function readBlobBytes(store: Store, sha256: string, maxBytes: number): Promise<Buffer> {
  const record = store.db.blobs.get(sha256);
  if (record !== undefined && record.size > maxBytes) {
    throw new HelixError('I-REQ-TOO-LARGE', { message: `The blob is ${record.size} bytes, above the limit of ${maxBytes}.`, details: { size: record.size, max_bytes: maxBytes } });
  }
  const parts: Buffer[] = [];
  for await (const piece of readBlob(store, sha256)) parts.push(piece);
  return Buffer.concat(parts);
}
