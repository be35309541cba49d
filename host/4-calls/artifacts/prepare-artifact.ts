// Making artifacts in two steps: prepareArtifact streams the bytes into chunks and inspects them
// (nothing is visible yet); commitArtifact, inside one transaction, records the blob, the
// artifact and its index entry together, so an artifact exists only once all its bytes do.
import type { z } from 'zod';
import { type ArtifactRecord, ArtifactRecordSchema, ArtifactSourceSchema, HelixError } from '../../../abi/index.js';
import { lastArtifactCreatedAt, putArtifactRecord } from '../../3-store/artifact-records.js';
import { CHUNK_BYTES, commitBlob, writeChunks, type WrittenBlob } from '../../3-store/blobs.js';
import { newArtifactId } from '../../3-store/ids.js';
import type { Store } from '../../3-store/open-store.js';
import { ContentInspector } from './inspect-content.js';
import { checkByteLimit, checkInteger, checkLabel, checkRunId, checkTypeName } from './inputs.js';

/** How an artifact came to be: an import (real path, mtime), inline data, or a run's output. */
export type ArtifactSource = z.infer<typeof ArtifactSourceSchema>;

/** What a caller may say about an artifact it imports. */
export interface ArtifactMeta {
  /** A short text for people; at most 200 characters, one line. */
  readonly label?: string | null;
  /** A lowercase word that overrides the detected type, e.g. `fasta`. */
  readonly type?: string;
}

/** Options of prepareArtifact. */
export interface PrepareOptions extends ArtifactMeta {
  /** Refuse the data (I-REQ-TOO-LARGE) past this many bytes. */
  readonly maxBytes: number;
  readonly source: ArtifactSource;
  readonly createdByRun?: string | null;
  /** Hold the bytes for commitArtifact's transaction (small data only; see writeChunks). */
  readonly deferChunks?: boolean;
  /** The source never reuses a piece it yielded (a file read stream): pieces are stored without a copy. */
  readonly ownedPieces?: boolean;
}

/** Bytes stored as chunks and inspected, not yet visible: commitArtifact makes them an artifact. */
export interface PreparedArtifact {
  readonly blob: WrittenBlob;
  readonly type: string;
  readonly compression: 'gzip' | null;
  readonly media_type: string;
  readonly label: string | null;
  readonly source: ArtifactSource;
  readonly created_by_run: string | null;
  readonly preview: ArtifactRecord['preview'];
}

/** Default limit of importInline: inline data is already in memory, so it is kept small. */
export const DEFAULT_INLINE_MAX_BYTES = 16 * 1024 * 1024;

async function* observed(source: AsyncIterable<Uint8Array>, inspector: ContentInspector): AsyncGenerator<Uint8Array> {
  for await (const piece of source) {
    await inspector.push(piece);
    yield piece;
  }
}

/**
 * Streams `source` into the store's chunks, detecting its type and building its preview on the
 * way (constant memory). Nothing is visible until commitArtifact. Chunks written before a
 * failure stay behind unreferenced, which is harmless: no blob or artifact points at them.
 */
export async function prepareArtifact(store: Store, source: AsyncIterable<Uint8Array>, opts: PrepareOptions): Promise<PreparedArtifact> {
  const maxBytes = checkByteLimit(opts.maxBytes, 'maxBytes');
  const label = checkLabel(opts.label);
  const typeOverride = checkTypeName(opts.type);
  const createdByRun = checkRunId(opts.createdByRun);
  const parsedSource = ArtifactSourceSchema.safeParse(opts.source);
  if (!parsedSource.success) {
    throw new HelixError('I-REQ-INPUT', {
      message: 'Invalid source: it is not an import, inline or run source.',
      details: { violations: parsedSource.error.issues.map((i) => `source.${i.path.join('.')}: ${i.message}`) },
      hint: "Pass { kind: 'import', path, mtime_ms }, { kind: 'inline' } or { kind: 'run', run_id, role }.",
    });
  }
  const inspector = new ContentInspector(typeOverride);
  try {
    const blob = await writeChunks(store, observed(source, inspector), maxBytes, {
      defer: opts.deferChunks === true,
      ownedPieces: opts.ownedPieces === true,
    });
    const { detected, preview } = await inspector.end();
    return { blob, ...detected, label, source: parsedSource.data, created_by_run: createdByRun, preview };
  } finally {
    inspector.dispose();
  }
}

/**
 * Makes a prepared artifact visible. Synchronous: call it INSIDE a store transaction
 * (`store.transaction(() => commitArtifact(...))` or `transactionSync`), so the blob record,
 * the artifact record, its index entry and the clock marker commit together. `created_at` is
 * max(now, last created_at + 1): strictly increasing across the store, even within a millisecond
 * and across processes (the transaction holds LMDB's write lock).
 */
export function commitArtifact(store: Store, prepared: PreparedArtifact, nowMs: number = Date.now(), reservedId?: string): ArtifactRecord {
  checkInteger(Math.trunc(nowMs), 'nowMs', 0);
  const created_at = Math.max(Math.trunc(nowMs), lastArtifactCreatedAt(store) + 1);
  // A run's output gets its id when the guest seals it (so the guest can name it in its output)
  // but becomes visible only here, when the run ends.
  const id = reservedId ?? newArtifactId(created_at);
  // Parsed before any write, so a bad record throws before the transaction has changed anything.
  const record = ArtifactRecordSchema.parse({
    id,
    sha256: prepared.blob.sha256,
    size: prepared.blob.size,
    type: prepared.type,
    compression: prepared.compression,
    media_type: prepared.media_type,
    label: prepared.label,
    created_at,
    created_by_run: prepared.created_by_run,
    source: prepared.source,
    preview: prepared.preview,
  });
  commitBlob(store, prepared.blob);
  putArtifactRecord(store, record);
  return record;
}

/** Whether an artifact is the log of a run (source role `log`, reserved for the host). */
export { isRunLog } from '../../3-store/artifact-records.js';

/** Prepares and commits in one go (the commit is one transaction). */
export async function storeArtifact(store: Store, source: AsyncIterable<Uint8Array>, opts: PrepareOptions): Promise<ArtifactRecord> {
  const prepared = await prepareArtifact(store, source, opts);
  return store.transaction(() => commitArtifact(store, prepared));
}

/** Imports in-memory data (a string is stored as UTF-8) as an artifact with an inline source. */
export async function importInline(
  store: Store,
  data: string | Uint8Array,
  meta: ArtifactMeta & { readonly maxBytes?: number } = {},
): Promise<ArtifactRecord> {
  const maxBytes = checkByteLimit(meta.maxBytes ?? DEFAULT_INLINE_MAX_BYTES, 'maxBytes');
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
    throw new HelixError('I-REQ-INPUT', {
      message: `Invalid data: must be a string or bytes, got ${data === null ? 'null' : typeof data}.`,
      details: { violations: ['data: must be a string or a Uint8Array'] },
      hint: 'Pass the content as a string (stored as UTF-8) or a Uint8Array.',
    });
  }
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (bytes.length > maxBytes) {
    throw new HelixError('I-REQ-TOO-LARGE', {
      message: `The inline data is ${bytes.length} bytes, above the limit of ${maxBytes} bytes.`,
      details: { size: bytes.length, max_bytes: maxBytes },
      hint: 'Send less data inline, or import it from a file.',
    });
  }
  async function* pieces(): AsyncGenerator<Uint8Array> {
    for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) yield bytes.subarray(offset, offset + CHUNK_BYTES);
  }
  return storeArtifact(store, pieces(), { maxBytes, label: meta.label, type: meta.type, source: { kind: 'inline' } });
}
