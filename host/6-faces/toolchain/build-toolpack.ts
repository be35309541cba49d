// Builds toolpacks: compiles a pack's AssemblyScript with asc's programmatic API (no child
// process) or its C sources with clang (compile-c.ts), checks the module against the manifest's
// ABI and pins its sha256 digest.

import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_MAX_BYTES } from '../../../abi/index.js';
import { parse as parseYaml } from 'yaml';
import { readRegularFile, realDir, resolveInPack } from '../../1-base/files/pack-files.js';
import { isContainerDocument } from '../../5-host/toolpacks.js';
import { loadAsc, type AscOutputStream } from './asc-api.js';
import { checkModule } from './check-module.js';
import { C_SOURCE_DIR, CCompileError, compileC, findCSources } from './compile-c.js';
import { moduleDigest, readManifestFields, withDigest } from './manifest-digest.js';
import { bundledSdkModulesDir, sdkAwareReadFile, sdkName } from './sdk-path.js';
import { collectSourceInputs, stampPath, stampText } from './source-stamp.js';

/** What one build produced (besides the module: its source stamp, source-stamp.ts). */
export interface BuildToolpackResult {
  /** Absolute path of the `*.tool.yaml` manifest. */
  manifestPath: string;
  /** Absolute path of the compiled module. */
  modulePath: string;
  /** `sha256:<hex>` of the module bytes, now written in the manifest. */
  digest: string;
  /** True when the manifest's digest was rewritten. */
  changed: boolean;
  /**
   * What the compiler printed for this build, which succeeded: its warnings (asc's WARNING
   * diagnostics, clang's and wasm-ld's warnings), empty when there were none.
   */
  warnings: string;
}

/** A toolpack that could not be built; `message` says what and, where known, how to fix it. */
export class ToolpackBuildError extends Error {
  override readonly name = 'ToolpackBuildError';

