// `helix build [DIR]`: compiles the toolpack in DIR, or every toolpack under it, with the same
// build as the bundled toolpacks (host/6-faces/toolchain/build-toolpack.ts), pins each module's digest into
// its manifest and prints one line per pack: module path, size, digest.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildToolpack, findToolpackDirs } from '../host/6-faces/toolchain/build-toolpack.js';
import { HelixError } from '../abi/index.js';
import { EXIT, printError } from './output.js';

/** Runs `helix build`. Exit 0 when every pack built, 1 when one failed, 2 when DIR holds none. */
export async function buildCommand(dir = '.'): Promise<void> {
  const root = path.resolve(dir);
  const dirs = existsSync(root) && statSync(root).isDirectory() ? await findToolpackDirs(root) : [];
  if (dirs.length === 0) {
    printError(
      new HelixError('P-PRECOND-PLUGINS-DIR', {
        message: `No toolpack (a directory with a *.tool.yaml manifest) in or under ${root}.`,
        hint: 'Run helix build inside a toolpack made by helix new, or pass its directory: helix build path/to/pack.',
        details: { dir: root },
      }),
    );
    process.exitCode = EXIT.invalid;
    return;
  }
  let failures = 0;
  for (const packDir of dirs) {
    const name = displayPath(packDir);
    try {
      const built = await buildToolpack(packDir);
      const size = statSync(built.modulePath).size;
      process.stdout.write(
        `ok    ${name}: ${path.relative(packDir, built.modulePath)} ${size} bytes ${built.digest}${built.changed ? ' (digest written)' : ''}\n`,
      );
    } catch (err) {
      failures++;
      process.stderr.write(`FAIL  ${name}: ${(err as Error).message}\n`);
    }
  }
  if (failures > 0) {
    process.stderr.write(`helix: ${failures} of ${dirs.length} toolpack${dirs.length === 1 ? '' : 's'} failed to build\n`);
    process.exitCode = EXIT.failed;
  }
}

/** A path relative to the working directory when it is inside it, else absolute. */
export function displayPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  if (relative === '') return '.';
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}
