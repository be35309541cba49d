// Reads the files a toolpack names (schemas, module, fixtures) so that only what belongs to the
// toolpack is ever read: inside its directory after resolving symlinks, regular files only, and
// never more than a bound. A refusal says why without a byte of the file it refused.
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { isInside, kindOf } from './fs-facts.js';

/** A file read in full, or why it was not. Reasons never quote the file's content. */
export type FileRead = { ok: true; file: string; bytes: Buffer } | { ok: false; reason: string };

/** A path resolved inside a toolpack, or why it is not. */
export type Resolved = { ok: true; file: string } | { ok: false; reason: string };

// O_NOFOLLOW: a final symlink swapped in after the check fails to open instead of being followed.
// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** The real path of a directory (symlinks resolved), so containment compares like with like. */
export function realDir(dir: string): string {
  return realpathSync(path.resolve(dir));
}

/**
 * Resolves `ref` (as a manifest or schema wrote it) against `fromDir` and checks that it stays
 * inside `packDir` (a real path) before and after symlinks are resolved (ABI-FILE-001, -002).
 */
export function resolveInPack(ref: string, fromDir: string, packDir: string): Resolved {
  if (path.isAbsolute(ref))
    return { ok: false, reason: 'is an absolute path: name a file inside the toolpack, relative to the file that names it (ABI-FILE-001)' };
  const lexical = path.resolve(fromDir, ref);
  if (!isInside(lexical, packDir)) return { ok: false, reason: `leaves the toolpack directory ${shown(packDir)} (ABI-FILE-001)` };
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch (err) {
    // realpath reads each link it finds on the way: EINVAL is a link that was no longer a link
    // when read, a file swapped while the path was being resolved.
    if ((err as NodeJS.ErrnoException).code === 'EINVAL')
      return { ok: false, reason: 'was swapped while its path was being resolved, so it was not read (ABI-FILE-004)' };
    return { ok: false, reason: fsReason(err) };
  }
  if (!isInside(real, packDir))
    return {
      ok: false,
      reason: `resolves through a symbolic link to a place outside the toolpack directory ${shown(packDir)} (ABI-FILE-002)`,
    };
  return { ok: true, file: real };
}

/** resolveInPack, then readRegularFile within `packDir`. */
export function readPackFile(ref: string, fromDir: string, packDir: string, maxBytes: number): FileRead {
  const resolved = resolveInPack(ref, fromDir, packDir);
  return resolved.ok ? readRegularFile(resolved.file, maxBytes, packDir) : resolved;
}

/**
 * Reads `file` if it is a regular file of at most `maxBytes` (ABI-FILE-003, -004, -005). The
 * type and size are checked before reading, then again on the opened descriptor, and with
 * `inside` the opened file must still lie inside that directory, so a swap between the check
 * and the read does not help.
 */
export function readRegularFile(file: string, maxBytes: number, inside?: string): FileRead {
  let st: Stats;
  try {
    st = statSync(file);
  } catch (err) {
    return { ok: false, reason: fsReason(err) };
  }
  const before = typeProblem(st, maxBytes);
  if (before !== undefined) return { ok: false, reason: before };
  let fd: number;
  try {
    // Outside a toolpack (the operator's policy) a symlink is the operator's choice: follow it.
    fd = openSync(file, inside === undefined ? OPEN_FLAGS & ~(constants.O_NOFOLLOW ?? 0) : OPEN_FLAGS);
  } catch (err) {
    return {
      ok: false,
      reason:
        (err as NodeJS.ErrnoException).code === 'ELOOP'
          ? 'was replaced by a symbolic link while it was being read (ABI-FILE-004)'
          : fsReason(err),
    };
  }
  try {
    const opened = fstatSync(fd);
    const after = typeProblem(opened, maxBytes);
    if (after !== undefined) return { ok: false, reason: after };
    if (inside !== undefined && !openedInside(fd, file, opened, inside))
      return { ok: false, reason: `was moved outside the toolpack directory ${shown(inside)} while it was being read (ABI-FILE-004)` };
    // Read at most one byte past the bound, so a file growing after fstat is caught too.
    const buffer = Buffer.alloc(Math.min(opened.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes) return { ok: false, reason: `grew past the bound of ${maxBytes} bytes while it was being read (ABI-FILE-004)` };
    return { ok: true, file, bytes: buffer.subarray(0, length) };
  } catch (err) {
    return { ok: false, reason: fsReason(err) };
  } finally {
    closeSync(fd);
  }
}

/** Why a stat result is not a regular file within the bound, or undefined. */
function typeProblem(st: Stats, maxBytes: number): string | undefined {
  if (!st.isFile()) return `is ${kindOf(st)}, not a regular file (ABI-FILE-003)`;
  if (st.size > maxBytes) return `is ${st.size} bytes, more than the bound of ${maxBytes} bytes (ABI-FILE-005)`;
  return undefined;
}

// Where the descriptor really points: /proc names the opened file on Linux; elsewhere the path
// is resolved again and must still be the very file that was opened.
function openedInside(fd: number, file: string, opened: Stats, dir: string): boolean {
  try {
    return isInside(readlinkSync(`/proc/self/fd/${fd}`), dir);
  } catch {
    try {
      const again = realpathSync(file);
      const st = statSync(again);
      return isInside(again, dir) && st.ino === opened.ino && st.dev === opened.dev;
    } catch {
      return false;
    }
  }
}

/** An fs error as a reason: the errno name and what it means, never the file's content. */
function fsReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'ENOTDIR') return 'does not exist (a part of its path is not a directory)';
  if (code === 'EACCES' || code === 'EPERM') return `cannot be read: permission denied (${code})`;
  if (code === 'ELOOP') return 'cannot be resolved: too many levels of symbolic links (ELOOP)';
  return `cannot be read (${code ?? (err as Error).message})`;
}

/** A path for messages: relative to the working directory where that is shorter. */
export function shown(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}
