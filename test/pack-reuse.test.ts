// `npm pack` (and `npm ci`, which runs the same `prepare`) reuses a build that is current: in a
// copy of the working tree, the first pack builds the host and every toolpack, as a fresh clone
// does; a second pack compiles nothing and leaves every file of dist/ as it was; after an edit
// of one toolpack's source and one host source, a pack rebuilds that toolpack and re-emits that
// file, and nothing else. The copy shares the repository's node_modules through a link.
import { readdirSync, statSync, symlinkSync, appendFileSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import { copyWorkingTree, freshBin, freshEnv, runCommand, type CommandRun } from './helpers/fresh-machine.js';

// A full build of the host and every toolpack: minutes on a loaded machine; the bound only stops a hang.
const PACK_BOUND_MS = 15 * 60_000;

let root: string;
let clone: string;
let env: NodeJS.ProcessEnv;

const pack = (): Promise<CommandRun> =>
  runCommand('npm', ['pack', '--pack-destination', root], { cwd: clone, env, killAfterMs: PACK_BOUND_MS });

/** build:wasm's line of each toolpack, by its folder: `ok    plugins/x: ... (state)`. */
function packLines(run: CommandRun): Map<string, string> {
  const lines = `${run.stdout}\n${run.stderr}`.match(/^(ok|FAIL|warn|kept|skip) +\S+: .*$/gm) ?? [];
  return new Map(lines.map((line) => [line.split(/ +/)[1]!.replace(/:$/, ''), line]));
}

/** Every file under dist/ with its modification time. */
function distTimes(): Map<string, number> {
  const times = new Map<string, number>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else times.set(path.relative(clone, file), statSync(file).mtimeMs);
    }
  };
  walk(path.join(clone, 'dist'));
  return times;
}

const changed = (before: Map<string, number>, after: Map<string, number>): string[] =>
  [...new Set([...before.keys(), ...after.keys()])].filter((f) => before.get(f) !== after.get(f)).sort();

let first: CommandRun;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-pack-reuse-'));
  // With clang: the C toolpack is compiled, not kept.
  env = freshEnv(await freshBin(path.join(root, 'bin'), /^seqkit$/));
  clone = path.join(root, 'helix');
  await copyWorkingTree(clone);
  symlinkSync(path.join(packageRoot(), 'node_modules'), path.join(clone, 'node_modules'));
  first = await pack();
}, PACK_BOUND_MS + 60_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('npm pack reuses a fresh build', () => {
  let settled: Map<string, number>;

  it('builds everything the first time, as in a fresh clone', () => {
    expect(first.code, first.stderr).toBe(0);
    const lines = packLines(first);
    expect(lines.size).toBeGreaterThanOrEqual(12);
    for (const [name, line] of lines) expect(line, name).toMatch(/^ok .*\((unchanged|digest updated)\)$/);
    expect(statSync(path.join(clone, 'dist', 'cli', 'main.js')).isFile()).toBe(true);
    settled = distTimes();
  });

  it(
    'builds nothing the second time: every toolpack current, no file of dist/ rewritten',
    async () => {
      const second = await pack();
      expect(second.code, second.stderr).toBe(0);
      const lines = packLines(second);
      expect([...lines.keys()].sort()).toEqual([...packLines(first).keys()].sort());
      for (const [name, line] of lines) expect(line, name).toMatch(/ \(current\)$/);
      expect(changed(settled, distTimes())).toEqual([]);
    },
    PACK_BOUND_MS,
  );

  it(
    'rebuilds only what an edit touched',
    async () => {
      appendFileSync(path.join(clone, 'plugins', 'seq-gc-content', 'assembly', 'index.ts'), '\n// an edit of the toolpack\n');
      appendFileSync(path.join(clone, 'cli', 'output.ts'), '\n// an edit of the host\n');
      const before = distTimes();
      const third = await pack();
      expect(third.code, third.stderr).toBe(0);
      for (const [name, line] of packLines(third)) {
        if (name === 'plugins/seq-gc-content') expect(line).toMatch(/^ok .*\((unchanged|digest updated)\)$/);
        else expect(line, name).toMatch(/ \(current\)$/);
      }
      // The edited file's output, the two builds' records, and nothing else.
      expect(changed(before, distTimes())).toEqual([
        'dist/.build-wasm.json',
        'dist/.tsbuildinfo',
        'dist/cli/output.d.ts',
        'dist/cli/output.js',
        'dist/cli/output.js.map',
      ]);
      expect(readFileSync(path.join(clone, 'dist', 'cli', 'output.js'), 'utf8')).toContain('// an edit of the host');
    },
    PACK_BOUND_MS,
  );
});
