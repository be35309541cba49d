// `npm run build:wasm`: builds every toolpack under plugins/ and bench/fixtures/, one line per
// pack, and exits non-zero with the compiler's message if any pack fails.

import { stat } from 'node:fs/promises';
import path from 'node:path';
import { buildToolpack, findToolpackDirs } from '../host/build/build-toolpack.js';

/** Folders searched for toolpacks, relative to the repository root. */
export const TOOLPACK_ROOTS = ['plugins', 'bench/fixtures'];

// Plain stream writes rather than console: compiled alongside code that loads asc's typings,
// whose global `console` declaration has only `log`.
const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

async function main(root: string): Promise<number> {
  const dirs: string[] = [];
  for (const folder of TOOLPACK_ROOTS) {
    const absolute = path.join(root, folder);
    if (await stat(absolute).then((info) => info.isDirectory(), () => false)) dirs.push(...(await findToolpackDirs(absolute)));
  }
  if (dirs.length === 0) {
    err(`no toolpacks found under ${TOOLPACK_ROOTS.join(', ')} in ${root}`);
    return 1;
  }
  let failures = 0;
  for (const dir of dirs) {
    const name = path.relative(root, dir);
    try {
      const built = await buildToolpack(dir);
      const size = (await stat(built.modulePath)).size;
      const state = built.changed ? 'digest updated' : 'unchanged';
      out(`ok    ${name}: ${path.relative(root, built.modulePath)} ${size} bytes ${built.digest.slice(0, 19)}… (${state})`);
    } catch (error) {
      failures++;
      err(`FAIL  ${name}: ${(error as Error).message}`);
    }
  }
  if (failures > 0) err(`${failures} of ${dirs.length} toolpacks failed to build`);
  return failures > 0 ? 1 : 0;
}

// npm runs scripts from the package root; a root may also be given as the first argument.
process.exitCode = await main(path.resolve(process.argv[2] ?? process.cwd()));
