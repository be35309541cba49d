// Blob bytes in a bundle: written out of a store into `blobs/<sha256>` as they stream, and read
// back into a store with their size and hash checked on the way, so a changed file is refused
// (D-DATA-BUNDLE-HASH) before anything that names it is committed; a job's input artifacts
// imported from them with their records (ABI-FANOUT-003).
import { createHash } from 'node:crypto';
import { constants, createReadStream, createWriteStream, existsSync, linkSync, mkdirSync, renameSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { HelixError, type ArtifactRecord } from '../../../abi/index.js';
import { bundleError } from '../../1-base/files/bundle-files.js';
import { readBlob, writeChunks, type WrittenBlob } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';
import { importRecordedArtifact } from '../artifacts/index.js';
import { blobFile } from './bundle-format.js';

/**
 * Writes the store's blob `sha256` to `<dir>/blobs/<sha256>` (each chunk checked as it is read); a
 * file already there is kept. When a bundle of `linkFrom` has the blob, the file is a hard link to
 * it instead (an input every element of an array shares is stored once; bundle blobs are never
 * written to after they are made).
 */
export async function writeBlobFile(store: Store, dir: string, sha256: string, linkFrom: readonly string[] = []): Promise<void> {
  const file = blobFile(dir, sha256);
  if (existsSync(file)) return;
  mkdirSync(path.dirname(file), { recursive: true });
  for (const other of linkFrom) {
    try {
      linkSync(blobFile(other, sha256), file);
      return;
    } catch {
      // Not there, or another filesystem: copy it from the store below.
    }
  }
  // Its own partial file: a requeued job may write the same bundle while the first is still at it.
  const partial = `${file}.${process.pid}.partial`;
  await pipeline(readBlob(store, sha256), createWriteStream(partial));
  renameSync(partial, file);
}

/** D-DATA-BUNDLE-HASH for a bundle file whose bytes are not the ones named. */
function hashMismatch(file: string, expected: { sha256: string; size: number }, actual: { sha256: string; size: number }): HelixError {
  return new HelixError('D-DATA-BUNDLE-HASH', {
    message: `The bundle file ${file} holds ${actual.size} bytes of sha256 ${actual.sha256}; its record names ${expected.size} bytes of sha256 ${expected.sha256}.`,
    details: { file, expected, actual },
  });
}

/**
 * The bytes of `<dir>/blobs/<sha256>`, streamed: a regular file (never followed through a
 * symlink), of `size` bytes hashing to `sha256`, else the stream ends with D-DATA-BUNDLE-HASH
 * (I-REQ-JOB-BUNDLE when the file is missing or not a regular file).
 */
async function* checkedBlobFile(dir: string, sha256: string, size: number): AsyncGenerator<Uint8Array> {
  const file = blobFile(dir, sha256);
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw bundleError(file, code === 'ENOENT' ? 'is missing' : code === 'ELOOP' ? 'is a symbolic link' : `cannot be opened (${code})`);
  }
  try {
    if (!(await handle.stat()).isFile()) throw bundleError(file, 'is not a regular file');
    const hash = createHash('sha256');
    let read = 0;
    for await (const piece of createReadStream('', { fd: handle.fd, autoClose: false }) as AsyncIterable<Buffer>) {
      read += piece.length;
      if (read > size) throw hashMismatch(file, { sha256, size }, { sha256: '(not read: the file is longer)', size: read });
      hash.update(piece);
      yield piece;
    }
    const actual = hash.digest('hex');
    if (read !== size || actual !== sha256) throw hashMismatch(file, { sha256, size }, { sha256: actual, size: read });
  } finally {
    await handle.close();
  }
}

/**
 * Stores the bundle's blob `sha256` as chunks held by a pending write (ABI-STORE-050), checked
 * against its hash and size; commitBlob makes it visible in the caller's transaction.
 */
export function storeBlobFile(store: Store, dir: string, sha256: string, size: number): Promise<WrittenBlob> {
  return writeChunks(store, checkedBlobFile(dir, sha256, size), size, { ownedPieces: true });
}

/**
 * Imports a job's input artifacts from the bundle in `dir` into `store`, with their records as the
 * submitting store holds them, in creation order; an artifact the store holds with the same bytes
 * is left as it is.
 */
export async function importInputs(store: Store, dir: string, inputs: readonly ArtifactRecord[]): Promise<void> {
  const sorted = [...inputs].sort((a, b) => a.created_at - b.created_at);
  for (const record of sorted) await importRecordedArtifact(store, record, () => storeBlobFile(store, dir, record.sha256, record.size));
}
