// The source stamp `helix build` writes beside a module (`build/<name>.sources.json`): a hash of
// every build input of the pack, so `helix test`, `helix call` and `helix serve` can tell that
// the sources changed since the module was built (a stale module) and name `helix build`.
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { sha256Digest } from '../../1-base/hashing.js';
import type { LoadedTool } from '../../5-host/toolpacks.js';
import { shown } from '../../1-base/files/pack-files.js';

/** The format of the stamp file; a stamp of another version is treated as no stamp. */
export const STAMP_VERSION = 1;

/** Most bytes of sources hashed for one pack: past them the check gives up (every call pays for it). */
const SOURCES_MAX_BYTES = 64 * 1024 * 1024;
/** Most bytes of a stamp file read. */
const STAMP_MAX_BYTES = 4 * 1024 * 1024;

/** What a stamp file holds. `sdk` is informational: it is not part of `sources_digest`. */
export interface SourceStamp {
  readonly stamp: typeof STAMP_VERSION;
  /** The module, relative to the pack. */
  readonly module: string;
  readonly module_digest: string;
  /** sha256 over the sorted `path NUL digest LF` lines of `files`. */
  readonly sources_digest: string;
  readonly language: 'assemblyscript' | 'c';
  readonly sdk: string;
  /** Every build input, relative to the pack with `/` separators, and its sha256. */
  readonly files: Readonly<Record<string, string>>;
}

/** Whether a pack's module was built from its current sources. */
export type Freshness =
  | { readonly state: 'fresh' }
  | { readonly state: 'stale'; readonly changed: string[]; readonly appeared: string[]; readonly disappeared: string[] }
  /** No stamp, an unreadable one, or one written for another module: nothing can be said. */
  | { readonly state: 'unknown'; readonly reason: string };

/** How a stamp's file name ends. */
export const STAMP_SUFFIX = '.sources.json';

/** The stamp's path for a module: `build/x.wasm` has `build/x.sources.json`. */
export function stampPath(modulePath: string): string {
  return path.join(path.dirname(modulePath), `${path.basename(modulePath, path.extname(modulePath))}${STAMP_SUFFIX}`);
}

/**
 * The build inputs of the pack in `packDir` and their digests, sorted by path. AssemblyScript
 * (an asconfig.json): the config, a local file it `extends`, its `entries` and every file under
 * assembly/. C: every file under src/. Only files inside the pack are read; hidden files and
 * editor backups (`.x.swp`, `x~`) are not inputs. The SDK is not one (see the GUIDE's
 * "Stale builds"): upgrading Helix must not make every author's module stale.
 */
export function collectSourceInputs(packDir: string): {
  language: SourceStamp['language'];
  files: Record<string, string>;
  incomplete?: true;
} {
  const found = new Set<string>();
  const asconfig = path.join(packDir, 'asconfig.json');
  const isAs = isFile(asconfig);
  if (isAs) {
    found.add('asconfig.json');
    for (const named of asconfigFiles(asconfig)) {
      const relative = toPackPath(packDir, path.resolve(packDir, named));
      if (relative === undefined) continue;
      if (isFile(path.join(packDir, relative))) found.add(relative);
      else walk(packDir, relative, found);
    }
    walk(packDir, 'assembly', found);
  } else {
    walk(packDir, 'src', found);
  }
  const files: Record<string, string> = {};
  const language = isAs ? 'assemblyscript' : 'c';
  let bytes = 0;
  for (const relative of [...found].sort()) {
    try {
      const content = readFileSync(path.join(packDir, relative));
      bytes += content.length;
      if (bytes > SOURCES_MAX_BYTES) return { language, files, incomplete: true };
      files[relative] = sha256Digest(content);
    } catch {
      // A file that vanished between the listing and the read is simply not an input.
    }
  }
  return { language, files };
}

/** The digest over a file map, independent of how the map was built. */
export function sourcesDigest(files: Readonly<Record<string, string>>): string {
  return sha256Digest(
    Object.keys(files)
      .sort()
      .map((file) => `${file}\0${files[file]}\n`)
      .join(''),
  );
}

/** The stamp's text for a pack and its just-built module, stable for unchanged inputs. */
export function stampText(
  packDir: string,
  modulePath: string,
  moduleDigest: string,
  inputs: ReturnType<typeof collectSourceInputs>,
  sdk: string,
): string {
  const stamp: SourceStamp = {
    stamp: STAMP_VERSION,
    module: toPackPath(packDir, modulePath) ?? path.basename(modulePath),
    module_digest: moduleDigest,
    sources_digest: sourcesDigest(inputs.files),
    language: inputs.language,
    sdk,
    files: inputs.files,
  };
  return `${JSON.stringify(stamp, null, 2)}\n`;
}

/**
 * Whether the module of a pack (a loaded tool, or a pack directory and its module) was built from
 * the sources now in the pack: which inputs changed, appeared or disappeared since the build that
 * wrote its stamp, or `unknown` when there is no stamp for this module.
 */
