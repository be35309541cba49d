// Helix used from outside the repository as README's "Using Helix outside this repository" says:
// the packed tarball installed as a devDependency of an author's folder, then `npx helix new`,
// `build`, `test`, `artifact import` and `call` of an AssemblyScript and an Extism pack there,
// with no C toolchain on PATH, and of a C pack with clang and wasm-ld on PATH; then `helix dev`.

import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import { startDev } from './helpers/dev-session.js';
import { freshBin, freshEnv, runCommand, type CommandRun } from './helpers/fresh-machine.js';

const VERSION = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
// The install fetches Helix's dependencies from npm's cache (~/.npm); the bound only stops a hang.
const INSTALL_BOUND_MS = 15 * 60_000;
// One helix command: seconds when the machine is idle, far more when it is shared.
const COMMAND_BOUND_MS = 5 * 60_000;

let root: string;
let author: string;
let env: NodeJS.ProcessEnv;
let npx: string;
/** The same machine with clang and wasm-ld, as the C template needs (sdk-guest/GUIDE.md). */
let cEnv: NodeJS.ProcessEnv;
let pack: CommandRun;
let install: CommandRun;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-outside-'));
  const bin = await freshBin(path.join(root, 'bin'));
  env = freshEnv(bin);
  npx = path.join(bin, 'npx');
  cEnv = freshEnv(await freshBin(path.join(root, 'bin-c'), /^seqkit$/));
  // The test command built dist/ and the toolpacks just before the tests, so the pack skips
  // `prepare` (which would rebuild in the repository while other tests read dist/).
  pack = await runCommand(path.join(bin, 'npm'), ['pack', '--ignore-scripts', '--pack-destination', root], {
    cwd: packageRoot(),
    env,
    killAfterMs: 300_000,
  });
  author = path.join(root, 'author');
  await mkdir(author);
  install = await runCommand(path.join(bin, 'npm'), ['install', '--save-dev', path.join(root, `helix-${VERSION}.tgz`)], {
    cwd: author,
    env,
    killAfterMs: INSTALL_BOUND_MS,
  });
}, INSTALL_BOUND_MS + 360_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const helix = (args: string[], cwd: string, withEnv: NodeJS.ProcessEnv = env) =>
  runCommand(npx, ['helix', ...args], { cwd, env: withEnv, killAfterMs: COMMAND_BOUND_MS });
const ended = (run: CommandRun) => ({ code: run.code, stderr: run.code === 0 ? '' : run.stderr });

