// A module older than its sources, as a plugin author meets it: packs made by `helix new` (AS
// and C) in a temporary directory outside the repository, built, edited without rebuilding, then
// tested, called and served through the built CLI. `helix test` must fail naming `helix build`;
// `helix call --plugins` and `helix serve` warn; after a rebuild all are quiet again.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

const work = tempDir('helix-stale-');
afterAll(() => work.cleanup());

const LANGS = [
  { lang: 'as', name: 'stale-as', tool: 'stale.as', source: 'assembly/index.ts' },
  { lang: 'c', name: 'stale-c', tool: 'stale.c', source: 'src/main.c' },
] as const;

// Every file of the pack's build folder and its manifest, with modification time and bytes.
function snapshot(dir: string): Record<string, string> {
  const files = [
    ...readdirSync(path.join(dir, 'build')).map((f) => `build/${f}`),
    ...readdirSync(dir).filter((f) => f.endsWith('.tool.yaml')),
  ];
  return Object.fromEntries(
    files.map((f) => [f, `${statSync(path.join(dir, f)).mtimeMs} ${readFileSync(path.join(dir, f)).toString('base64')}`]),
  );
}

describe.each(LANGS)('a $lang pack built, then edited', ({ lang, name, tool, source }) => {
  const dir = path.join(work.dir, name);
  const home = path.join(work.dir, `home-${lang}`);
  // The template's tool reads an artifact: its example file, imported once.
  let input = '';
  const call = () => runCli(['call', tool, '--toolpacks', '.', '--home', home, '--input', input], dir);

  beforeAll(async () => {
    expect((await runCli(['new', name, '--lang', lang], work.dir)).code).toBe(0);
    const built = await runCli(['build'], dir);
    expect(built.code, built.stderr).toBe(0);
    const imported = await runCli(['artifact', 'import', 'data/example.fa', '--home', home], dir);
    expect(imported.code, imported.stderr).toBe(0);
    input = JSON.stringify({ sequences: (JSON.parse(imported.stdout) as { id: string }).id });
  }, 180_000);

  it('helix build writes the source stamp beside the module, and a rebuild of unchanged sources writes no file', async () => {
    const stamp = JSON.parse(readFileSync(path.join(dir, 'build', `${name}.sources.json`), 'utf8')) as {
      files: Record<string, string>;
      module: string;
    };
    expect(stamp.module).toBe(`build/${name}.wasm`);
    expect(Object.keys(stamp.files)).toContain(source);
    const before = snapshot(dir);
    expect((await runCli(['build'], dir)).code).toBe(0);
    expect(snapshot(dir)).toEqual(before);
  }, 120_000);

  it('helix test fails the stale pack naming the file and helix build; helix call warns once and calls; a rebuild quiets both', async () => {
    const fresh = await runCli(['test'], dir);
    expect(fresh.code, fresh.stdout).toBe(0);
    expect(fresh.stdout + fresh.stderr).not.toMatch(/stale:/);

    writeFileSync(path.join(dir, source), `${readFileSync(path.join(dir, source), 'utf8')}\n// an edit not yet built\n`);
    const tested = await runCli(['test'], dir);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toContain(`FAIL  ${tool}: stale: ${name}: ${source} changed since the last build; run \`helix build\``);
    expect(tested.stdout).not.toMatch(/^ok /m);
    const elsewhere = await runCli(['test', name], work.dir);
    expect(elsewhere.stdout).toContain(`run \`helix build ${name}\``);

    const called = await call();
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ status: 'success' });
    expect(called.stderr.split('\n').filter((line) => line.includes('stale:'))).toEqual([
      `helix: stale: ${name}: ${source} changed since the last build; run \`helix build\`; calling the module as last built`,
    ]);

    // The MCP server logs the same line (stdin is closed at once, so it starts and stops).
    const served = await runCli(['serve', '--toolpacks', '.', '--home', home], dir);
    expect(served.stderr).toContain(`helix serve: stale: ${name}: ${source} changed since the last build; run \`helix build\``);

    expect((await runCli(['build'], dir)).code).toBe(0);
    const retested = await runCli(['test'], dir);
    expect(retested.code, retested.stdout).toBe(0);
    expect((await call()).stderr).not.toMatch(/stale:/);
  }, 180_000);

  it('a pack without a stamp (built by an older Helix) says nothing', async () => {
    rmSync(path.join(dir, 'build', `${name}.sources.json`));
    writeFileSync(path.join(dir, source), `${readFileSync(path.join(dir, source), 'utf8')}\n// another edit\n`);
    const tested = await runCli(['test'], dir);
    expect(tested.code, tested.stdout).toBe(0);
    expect(tested.stdout + tested.stderr).not.toMatch(/stale:/);
  }, 120_000);
});