  constructor(
    message: string,
    /** The toolpack directory. */
    readonly dir: string,
    /** The compiler's diagnostics, when the failure was a compile error. */
    readonly diagnostics: string = '',
    /** `cause`: the compiler's own error (a CCompileError tells a missing toolchain apart). */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The name every toolpack manifest ends with. */
export const MANIFEST_SUFFIX = '.tool.yaml';

// Directories never searched for toolpacks: outputs, dependencies, and hidden folders.
const SKIPPED_DIRS = new Set(['node_modules', 'build', 'dist']);

/**
 * Builds the toolpack in `dir`: one `*.tool.yaml` manifest and an `asconfig.json` whose
 * `outFile` is the manifest's `module`. Writes the module (only when its bytes changed) and the
 * digest (only when it changed). Throws ToolpackBuildError with the compiler's message on failure.
 */
export async function buildToolpack(dir: string): Promise<BuildToolpackResult> {
  const packDir = path.resolve(dir);
  const manifestPath = await findManifest(packDir);
  // Read as the loader reads it: a regular file of the pack within the manifest bound (ABI-FILE-012).
  const read = readRegularFile(manifestPath, MANIFEST_MAX_BYTES, realDir(packDir));
  if (!read.ok) throw new ToolpackBuildError(`${manifestPath}: the manifest ${read.reason}`, packDir);
  const manifestText = read.bytes.toString('utf8');
  const manifest = wrap(packDir, () => readManifestFields(manifestText, manifestPath));
  const modulePath = path.resolve(path.dirname(manifestPath), manifest.module);
  // The build writes the module there: never outside the toolpack.
  const inPack = resolveInPack(manifest.module, realDir(packDir), realDir(packDir));
  if (!inPack.ok && inPack.reason !== 'does not exist')
    throw new ToolpackBuildError(`${manifestPath}: module ${manifest.module} ${inPack.reason}`, packDir);
  // Without its config asc prints its usage and succeeds, so check first. A pack without one
  // is a C pack when it has sources in src/.
  const configExists = await readFile(path.join(packDir, 'asconfig.json')).then(
    () => true,
    () => false,
  );
  const cSources = configExists ? [] : await findCSources(packDir);
  if (!configExists && cSources.length === 0) {
    throw new ToolpackBuildError(
      `${packDir}: nothing to build: no asconfig.json (AssemblyScript: entries, outFile, options) and no ${C_SOURCE_DIR}/*.c (C with sdk-guest/c/helix.h)`,
      packDir,
    );
  }

  // Hashed before compiling: an edit made while the compiler runs then shows as stale, never hidden.
  const inputs = collectSourceInputs(packDir);
  const compiled = configExists ? await compile(packDir) : await compileCPack(packDir, cSources, modulePath);
  const outputs = compiled.outputs;
  const bytes = outputs.get(modulePath);
  if (!bytes) {
    const written = [...outputs.keys()].map((file) => path.relative(packDir, file)).join(', ') || 'nothing';
    throw new ToolpackBuildError(
      `${packDir}: asconfig.json must set outFile to the manifest's module (${manifest.module}); the compiler wrote ${written}`,
      packDir,
    );
  }
  const problems = checkModule(bytes, manifest).map((problem) =>
    configExists
      ? problem
      : problem.replace(
          're-export it from @helix/sdk-as',
          'define HELIX_IMPLEMENTATION in one .c file and name the handler with HELIX_TOOL(handler)',
        ),
  );
  if (problems.length > 0) throw new ToolpackBuildError(`${modulePath}: ${problems.join('; ')}`, packDir);

  for (const [file, contents] of outputs) await writeIfDifferent(file, contents);
  const digest = moduleDigest(bytes);
  await writeIfDifferent(
    stampPath(modulePath),
    new TextEncoder().encode(stampText(packDir, modulePath, digest, inputs, sdkName(packDir, configExists))),
  );
  const updated = wrap(packDir, () => withDigest(manifestText, digest, manifestPath));
  if (updated.changed) await writeFile(manifestPath, updated.text);
  return { manifestPath, modulePath, digest, changed: updated.changed, warnings: compiled.diagnostics };
}

/**
 * Every directory under `root` holding a `*.tool.yaml` manifest of a module to build, sorted; packs
 * are not searched inside. A container toolpack (`kind: container`) has nothing to build.
 */
export async function findToolpackDirs(root: string): Promise<string[]> {
  const found: string[] = [];
  async function visit(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    const manifests = entries.filter((entry) => entry.isFile() && entry.name.endsWith(MANIFEST_SUFFIX));
    if (manifests.length > 0) {
      const containers = await Promise.all(manifests.map((m) => isContainerManifest(path.join(dir, m.name))));
      if (!containers.every(Boolean)) found.push(dir);
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith('.') && !SKIPPED_DIRS.has(entry.name)) {
        await visit(path.join(dir, entry.name));
      }
    }
  }
  await visit(path.resolve(root));
  return found.sort();
}

// A manifest that does not parse is a module's to build: the build reports what is wrong with it.
async function isContainerManifest(file: string): Promise<boolean> {
  try {
    return isContainerDocument(parseYaml(await readFile(file, 'utf8')));
  } catch {
    return false;
  }
}

async function findManifest(packDir: string): Promise<string> {
  let names: string[];
  try {
    names = (await readdir(packDir)).filter((name) => name.endsWith(MANIFEST_SUFFIX));
  } catch (error) {
    throw new ToolpackBuildError(`${packDir}: cannot read the toolpack directory: ${(error as Error).message}`, packDir);
  }
  if (names.length !== 1) {
    throw new ToolpackBuildError(`${packDir}: expected exactly one *${MANIFEST_SUFFIX} manifest, found ${names.length}`, packDir);
  }
  return path.join(packDir, names[0]!);
}

/** The files a compile wrote (by absolute path) and what the compiler printed while it succeeded. */
interface Compiled {
  readonly outputs: Map<string, Uint8Array>;
  readonly diagnostics: string;
}

// Runs asc on the pack's asconfig.json with the pack as base directory, so file names baked
// into the module (panic locations) are relative and the bytes do not depend on where the
// repository lives. Outputs are collected in memory and written by the caller.
async function compile(packDir: string): Promise<Compiled> {
  const asc = await loadAsc();
  const outputs = new Map<string, Uint8Array>();
  let diagnostics = '';
  const decoder = new TextDecoder();
  const stderr: AscOutputStream = {
    write: (chunk) => {
      diagnostics += typeof chunk === 'string' ? chunk : decoder.decode(chunk);
    },
  };
  // A pack outside the repository finds @helix/sdk-as through Helix's own copy (sdk-path.ts).
  const sdkModules = bundledSdkModulesDir();
  const sdkPath = sdkModules === undefined ? [] : ['--path', sdkModules];
  const result = await asc.main(['--config', 'asconfig.json', '--baseDir', packDir, '--noColors', ...sdkPath], {
    stdout: { write: () => undefined },
    stderr,
    readFile: sdkAwareReadFile(path.join(packDir, 'asconfig.json'), sdkModules),
    writeFile: (file, contents, baseDir) => {
      const bytes = typeof contents === 'string' ? new TextEncoder().encode(contents) : contents;
      outputs.set(path.resolve(baseDir, file), bytes);
    },
  });
  if (result.error) {
    const text = diagnostics.trim() || result.error.message;
    // asc's wording for this one names an internal path; say what the author has to do.
    const hint = text.includes("helixAbort' not found")
      ? '\nhint: the entry file must `export { alloc, dealloc, helix_panic } from "@helix/sdk-as"`, which also loads the abort handler'
      : '';
    throw new ToolpackBuildError(`${packDir}: compile failed:\n${text}${hint}`, packDir, text);
  }
  // A compile that succeeds writes to stderr only what asc warns about.
  return { outputs, diagnostics: diagnostics.trim() };
}

async function compileCPack(packDir: string, sources: readonly string[], modulePath: string): Promise<Compiled> {
  try {
    const { bytes, diagnostics } = await compileC(packDir, sources);
    return { outputs: new Map([[modulePath, bytes]]), diagnostics };
  } catch (error) {
    if (error instanceof CCompileError)
      throw new ToolpackBuildError(`${packDir}: ${error.message}`, packDir, error.diagnostics, { cause: error });
    throw error;
  }
}

async function writeIfDifferent(file: string, contents: Uint8Array): Promise<void> {
  const current = await readFile(file).catch(() => undefined);
  if (current && Buffer.compare(current, contents) === 0) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, contents);
}

function wrap<T>(packDir: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new ToolpackBuildError((error as Error).message, packDir);
  }
}
