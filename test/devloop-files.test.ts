// The author's loop reads pack files as the loader does (ABI-FILE-011, -012): `helix test` through
// the built CLI refuses fixture files and data files that are not the pack's regular files,
// without waiting on a FIFO or quoting what lies outside, and still runs the good fixture;
// `helix build` refuses an oversized or alias-bombed manifest with the rule and the line.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildToolpack } from '../host/6-faces/toolchain/build-toolpack.js';
import { runCli } from './helpers/cli-process.js';
import { echoModule } from './helpers/guest-wat.js';
import { tempDir, writeToolpack } from './helpers/toolpack.js';

const MARKER = 'OUTSIDE-MARKER-d07e';
const root = tempDir('helix-devloop-files-');
afterAll(() => root.cleanup());

describe("helix test reads only the pack's own fixture and data files", () => {
  it('fails a FIFO fixture, a linked-out fixture and data paths that leave the pack, and passes the good fixture (ABI-FILE-011)', async () => {
    const outside = path.join(root.dir, 'outside.txt');
    writeFileSync(outside, MARKER);
    const { manifestPath } = await writeToolpack(path.join(root.dir, 'plugins'), {
      id: 'loop.echo',
      module: echoModule(),
      dirName: 'pack',
      manifest: { health: { fixtures: 'fixtures' } },
    });
    const fixtures = path.join(path.dirname(manifestPath), 'fixtures');
    mkdirSync(fixtures);
    execFileSync('mkfifo', [path.join(fixtures, 'a-pipe.json')]);
    symlinkSync(outside, path.join(fixtures, 'b-linked.json'));
    writeFileSync(path.join(fixtures, 'c-data.json'), JSON.stringify({ input: { x: '@data/../../outside.txt' }, expect: { output: {} } }));
    symlinkSync(outside, path.join(path.dirname(manifestPath), 'data-link.txt'));
    writeFileSync(
      path.join(fixtures, 'd-data-link.json'),
      JSON.stringify({ input: { x: '@data/../data-link.txt' }, expect: { output: {} } }),
    );
    writeFileSync(path.join(fixtures, 'e-good.json'), JSON.stringify({ input: { n: 1 }, expect: { output: { n: 1 } } }));

    const r = await runCli(['test', path.dirname(manifestPath)]);
    expect(r.code, r.stderr + r.stdout).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^FAIL {2}loop\.echo a-pipe\.json: the fixture file is a FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)$/,
      ),
      expect.stringMatching(
        /^FAIL {2}loop\.echo b-linked\.json: the fixture file resolves through a symbolic link to a place outside the toolpack directory .*\(ABI-FILE-002\)$/,
      ),
      expect.stringMatching(
        /^FAIL {2}loop\.echo c-data\.json: fixture data path data\/\.\.\/\.\.\/outside\.txt leaves the toolpack directory .*\(ABI-FILE-001\)$/,
      ),
      expect.stringMatching(
        /^FAIL {2}loop\.echo d-data-link\.json: fixture data path data\/\.\.\/data-link\.txt resolves through a symbolic link/,
      ),
      expect.stringMatching(/^ok {4}loop\.echo e-good\.json/),
      '1 passed, 4 failed (5 fixtures, 1 toolpack)',
    ]);
    expect(r.stdout + r.stderr).not.toContain(MARKER);
  }, 300_000);
});

describe("helix build reads the manifest within the loader's bounds", () => {
  it('refuses an alias bomb with its line and a manifest over the bound, before compiling (ABI-FILE-012)', async () => {
    const { manifestPath } = await writeToolpack(path.join(root.dir, 'build'), { id: 'loop.bomb', module: echoModule(), dirName: 'bomb' });
    appendFileSync(manifestPath, 'x:\n  a: &a [1, 1]\n  b: &b [*a, *a]\n  c: [*b, *b]\n');
    await expect(buildToolpack(path.dirname(manifestPath))).rejects.toThrow(
      /loop_bomb\.tool\.yaml:\d+: x\.c\[0\]: alias \*b refers to a node that itself holds an alias.*\(ABI-FILE-008\)/,
    );

    const big = await writeToolpack(path.join(root.dir, 'build'), { id: 'loop.big', module: echoModule(), dirName: 'big' });
    truncateSync(big.manifestPath, 50 * 1024 * 1024);
    await expect(buildToolpack(path.dirname(big.manifestPath))).rejects.toThrow(
      /the manifest is 52428800 bytes, more than the bound of 1048576 bytes \(ABI-FILE-005\)/,
    );
  });
});
