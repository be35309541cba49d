// `helix dev [DIR]`: the author's loop without retyping it. Builds the toolpack(s) in DIR and
// runs their fixtures (as `helix build` and `helix test` do), then watches the files and, a moment
// after each change, rebuilds the packs whose sources changed (assembly/, src/, asconfig.json)
// and runs the fixtures again, under a separator line. A build error prints the compiler's
// message and the watch goes on. Ctrl-C stops it with exit 0.
import { statSync } from 'node:fs';
import path from 'node:path';
import { buildToolpack, findToolpackDirs, ToolpackBuildError } from '../host/6-faces/toolchain/build-toolpack.js';
import { STAMP_SUFFIX } from '../host/6-faces/toolchain/source-stamp.js';
import { HelixError } from '../abi/index.js';
import { isInside } from '../host/1-base/files/fs-facts.js';
import { displayPath } from './build-command.js';
import { EXIT, printError } from './output.js';
import { runTests } from './test-command.js';
import { changedFiles, fingerprint, watchTree, type Fingerprint } from './watch-tree.js';

/** Options of `helix dev`. */
export interface DevOptions {
  readonly policy?: string;
  readonly only?: readonly string[];
}

/** How long the files must be quiet after a change before a run starts, ms. */
const DEBOUNCE_MS = 200;

/** Runs `helix dev` until SIGINT. */
export async function devCommand(dir = '.', opts: DevOptions = {}): Promise<void> {
  const root = path.resolve(dir);
  const packs = await findPacks(root);
  if (packs.length === 0) {
    printError(
      new HelixError('P-PRECOND-PLUGINS-DIR', {
        message: `No toolpack (a directory with a *.tool.yaml manifest) in or under ${root}.`,
        hint: 'Run helix dev inside a toolpack made by helix new, or pass its directory: helix dev path/to/pack.',
        details: { dir: root },
      }),
    );
    process.exitCode = EXIT.invalid;
    return;
  }
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  let seen: Fingerprint = new Map();
  let busy: Promise<void> | undefined;
  let again = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;

  const cycle = async (): Promise<void> => {
    const now = fingerprint(root);
    const changed = changedFiles(seen, now);
    const first = seen.size === 0;
    if (!first && changed.length === 0) return;
    const what = first
      ? 'start'
      : `${changed.slice(0, 3).join(', ')}${changed.length > 3 ? ` and ${changed.length - 3} more` : ''} changed`;
    out(`\n──── ${new Date().toTimeString().slice(0, 8)} ${what} ${'─'.repeat(Math.max(4, 60 - what.length))}`);
    const rebuild = packs.filter((p) => first || changed.some((f) => isSource(path.relative(p, path.join(root, f)))));
    let buildFailed = false;
    for (const pack of rebuild) {
      try {
        const built = await buildToolpack(pack);
        out(
          `built ${displayPath(pack)}: ${path.relative(pack, built.modulePath)} ${statSync(built.modulePath).size} bytes${built.changed ? ' (digest written)' : ''}`,
        );
      } catch (err) {
        buildFailed = true;
        out(`FAIL  build ${displayPath(pack)}: ${err instanceof ToolpackBuildError ? err.message : String(err)}`);
      }
    }
    // What the build wrote (module, digest, stamp) is ours; a change the author made meanwhile is not.
    const after = fingerprint(root);
    seen = now;
    for (const [file, print] of after)
      if (isBuildOutput(file, now, after) && rebuild.some((p) => isInside(path.join(root, file), p))) seen.set(file, print);
    if (buildFailed) out('build failed: the fixtures did not run; fix the source and save');
    else
      await runTests(root, {
        ...(opts.policy === undefined ? {} : { policy: opts.policy }),
        ...(opts.only === undefined ? {} : { only: opts.only }),
      });
    out(`watching ${displayPath(root)} for changes (Ctrl-C to stop)`);
  };

  const schedule = (): void => {
    if (stopping) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (busy !== undefined) {
        again = true;
        return;
      }
      busy = cycle()
        .catch((err: unknown) => printError(err))
        .finally(() => {
          busy = undefined;
          if (again) {
            again = false;
            schedule();
          }
        });
    }, DEBOUNCE_MS);
  };

  const watcher = watchTree(root, schedule);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => {
      stopping = true;
      clearTimeout(timer);
      watcher.close();
      // A second Ctrl-C does not wait for the run in progress.
      process.once('SIGINT', () => process.exit(130));
      void (busy ?? Promise.resolve()).then(() => {
        out('stopped');
        resolve();
      });
    });
    schedule();
  });
  process.exitCode = EXIT.ok;
}

/** The pack directories under `root`, or none when it is not a directory. */
async function findPacks(root: string): Promise<string[]> {
  try {
    return statSync(root).isDirectory() ? await findToolpackDirs(root) : [];
  } catch {
    return [];
  }
}

/** A path inside a pack (relative to it) that `helix build` compiles from. */
function isSource(relative: string): boolean {
  if (relative.startsWith('..') || path.isAbsolute(relative)) return false;
  const [top] = relative.split(path.sep);
  return top === 'assembly' || top === 'src' || relative === 'asconfig.json';
}

/** A file the build wrote: the manifest (its digest), a module or its source stamp, changed between `before` and `after`. */
function isBuildOutput(file: string, before: Fingerprint, after: Fingerprint): boolean {
  return before.get(file) !== after.get(file) && (file.endsWith('.tool.yaml') || file.endsWith('.wasm') || file.endsWith(STAMP_SUFFIX));
}