describe('helix installed from a packed tarball outside the repository', () => {
  it('npm pack and npm install --save-dev of the tarball succeed', () => {
    expect({ pack: ended(pack), install: ended(install) }).toEqual({ pack: { code: 0, stderr: '' }, install: { code: 0, stderr: '' } });
  });

  it('the package holds the CLI, the bundled toolpacks, the SDKs, the templates and the schemas, and no tests or source maps', async () => {
    const installed = path.join(author, 'node_modules', 'helix');
    for (const file of [
      'dist/cli/main.js',
      'dist/host/2-sandbox/engine/worker.js',
      'plugins/seq-gc-skew/build/gc-skew.wasm',
      'sdk-guest/c/helix.h',
      'sdk-guest/templates/as/asconfig.json',
      'sdk-guest/GUIDE.md',
      'abi/ABI.md',
      'abi/schemas/tool-manifest.json',
      'dist/conformance/runner.js',
      'conformance/assembly/script.ts',
      'conformance/THREAT-MODEL.md',
      'node_modules/@helix/sdk-as/assembly/index.ts',
      'node_modules/@extism/as-pdk/index.ts',
    ]) {
      expect({ file, exists: existsSync(path.join(installed, file)) }).toEqual({ file, exists: true });
    }
    const all = await readdir(installed, { recursive: true });
    expect(all.filter((file) => /\.test\.|\.map$|(^|\/)test\//.test(file))).toEqual([]);
  });

  it(
    'npx helix --version prints the version',
    async () => {
      const run = await helix(['--version'], author);
      expect({ ...ended(run), stdout: run.stdout }).toEqual({ code: 0, stderr: '', stdout: `${VERSION}\n` });
    },
    COMMAND_BOUND_MS + 60_000,
  );

  it(
    'npx helix conformance runs checks of the installed package (WAT and AssemblyScript modules built there) and writes its reports',
    async () => {
      const json = path.join(author, 'conformance.json');
      const run = await helix(
        [
          'conformance',
          '--engine',
          'helix',
          '--only',
          'cpu.infinite-loop',
          '--only',
          'ABI-CAP-002',
          '--json',
          json,
          '--html',
          path.join(author, 'conformance.html'),
        ],
        author,
      );
      const report = JSON.parse(readFileSync(json, 'utf8')) as {
        summary: { total: number; failed: number };
        results: { id: string; sources: { lang: string }[] }[];
      };
      expect(report.summary.failed).toBe(0);
      expect(report.summary.total).toBeGreaterThanOrEqual(2);
      expect(report.results.flatMap((r) => r.sources.map((s) => s.lang))).toEqual(expect.arrayContaining(['wat', 'assemblyscript']));
      // Every check that ran passed; the exit is 0 only when the suite also covers all of ABI.md.
      expect(ended(run)).toEqual({ code: 0, stderr: '' });
    },
    COMMAND_BOUND_MS + 60_000,
  );

  // The walkthrough of sdk-guest/GUIDE.md, section 2: new, build, test, import, call.
  for (const lang of ['as', 'extism', 'c'] as const) {
    it(
      `helix new --lang ${lang}, build, test, artifact import and call in the author folder`,
      async () => {
        const name = `hello-${lang}`;
        const langEnv = lang === 'c' ? cEnv : env;
        const created = await helix(['new', name, '--lang', lang], author, langEnv);
        expect(ended(created)).toEqual({ code: 0, stderr: '' });
        const pack = path.join(author, name);
        const built = await helix(['build'], pack, langEnv);
        expect(ended(built)).toEqual({ code: 0, stderr: '' });
        expect(built.stdout).toMatch(new RegExp(`^ok {4}\\.: build/${name}\\.wasm \\d+ bytes sha256:[0-9a-f]{64}`, 'm'));
        const tested = await helix(['test'], pack, langEnv);
        expect(ended(tested)).toEqual({ code: 0, stderr: '' });
        expect(tested.stdout).toMatch(/^[1-9]\d* passed, 0 failed/m);
        const imported = await helix(['artifact', 'import', 'data/example.fa'], pack, langEnv);
        expect(ended(imported)).toEqual({ code: 0, stderr: '' });
        const id = (JSON.parse(imported.stdout) as { id: string }).id;
        const called = await helix(
          ['call', `hello.${lang}`, '--toolpacks', '.', '--input', JSON.stringify({ sequences: id })],
          pack,
          langEnv,
        );
        expect(ended(called)).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(called.stdout)).toMatchObject({ status: 'success', output: { format: 'FASTA', records: 4, total_length: 68 } });
      },
      5 * COMMAND_BOUND_MS + 60_000,
    );
  }

  // The guide's loop, section 3: `helix dev` in the AssemblyScript pack made above, run through
  // the installed bin (npx would stand between the signal and helix).
  it(
    'helix dev in the author folder rebuilds and re-tests on a source edit, and stops on SIGINT',
    async () => {
      const pack = path.join(author, 'hello-as');
      expect(existsSync(pack), 'the helix new --lang as test made the pack').toBe(true);
      const dev = startDev(path.join(author, 'node_modules', '.bin', 'helix'), ['dev'], {
        cwd: pack,
        env,
        killAfterMs: 2 * COMMAND_BOUND_MS,
        cycleMs: COMMAND_BOUND_MS,
      });
      try {
        const first = await dev.cycle('the first result');
        expect(first).toMatch(/^[1-9]\d* passed, 0 failed/m);
        const source = path.join(pack, 'assembly', 'index.ts');
        await appendFile(source, '\n// edited by the author\n');
        const edited = await dev.cycle('the rebuild after the edit');
        expect(edited).toMatch(/^──── \d\d:\d\d:\d\d assembly\/index\.ts changed ─+$/m);
        // A comment leaves the module as it was: rebuilt, same digest.
        expect(edited).toMatch(/^built \.: build\/hello-as\.wasm \d+ bytes$/m);
        expect(edited).toMatch(/^[1-9]\d* passed, 0 failed/m);
        expect(await dev.interrupt()).toBe(0);
      } finally {
        dev.kill();
      }
    },
    2 * COMMAND_BOUND_MS + 60_000,
  );
});
