// Watching a pack's files for `helix dev`: one non-recursive node:fs watcher per directory, the
// set re-listed after every event so new folders are watched too (the same on every platform
// Node runs on), and a fingerprint of the files (size and modification time) to tell a real
// change from an event about nothing, or about what the build itself wrote.
import { type Dirent, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/** Size and mtime of every watched file, by path relative to the root. */
export type Fingerprint = Map<string, string>;

// Dependencies, version control and stores (.helix) change without the pack changing.
const SKIPPED = new Set(['node_modules', 'dist']);
const skipped = (name: string): boolean => name.startsWith('.') || SKIPPED.has(name);

/** The directories under `root` that are watched, root first. */
function directories(root: string): string[] {
  const dirs = [root];
  for (let i = 0; i < dirs.length; i++) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dirs[i]!, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) if (e.isDirectory() && !skipped(e.name)) dirs.push(path.join(dirs[i]!, e.name));
  }
  return dirs;
}

/** The fingerprint of every file under `root` (symbolic links are not followed). */
export function fingerprint(root: string): Fingerprint {
  const prints: Fingerprint = new Map();
  for (const dir of directories(root)) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (!e.isFile() || skipped(e.name)) continue;
      const file = path.join(dir, e.name);
      try {
        const s = statSync(file);
        prints.set(path.relative(root, file), `${s.size}:${s.mtimeMs}`);
      } catch {
        // Removed between the listing and the stat: absent, as it is now.
      }
    }
  }
  return prints;
}

/** The files added, removed or changed between two fingerprints, in name order. */
export function changedFiles(before: Fingerprint, after: Fingerprint): string[] {
  const changed = new Set<string>();
  for (const [file, print] of after) if (before.get(file) !== print) changed.add(file);
  for (const file of before.keys()) if (!after.has(file)) changed.add(file);
  return [...changed].sort();
}

/** Calls `onEvent` on every change under `root` until closed. */
export function watchTree(root: string, onEvent: () => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  const sync = (): void => {
    if (closed) return;
    const dirs = new Set(directories(root));
    for (const [dir, w] of watchers) {
      if (dirs.has(dir)) continue;
      w.close();
      watchers.delete(dir);
    }
    for (const dir of dirs) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: true }, () => {
          sync();
          onEvent();
        });
        // A directory removed while watched ends its watcher; the next sync forgets it.
        w.on('error', () => {
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch {
        // Gone before it could be watched.
      }
    }
  };
  sync();
  return {
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
