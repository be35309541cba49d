// The walk of a toolpacks directory for `*.tool.yaml` manifests (ABI-FILE-010). It never follows a
// symbolic link, so it cannot loop or leave the directory; it opens nothing, and what it cannot
// search or will not read is a violation rather than a silent gap.
import { readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { PLUGINS_WALK_MAX_DEPTH } from '../../../abi/index.js';
import { shown } from '../../1-base/files/pack-files.js';
import type { Violation } from '../../1-base/files/violation.js';

/** The name every manifest ends with. */
export const MANIFEST_SUFFIX = '.tool.yaml';

// Dependency and build folders never hold manifests of their own; hidden folders are skipped too.
const SKIP_DIRS = new Set(['node_modules', '.git', 'build', 'dist']);

/** Manifest files found under a directory, sorted, and what the walk refused. */
export interface ManifestSearch {
  readonly manifests: string[];
  readonly violations: Violation[];
}

/**
 * Walks `dir` for manifest files. Directories are entered only when they are real directories
 * (not links) at most PLUGINS_WALK_MAX_DEPTH levels down; a `*.tool.yaml` entry must be a regular
 * file. Other links, FIFOs, sockets and devices are passed over without being opened.
 */
export function searchManifests(dir: string): ManifestSearch {
  const manifests: string[] = [];
  const violations: Violation[] = [];
  const pending: Array<{ dir: string; depth: number }> = [{ dir, depth: 0 }];
  while (pending.length > 0) {
    const { dir: d, depth } = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (err) {
      violations.push({
        file: shown(d),
        field: '-',
        reason: `this directory cannot be searched for manifests (${(err as NodeJS.ErrnoException).code ?? 'error'}) (ABI-FILE-010)`,
      });
      continue;
    }
    const subdirs: string[] = [];
    for (const entry of entries) {
      const full = path.join(d, entry.name);
      if (entry.name.endsWith(MANIFEST_SUFFIX)) {
        if (entry.isFile()) manifests.push(full);
        else
          violations.push({
            file: shown(full),
            field: '-',
            reason: `a manifest must be a regular file, and this is ${entryKind(entry)}: the loader does not follow links or read special files (ABI-FILE-010)`,
          });
      } else if (entry.isDirectory() && !SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) {
        subdirs.push(full);
      }
    }
    if (subdirs.length > 0 && depth >= PLUGINS_WALK_MAX_DEPTH) {
      violations.push({
        file: shown(d),
        field: '-',
        reason: `directories nested more than ${PLUGINS_WALK_MAX_DEPTH} levels below the toolpacks directory are not searched (ABI-FILE-010)`,
      });
      continue;
    }
    for (const sub of subdirs) pending.push({ dir: sub, depth: depth + 1 });
  }
  return { manifests: manifests.sort((a, b) => a.localeCompare(b)), violations: violations.sort((a, b) => a.file.localeCompare(b.file)) };
}

/** Finds manifest files under `dir`, sorted, skipping dependency and build folders (see searchManifests). */
export function findManifests(dir: string): string[] {
  return searchManifests(dir).manifests;
}

function entryKind(entry: Dirent): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isDirectory()) return 'a directory';
  if (entry.isFIFO()) return 'a FIFO (named pipe)';
  if (entry.isSocket()) return 'a socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'a device';
  return 'not a regular file';
}
