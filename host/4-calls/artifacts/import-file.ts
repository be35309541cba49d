// The import boundary (README "Runs, artifacts and provenance"; the policy's paths.importRoots): a
// file becomes an artifact only if it is a regular, readable file inside the policy's import roots,
// reached without symbolic links and under the size ceiling. Checks run before any byte is stored;
// the file is opened so that it cannot be swapped between the check and the read.
import { constants, type Stats } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactRecord, Policy } from '../../../abi/index.js';
import { HelixError, isHelixError } from '../../../abi/index.js';
import { CHUNK_BYTES, discardBlob } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';
import { checkLabel, checkTypeName } from './inputs.js';
import { kindOf } from '../../1-base/files/fs-facts.js';
import { describeFsError, insideRoots, outsideRoots, pathError, resolveRoots, symlinkRefused } from './path-boundary.js';
import { commitArtifact, prepareArtifact, type ArtifactMeta } from './prepare-artifact.js';

// O_NOFOLLOW refuses a link swapped in for the last component; O_NONBLOCK keeps a FIFO swapped
// in from blocking the open (fstat then refuses it); neither changes reads of a regular file.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Runs an fs call; turns its failure into P-PRECOND-PATH naming the path. */
async function fsStep<T>(p: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw pathError('import', p, describeFsError(err), undefined, err);
  }
}

/** The checked real path and its stats, or a refusal. Touches nothing outside the roots. */
async function checkImportPath(policy: Policy, filePath: string): Promise<{ real: string; stats: Stats }> {
  if (typeof filePath !== 'string' || filePath === '') {
    throw pathError('import', String(filePath), 'the path is empty', 'Pass the path of a file to import.');
  }
  const abs = path.resolve(filePath);
  const roots = await resolveRoots(policy.paths.importRoots);
  // Decided on the resolved path first (.. already collapsed), so nothing is learnt, not even
  // whether it exists, about a path outside the roots.
  if (!insideRoots(abs, roots, 'given-or-real')) throw outsideRoots('import', abs, roots);
  const stats = await fsStep(abs, () => lstat(abs));
  if (stats.isSymbolicLink()) throw symlinkRefused('import', abs);
  const real = await fsStep(abs, () => realpath(abs));
  if (real !== abs) throw symlinkRefused('import', abs, real);
  if (!insideRoots(real, roots, 'real')) throw outsideRoots('import', abs, roots, real);
  if (!stats.isFile())
    throw pathError(
      'import',
      abs,
      `it is ${kindOf(stats)}, not a regular file`,
      'Import a regular file; archive a directory first if you need its contents.',
    );
  return { real, stats };
}

function tooLarge(p: string, size: number | null, maxBytes: number): HelixError {
  return new HelixError('I-REQ-TOO-LARGE', {
    message:
      size === null
        ? `Cannot import ${p}: it grew past the import limit of ${maxBytes} bytes while being read.`
        : `Cannot import ${p}: it is ${size} bytes, above the import limit of ${maxBytes} bytes.`,
    details: { path: p, ...(size === null ? {} : { size }), max_bytes: maxBytes },
  });
}

/**
 * The checks importFile makes before it stores anything (the label, the type, the roots,
 * symbolic links, the file kind, the size ceiling), without a store: a command line refuses a
 * bad import with the same error before it opens or makes one. importFile checks again.
 * Without a file (an inline import), the label and the type.
 */
export async function checkImport(policy: Policy, filePath: string | undefined, meta: ArtifactMeta = {}): Promise<void> {
  checkLabel(meta.label);
  checkTypeName(meta.type);
  if (filePath === undefined) return;
  const { real, stats } = await checkImportPath(policy, filePath);
  if (stats.size > policy.ceilings.maxImportBytes) throw tooLarge(real, stats.size, policy.ceilings.maxImportBytes);
}

/**
 * Imports a file as an artifact after the boundary checks (roots, symbolic links, file kind,
 * readability, policy.ceilings.maxImportBytes). Streams in constant memory; the artifact
 * becomes visible in one transaction at the end, and until then a pending write of this process
 * holds its chunks (ABI-STORE-050), so an import killed halfway leaves them to `helix gc`.
 * Source: `{ kind: 'import', path, mtime_ms }` with the real path.
 */
export async function importFile(store: Store, policy: Policy, filePath: string, meta: ArtifactMeta = {}): Promise<ArtifactRecord> {
  checkLabel(meta.label);
  checkTypeName(meta.type);
  const maxBytes = policy.ceilings.maxImportBytes;
  const { real, stats } = await checkImportPath(policy, filePath);
  if (stats.size > maxBytes) throw tooLarge(real, stats.size, maxBytes);

  let handle: FileHandle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw symlinkRefused('import', real);
    throw pathError(
      'import',
      real,
      `it cannot be opened for reading: ${describeFsError(err)}`,
      'Make the file readable by the user running Helix.',
      err,
    );
  }
  try {
    const opened = await fsStep(real, () => handle.stat());
    // The descriptor must be the file that was checked: a rename or a directory swapped for a
    // link between the checks and the open would give another inode.
    if (opened.dev !== stats.dev || opened.ino !== stats.ino) {
      throw pathError('import', real, 'it was replaced between the checks and the open', 'Retry when nothing else is changing the file.');
    }
    if (!opened.isFile()) throw pathError('import', real, `it is ${kindOf(opened)}, not a regular file`);
    if (opened.size > maxBytes) throw tooLarge(real, opened.size, maxBytes);
    const stream = handle.createReadStream({ start: 0, highWaterMark: CHUNK_BYTES, autoClose: false });
    try {
      return await importStream(store, stream, { maxBytes, label: meta.label, type: meta.type, path: real, mtimeMs: opened.mtimeMs });
    } catch (err) {
      // The file may grow after fstat, so the ceiling is enforced again while streaming.
      if (isHelixError(err) && err.code === 'I-REQ-TOO-LARGE') throw tooLarge(real, null, maxBytes);
      // Only a failed read of the file is the file's fault; store errors pass through as they are.
      if (isHelixError(err) || (err as NodeJS.ErrnoException).syscall === undefined) throw err;
      throw pathError(
        'import',
        real,
        `reading it failed: ${describeFsError(err)}`,
        'Check the file and the device it is on, then retry.',
        err,
      );
    } finally {
      stream.destroy();
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** What importStream records of the file a stream reads. */
export interface StreamImport extends ArtifactMeta {
  readonly maxBytes: number;
  /** The file's real path and modification time: the artifact's `import` source. */
  readonly path: string;
  readonly mtimeMs: number;
}

/**
 * Stores the bytes of an opened, already checked file as an artifact (source `import`), visible
 * in one transaction at the end; I-REQ-TOO-LARGE past maxBytes. Chunks stored before a failure
 * are left to `helix gc` (writeChunks ended their pending write, ABI-STORE-050).
 */
export async function importStream(store: Store, source: AsyncIterable<Uint8Array>, meta: StreamImport): Promise<ArtifactRecord> {
  const prepared = await prepareArtifact(store, source, {
    maxBytes: meta.maxBytes,
    // A read stream hands out a new buffer for every read.
    ownedPieces: true,
    label: meta.label,
    type: meta.type,
    source: { kind: 'import', path: meta.path, mtime_ms: meta.mtimeMs },
  });
  try {
    return await store.transaction(() => commitArtifact(store, prepared));
  } catch (err) {
    // Nothing became visible; release the chunks to gc instead of holding them until exit.
    await store.transaction(() => discardBlob(store, prepared.blob)).catch(() => undefined);
    throw err;
  }
}
