// What `build:wasm --changed` compares to tell a pack whose module is current from one to build:
// the pack's own build inputs and manifest, and what every build reads besides them (the guest
// SDKs, the toolchain's code, the compilers' versions), as recorded after its last build here.
import { execFileSync } from 'node:child_process';
import { type Dirent, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { sha256Digest } from '../host/1-base/hashing.js';
import { packageRoot } from '../host/1-base/paths.js';
import { CLANG_ENV } from '../host/6-faces/toolchain/compile-c.js';
import { moduleDigest } from '../host/6-faces/toolchain/manifest-digest.js';
import { collectSourceInputs, sourcesDigest } from '../host/6-faces/toolchain/source-stamp.js';

/** What was built for one pack: the digest of its inputs, and of the module those inputs gave. */
interface Built {
  readonly inputs: string;
  readonly module: string;
}

/** The record of the builds made with --changed, kept in the root's dist/ (never in git, gone with a fresh clone). */
export class BuildRecord {
  private readonly packs: Record<string, Built>;

  private constructor(
    private readonly file: string,
    packs: Record<string, Built>,
  ) {
    this.packs = packs;
  }

  /** The record under `root`; none yet, or one this version cannot read, is an empty record. */
  static open(root: string): BuildRecord {
    const file = path.join(root, 'dist', '.build-wasm.json');
    try {
      const data = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown; packs?: Record<string, Built> };
      if (data.version === 1 && typeof data.packs === 'object' && data.packs !== null) return new BuildRecord(file, data.packs);
    } catch {
      // No record: every pack is built once.
    }
    return new BuildRecord(file, {});
  }

  /** Whether the module at `modulePath` is the one the last build made from exactly these inputs, and the manifest pins it. */
  isCurrent(name: string, inputs: string | undefined, modulePath: string, manifestDigest: string | null): boolean {
    const built = this.packs[name];
    if (built === undefined || inputs === undefined || built.inputs !== inputs || built.module !== manifestDigest) return false;
    try {
      return moduleDigest(readFileSync(modulePath)) === built.module;
    } catch {
      return false;
    }
  }

  /** Notes a build of `name`; `inputs` undefined (sources past the stamp's bound) forgets it instead. */
  note(name: string, inputs: string | undefined, module: string): void {
    if (inputs === undefined) delete this.packs[name];
    else this.packs[name] = { inputs, module };
  }

  /** Writes the record, unless it is already what the file holds: a build with nothing to do changes nothing in dist/. */
  save(): void {
    const text = `${JSON.stringify({ version: 1, packs: this.packs }, null, 2)}\n`;
    if (existsSync(this.file) && readFileSync(this.file, 'utf8') === text) return;
    mkdirSync(path.dirname(this.file), { recursive: true });
    writeFileSync(this.file, text);
  }
}

/**
 * The digest of everything a pack's build reads: its sources as its source stamp counts them
 * (source-stamp.ts), its manifest, and `shared`; undefined when the sources are past the stamp's bound.
 */
export function packInputs(packDir: string, manifestPath: string, shared: string): string | undefined {
  const sources = collectSourceInputs(packDir);
  if (sources.incomplete) return undefined;
  return sha256Digest(`${sourcesDigest(sources.files)}\n${sha256Digest(readFileSync(manifestPath))}\n${shared}\n`);
}

/**
 * The digest of what every build reads besides the pack: the guest SDKs as Helix ships them
 * (which a pack's source stamp leaves out on purpose), the toolchain's compiled code, and the
 * versions of asc, the Extism PDK and clang.
 */
export function sharedInputs(): string {
  const root = packageRoot();
  const files = [
    ...filesUnder(path.join(root, 'sdk-guest', 'assemblyscript')),
    ...filesUnder(path.join(root, 'sdk-guest', 'c')),
    ...filesUnder(path.join(root, 'dist', 'host', '6-faces', 'toolchain')),
  ];
  const lines = files.map((file) => `${path.relative(root, file)}\0${sha256Digest(readFileSync(file))}`);
  const require = createRequire(path.join(root, 'package.json'));
  for (const pkg of ['assemblyscript', '@extism/as-pdk']) {
    try {
      lines.push(`${pkg}\0${(JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version?: string }).version}`);
    } catch {
      lines.push(`${pkg}\0none`);
    }
  }
  lines.push(`clang\0${clangVersion()}`);
  return sha256Digest(lines.join('\n'));
}

/** The files under `dir`, sorted, without tests, installed packages, build output or hidden files. */
function filesUnder(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => !e.name.startsWith('.') && !['node_modules', 'test', 'build'].includes(e.name))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : e.isFile() ? [path.join(dir, e.name)] : []));
}

/** The first line of `clang --version` for the clang a C build would run, or `none`. */
function clangVersion(): string {
  try {
    const text = execFileSync(process.env[CLANG_ENV] || 'clang', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return text.split('\n')[0] ?? '';
  } catch {
    return 'none';
  }
}