export function checkSourcesFresh(target: LoadedTool | { packDir: string; modulePath: string }): Freshness {
  const loaded = 'manifestPath' in target ? target : undefined;
  const { packDir, modulePath } =
    loaded === undefined
      ? (target as { packDir: string; modulePath: string })
      : { packDir: path.dirname(loaded.manifestPath), modulePath: loaded.modulePath };
  let stamp: SourceStamp;
  try {
    if (statSync(stampPath(modulePath)).size > STAMP_MAX_BYTES)
      return { state: 'unknown', reason: `${path.basename(stampPath(modulePath))} is too large` };
    stamp = JSON.parse(readFileSync(stampPath(modulePath), 'utf8')) as SourceStamp;
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      state: 'unknown',
      reason: missing ? `no ${path.basename(stampPath(modulePath))}` : `${path.basename(stampPath(modulePath))} is unreadable`,
    };
  }
  if (stamp?.stamp !== STAMP_VERSION || typeof stamp.files !== 'object' || stamp.files === null)
    return { state: 'unknown', reason: 'the stamp has another format' };
  let bytes: Buffer;
  try {
    bytes = loaded === undefined ? readFileSync(modulePath) : Buffer.from(loaded.module.bytes);
  } catch {
    return { state: 'unknown', reason: 'the module cannot be read' };
  }
  // A module put there by something other than the build that wrote the stamp: the stamp says nothing about it.
  if (sha256Digest(bytes) !== stamp.module_digest) return { state: 'unknown', reason: 'the stamp was written for another module' };
  const current = collectSourceInputs(packDir);
  if (current.incomplete) return { state: 'unknown', reason: `the sources are over ${SOURCES_MAX_BYTES} bytes` };
  const now = current.files;
  if (sourcesDigest(now) === stamp.sources_digest) return { state: 'fresh' };
  const before = stamp.files;
  const changed = Object.keys(now).filter((file) => Object.hasOwn(before, file) && before[file] !== now[file]);
  const appeared = Object.keys(now).filter((file) => !Object.hasOwn(before, file));
  const disappeared = Object.keys(before)
    .filter((file) => !Object.hasOwn(now, file))
    .sort();
  return { state: 'stale', changed, appeared, disappeared };
}

/**
 * One line for a stale pack: what changed and the command that fixes it, e.g.
 * `stale: plugins/x: assembly/index.ts changed since the last build; run `helix build plugins/x``.
 */
export function staleLine(packDir: string, freshness: Extract<Freshness, { state: 'stale' }>): string {
  const dir = shown(packDir);
  const name = dir === '.' ? path.basename(path.resolve(packDir)) : dir;
  const parts = [
    listed(freshness.changed, 'changed'),
    listed(freshness.appeared, 'appeared'),
    listed(freshness.disappeared, 'disappeared'),
  ].filter((part) => part !== '');
  const what = parts.length > 0 ? parts.join(', ') : 'the sources changed';
  return `stale: ${name}: ${what} since the last build; run \`helix build${dir === '.' ? '' : ` ${dir}`}\``;
}

/** The stale line for a loaded tool, or undefined when its module is fresh or has no stamp. */
export function staleBuild(tool: LoadedTool): string | undefined {
  const freshness = checkSourcesFresh(tool);
  return freshness.state === 'stale' ? staleLine(path.dirname(tool.manifestPath), freshness) : undefined;
}

// At most three names, then a count: the line stays one line.
function listed(files: readonly string[], verb: string): string {
  if (files.length === 0) return '';
  const names = files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`;
  return `${names} ${verb}`;
}

// The files an asconfig.json names besides assembly/: its entries and a local `extends`.
function asconfigFiles(file: string): string[] {
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  if (typeof config !== 'object' || config === null) return [];
  const { entries, extends: base } = config as { entries?: unknown; extends?: unknown };
  const named = Array.isArray(entries) ? entries.filter((entry): entry is string => typeof entry === 'string') : [];
  // `extends` naming a package (the SDK's config) is not the author's source.
  if (typeof base === 'string' && (base.startsWith('.') || base.startsWith('/'))) named.push(base);
  return named;
}

function walk(packDir: string, relative: string, found: Set<string>): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(path.join(packDir, relative), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name.endsWith('~')) continue;
    const child = `${relative}/${entry.name}`;
    // Directory symlinks are not followed, so a link cycle cannot loop the walk.
    if (entry.isDirectory()) walk(packDir, child, found);
    else if (entry.isFile() || (entry.isSymbolicLink() && isFile(path.join(packDir, child)))) found.add(child);
  }
}

// The path of `file` relative to the pack with `/` separators, or undefined outside the pack.
function toPackPath(packDir: string, file: string): string | undefined {
  const relative = path.relative(packDir, file);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return relative.split(path.sep).join('/');
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
