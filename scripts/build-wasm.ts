// `npm run build:wasm`: builds every toolpack under plugins/ and bench/fixtures/, one line per
// pack. A pack whose compiler is missing keeps its shipped module when that matches the manifest
// digest, else is skipped; a compiler's warnings are printed under the pack's line. With --strict
// (the test command) a missing compiler fails the build, and so does any warning. With --changed
// (the fast test tier) a pack whose inputs are those of its last build here is not compiled
// again (build-inputs.ts).

import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { buildToolpack, findToolpackDirs, MANIFEST_SUFFIX, ToolpackBuildError } from '../host/6-faces/toolchain/build-toolpack.js';
import { CCompileError, type CToolchainPart } from '../host/6-faces/toolchain/compile-c.js';
import { type ManifestBuildFields, moduleDigest, readManifestFields } from '../host/6-faces/toolchain/manifest-digest.js';
import { BuildRecord, packInputs, sharedInputs } from './build-inputs.js';

/** Folders searched for toolpacks, relative to the repository root. */
export const TOOLPACK_ROOTS = ['plugins', 'bench/fixtures'];

/** The Debian packages that provide each part of the C toolchain. */
const TOOLCHAIN_PACKAGES: Record<CToolchainPart, string> = { clang: 'clang lld', 'wasm-ld': 'lld' };

// Plain stream writes rather than console: compiled alongside code that loads asc's typings,
// whose global `console` declaration has only `log`.
const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

async function main(root: string, strict: boolean, changed: boolean): Promise<number> {
  const dirs: string[] = [];
  for (const folder of TOOLPACK_ROOTS) {
    const absolute = path.join(root, folder);
    if (
      await stat(absolute).then(
        (info) => info.isDirectory(),
        () => false,
      )
    )
      dirs.push(...(await findToolpackDirs(absolute)));
  }
  if (dirs.length === 0) {
    err(`no toolpacks found under ${TOOLPACK_ROOTS.join(', ')} in ${root}`);
    return 1;
  }
  let failures = 0;
  const record = changed ? BuildRecord.open(root) : undefined;
  const shared = changed ? sharedInputs() : '';
  for (const dir of dirs) {
    const name = path.relative(root, dir);
    try {
      // Hashed before compiling, as the source stamp is: an edit made meanwhile is built next time.
      const inputs = record === undefined ? undefined : await currentInputs(dir, shared);
      if (record !== undefined && inputs !== undefined && record.isCurrent(name, inputs.digest, inputs.modulePath, inputs.manifestDigest)) {
        const size = (await stat(inputs.modulePath)).size;
        out(`ok    ${name}: ${path.relative(root, inputs.modulePath)} ${size} bytes ${inputs.manifestDigest?.slice(0, 19)}… (current)`);
        continue;
      }
      const built = await buildToolpack(dir);
      const size = (await stat(built.modulePath)).size;
      const state = built.changed ? 'digest updated' : 'unchanged';
      const what = `${path.relative(root, built.modulePath)} ${size} bytes ${built.digest.slice(0, 19)}… (${state})`;
      if (built.warnings === '') {
        out(`ok    ${name}: ${what}`);
        // A rewritten manifest is an input of the next build: it is noted once a build leaves it as it
        // is. A build that warned is never noted, so its warnings show on every build.
        if (record !== undefined && !built.changed) record.note(name, inputs?.digest, built.digest);
        continue;
      }
      if (strict) {
        failures++;
        err(`FAIL  ${name}: built, but the compiler warned, and --strict refuses a warning:\n${indent(built.warnings)}`);
      } else err(`warn  ${name}: ${what}, with the compiler's warnings:\n${indent(built.warnings)}`);
    } catch (error) {
      const missing = missingToolchain(error);
      if (missing !== undefined && !strict) {
        await keepOrSkip(dir, name, missing);
        continue;
      }
      failures++;
      err(`FAIL  ${name}: ${(error as Error).message}`);
    }
  }
  record?.save();
  if (failures > 0) err(`${failures} of ${dirs.length} toolpacks failed to build`);
  return failures > 0 ? 1 : 0;
}

/** A pack's inputs as --changed compares them, with its module and the digest its manifest pins; undefined without a readable manifest. */
async function currentInputs(
  dir: string,
  shared: string,
): Promise<{ digest: string | undefined; modulePath: string; manifestDigest: string | null } | undefined> {
  const manifestName = (await readdir(dir)).find((entry) => entry.endsWith(MANIFEST_SUFFIX));
  if (manifestName === undefined) return undefined;
  const manifestPath = path.join(dir, manifestName);
  try {
    const fields = readManifestFields(await readFile(manifestPath, 'utf8'), manifestName);
    return { digest: packInputs(dir, manifestPath, shared), modulePath: path.resolve(dir, fields.module), manifestDigest: fields.digest };
  } catch {
    return undefined;
  }
}

/** The compiler's text, set in under the pack's line. */
function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
}

/** The part of the C toolchain a failed build could not run, if that is why it failed. */
function missingToolchain(error: unknown): CToolchainPart | undefined {
  if (!(error instanceof ToolpackBuildError) || !(error.cause instanceof CCompileError)) return undefined;
  return error.cause.toolchainMissing;
}

// Without a compiler the shipped module stands in for the build, but only when it is exactly
// the module the manifest pins: the loader would refuse any other. Either way one line says
// what happened and how to build it here; neither fails an install.
async function keepOrSkip(dir: string, name: string, missing: CToolchainPart): Promise<void> {
  const fix = `apt-get install ${TOOLCHAIN_PACKAGES[missing]}`;
  const shipped = await shippedModule(dir);
  if (shipped.matches) {
    out(`kept  ${name}: ${missing} not found; using the shipped ${shipped.module}, which matches the manifest digest (${fix} to rebuild)`);
  } else {
    err(
      `skip  ${name}: ${missing} not found and ${shipped.module} ${shipped.problem}, so its tool will not load; ${fix}, then npm run build`,
    );
  }
}

type ShippedModule = { module: string; matches: true } | { module: string; matches: false; problem: string };

/** The pack's module as the manifest names it, and whether its bytes hash to the manifest digest. */
async function shippedModule(dir: string): Promise<ShippedModule> {
  const manifestName = (await readdir(dir)).find((entry) => entry.endsWith(MANIFEST_SUFFIX));
  if (manifestName === undefined) return { module: 'its module', matches: false, problem: 'has no manifest' };
  let fields: ManifestBuildFields;
  try {
    fields = readManifestFields(await readFile(path.join(dir, manifestName), 'utf8'), manifestName);
  } catch {
    return { module: 'its module', matches: false, problem: `cannot be found: ${manifestName} does not parse` };
  }
  const bytes = await readFile(path.join(dir, fields.module)).catch(() => undefined);
  if (bytes === undefined) return { module: fields.module, matches: false, problem: 'is missing' };
  if (fields.digest === null || moduleDigest(bytes) !== fields.digest) {
    return { module: fields.module, matches: false, problem: 'does not match the manifest digest' };
  }
  return { module: fields.module, matches: true };
}

// npm runs scripts from the package root; a root may also be given as an argument.
const args = process.argv.slice(2);
const rootArg = args.find((arg) => !arg.startsWith('--'));
process.exitCode = await main(path.resolve(rootArg ?? process.cwd()), args.includes('--strict'), args.includes('--changed'));
