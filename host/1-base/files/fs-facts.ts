// Two facts every file boundary of the host needs: whether a path lies strictly inside a
// directory, and what a file that is not a regular file is, in words for a message.
import type { Stats } from 'node:fs';
import path from 'node:path';

/** Whether `child` is strictly inside directory `root` (both absolute and normalised). */
export function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/** What a non-regular file is, for messages. */
export function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}
