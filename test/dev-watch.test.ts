// `helix dev` as an author uses it (sdk-guest/GUIDE.md, "The loop"): the built CLI running in a
// copy of an AssemblyScript pack outside the repository, the source and a fixture edited under
// it, each change rebuilt (or not) and tested again, and Ctrl-C ending it with exit 0.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startDev } from './helpers/dev-session.js';
import { COUNTER_SOURCE, makeCounterPack, writeFixtures } from './helpers/counter-pack.js';
import { CLI } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

const work = tempDir('helix-dev-watch-');
afterAll(() => work.cleanup());

it('helix dev builds and tests, rebuilds on a source change, re-runs on a fixture change, survives a compile error, and exits 0 on SIGINT', async () => {
  const dir = path.join(work.dir, 'pack');
  cpSync(await makeCounterPack(path.join(work.dir, 'built')), dir, { recursive: true });
  writeFixtures(dir, { first: { input: { op: 'count' }, expect: { output: { count: 1 } } } });
  const source = path.join(dir, COUNTER_SOURCE);
  const original = readFileSync(source, 'utf8');

  const dev = startDev(process.execPath, [CLI, 'dev'], { cwd: dir, killAfterMs: 400_000, cycleMs: 120_000 });
  const cycle = (what: string) => dev.cycle(what);

  try {
    const first = await cycle('the first result');
    expect(first).toMatch(/^──── \d\d:\d\d:\d\d start ─+$/m);
    expect(first).toMatch(/^built \.: build\/counter-tool\.wasm \d+ bytes$/m);
    expect(first).toMatch(/^ok {4}counter\.tool first\.json \(fuel \d+\)$/m);
    expect(first).toContain('1 passed, 0 failed (1 fixtures, 1 toolpack)');

    writeFileSync(source, original.replace('n += 1;', 'n += 2;'));
    const broken = await cycle('the rebuild after the edit');
    expect(broken).toMatch(/^──── \d\d:\d\d:\d\d assembly\/index\.ts changed ─+$/m);
    expect(broken).toMatch(/^built \.: build\/counter-tool\.wasm \d+ bytes \(digest written\)$/m);
    expect(broken).toMatch(/^FAIL {2}counter\.tool first\.json: \/count: expected 1, got 2 \(fuel \d+\)$/m);
    expect(broken).toContain('0 passed, 1 failed');

    writeFileSync(source, original.replace('n += 1;', 'n += ;'));
    const uncompilable = await cycle('the compile error');
    expect(uncompilable).toMatch(/^FAIL {2}build \.: /m);
    expect(uncompilable).toContain('assembly/index.ts');
    expect(uncompilable).toContain('build failed: the fixtures did not run; fix the source and save');
    expect(uncompilable).not.toContain('passed');

    writeFileSync(source, original);
    const fixed = await cycle('the rebuild after the fix');
    expect(fixed).toMatch(/^built \.: /m);
    expect(fixed).toMatch(/^ok {4}counter\.tool first\.json \(fuel \d+\)$/m);

    // A fixture is not a source: the fixtures run again, nothing is built.
    writeFixtures(dir, { first: { input: { op: 'count' }, expect: { output: { count: 7 } } } });
    const refixtured = await cycle('the run after the fixture change');
    expect(refixtured).toMatch(/^──── \d\d:\d\d:\d\d fixtures\/first\.json changed ─+$/m);
    expect(refixtured).not.toMatch(/^built /m);
    expect(refixtured).toMatch(/^FAIL {2}counter\.tool first\.json: \/count: expected 7, got 1/m);

    expect(await dev.interrupt()).toBe(0);
    expect(dev.rest()).toEqual({ stdout: 'stopped\n', stderr: '' });
  } finally {
    dev.kill();
  }
}, 600_000);
