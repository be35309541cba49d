// The export boundary: an artifact's bytes go to a new file inside the policy's export roots,
// written to a temporary file beside it, hash-checked while streaming, synced, then renamed
// into place, so the destination is either absent or complete and verified, never partial.
import { createHash, randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { link, lstat, open, realpath, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Policy } from '../../../abi/index.js';
import { HelixError, isHelixError } from '../../../abi/index.js';
import { readBlob } from '../../3-store/blobs.js';
import type { Store } from '../../3-store/open-store.js';
import { kindOf } from '../../1-base/files/fs-facts.js';
import { describeFsError, insideRoots, outsideRoots, pathError, resolveRoots, symlinkRefused } from './path-boundary.js';
import { getArtifact } from './query.js';

/** Options of exportArtifact. */
export interface ExportOptions {
  /** Replace an existing regular file at the destination (never a link or a directory). */
  readonly overwrite?: boolean;
}

const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** The real destination after the boundary checks: inside a root, its directory real, not a link. */
async function checkDestination(policy: Policy, destPath: string, overwrite: boolean): Promise<string> {
  if (typeof destPath !== 'string' || destPath === '')
    throw pathError('export', String(destPath), 'the path is empty', 'Pass the path of the file to create.');
  const abs = path.resolve(destPath);
  if (/[/\\]$/.test(destPath)) throw pathError('export', abs, 'the path names a directory', 'Pass a file path, e.g. out/reads.fastq.gz.');
  const roots = await resolveRoots(policy.paths.exportRoots);
  if (!insideRoots(abs, roots, 'given-or-real')) throw outsideRoots('export', abs, roots);
  const parent = path.dirname(abs);
  let realParent: string;
  try {
    realParent = await realpath(parent);
    if (!(await stat(realParent)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (err) {
    throw pathError(
      'export',
      abs,
      `its directory ${parent} cannot be used: ${describeFsError(err)}`,
      'Export into an existing directory.',
      err,
    );
  }
  const dest = path.join(realParent, path.basename(abs));
  if (!insideRoots(dest, roots, 'real')) throw outsideRoots('export', abs, roots, dest);
  let existing: Stats;
  try {
    existing = await lstat(dest);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return dest;
    throw pathError('export', dest, describeFsError(err), undefined, err);
  }
  if (existing.isSymbolicLink()) throw symlinkRefused('export', dest);
  if (!existing.isFile())
    throw pathError('export', dest, `it exists and is ${kindOf(existing)}`, 'Choose a file path that is not a directory or a device.');
  if (!overwrite) {
    throw pathError('export', dest, 'the file already exists', 'Pass --overwrite (overwrite: true) to replace it, or choose a new name.');
  }
  return dest;
}

/** Writes all of `bytes` (a write may take only part of it). */
async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

/** Puts the finished temp file at `dest`: never clobbering unless `overwrite`, atomically either way. */
async function publish(temp: string, dest: string, overwrite: boolean): Promise<void> {
  if (overwrite) {
    // rename replaces a link or file at dest without following it, in one step.
    await rename(temp, dest);
    return;
  }
  try {
    // link fails if anything appeared at dest since the check, so nothing is ever clobbered.
    await link(temp, dest);
    await unlink(temp);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw pathError('export', dest, 'the file already exists', 'Pass --overwrite (overwrite: true) to replace it, or choose a new name.');
    // Some file systems have no hard links; fall back to a checked rename.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw err;
    const taken = await lstat(dest).then(
      () => true,
      () => false,
    );
    if (taken)
      throw pathError('export', dest, 'the file already exists', 'Pass --overwrite (overwrite: true) to replace it, or choose a new name.');
    await rename(temp, dest);
  }
}

/**
 * Exports an artifact's bytes to `destPath`, inside the policy's export roots (checked on the
 * real path of its directory). The destination must not exist unless `overwrite`, and is never
 * a symbolic link. D-DATA-CHECKSUM when the stored bytes do not match their hash; then, as on
 * any failure, no destination file is created and the temporary file is removed.
 */
export async function exportArtifact(
  store: Store,
  policy: Policy,
  id: string,
  destPath: string,
  opts: ExportOptions = {},
): Promise<{ path: string; bytes: number }> {
  const record = getArtifact(store, id);
  const overwrite = opts.overwrite === true;
  const dest = await checkDestination(policy, destPath, overwrite);
  const temp = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomBytes(6).toString('hex')}.helix-tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, TEMP_FLAGS, 0o644);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const piece of readBlob(store, record.sha256)) {
      hash.update(piece);
      bytes += piece.length;
      await writeAll(handle, piece);
    }
    // readBlob checks every chunk and the whole blob; this checks the blob is the record's.
    const digest = hash.digest('hex');
    if (digest !== record.sha256 || bytes !== record.size) {
      throw new HelixError('D-DATA-CHECKSUM', {
        message: `The bytes of artifact ${id} do not match its record (sha256 ${digest}, ${bytes} bytes; expected ${record.sha256}, ${record.size} bytes).`,
        details: { id, sha256: record.sha256, actual_sha256: digest, size: record.size, actual_size: bytes },
      });
    }
    await handle.sync();
    await handle.close();
    handle = undefined;
    await publish(temp, dest, overwrite);
    await syncDirectory(path.dirname(dest));
    return { path: dest, bytes };
  } catch (err) {
    await handle?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    if (isHelixError(err) || (err as NodeJS.ErrnoException).syscall === undefined) throw err;
    throw pathError(
      'export',
      dest,
      `writing failed: ${describeFsError(err)}`,
      'Check that the directory is writable and has space, then retry.',
      err,
    );
  }
}

/** Makes the rename durable; best effort, as some platforms cannot fsync a directory. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY).catch(() => undefined);
  if (handle === undefined) return;
  await handle.sync().catch(() => undefined);
  await handle.close().catch(() => undefined);
}
