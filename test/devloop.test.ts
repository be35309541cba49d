// The plugin author's loop, as sdk-guest/GUIDE.md tells it: `helix new`, `helix build`,
// `helix test`, `helix call --plugins`, run as a person would: the built CLI as a child process,
// in a temporary directory outside the repository (so the SDK must be found without a
// node_modules next to the pack).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { PACK_GITIGNORE } from '../cli/new-command.js';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');

const work = tempDir('helix-devloop-');
const home = tempDir('helix-devloop-home-');
afterAll(() => {
  work.cleanup();
  home.cleanup();
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function helix(args: string[], cwd: string = work.dir): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, HELIX_HOME: home.dir },
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const sha256 = (file: string) => `sha256:${createHash('sha256').update(readFileSync(file)).digest('hex')}`;
const manifestOf = (dir: string) =>
  parseYaml(readFileSync(path.join(dir, readdirSync(dir).find((f) => f.endsWith('.tool.yaml'))!), 'utf8')) as Record<string, unknown>;

// One pack made and built the way the guide says, shared by the tests that need a built pack
// (each works on its own copy).
const pack = path.join(work.dir, 'hello-tool');
let created: Ran;
let built: Ran;
beforeAll(async () => {
  created = await helix(['new', 'hello-tool']);
  built = await helix(['build'], pack);
}, 120_000);

function copyOfPack(name: string): string {
  const dir = path.join(work.dir, 'copies', name);
  cpSync(pack, dir, { recursive: true });
  return dir;
}

describe('the guide, followed literally', () => {
  it('helix new creates the pack outside the repository and prints the next steps', () => {
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created hello-tool/ (AssemblyScript template, tool hello.tool)');
    for (const file of [
      'hello-tool.tool.yaml',
      'asconfig.json',
      'assembly/index.ts',
      'schemas/input.json',
      'schemas/output.json',
      'README.md',
    ]) {
      expect(existsSync(path.join(pack, file)), file).toBe(true);
      expect(created.stdout).toContain(`  ${file}\n`);
    }
    expect(created.stdout).toMatch(
      /helix build\b[\s\S]*helix test\b[\s\S]*helix artifact import data\/example\.fa\b[\s\S]*helix call hello\.tool --toolpacks \. --input '\{"sequences":"art_\.\.\."\}'/,
    );
    expect(existsSync(path.join(pack, 'node_modules'))).toBe(false);
    // Every new pack keeps its store (and installed packages) out of git, whatever the template.
    expect(readFileSync(path.join(pack, '.gitignore'), 'utf8')).toBe(PACK_GITIGNORE);
    expect(created.stdout).toContain('  .gitignore\n');
    // No placeholder survives, in names or contents.
    const all = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    for (const file of all(pack)) {
      expect(file).not.toContain('__');
      expect(readFileSync(file, 'utf8'), file).not.toMatch(/__(NAME|ID|DESCRIPTION)__/);
    }
    const manifest = manifestOf(pack);
    expect(manifest).toMatchObject({ id: 'hello.tool', module: 'build/hello-tool.wasm', health: { fixtures: 'fixtures' } });
  });

  it('helix new prints what the guide shows', () => {
    const guide = readFileSync(path.join(packageRoot(), 'sdk-guest', 'GUIDE.md'), 'utf8');
    const start = guide.indexOf('$ helix new hello-tool\n') + '$ helix new hello-tool\n'.length;
    expect(start).toBeGreaterThan(100);
    expect(created.stdout).toBe(guide.slice(start, guide.indexOf('```', start)));
  });

  it('helix build compiles it and pins the digest of the module it wrote', () => {
    expect(built.code, built.stderr).toBe(0);
    const module = path.join(pack, 'build', 'hello-tool.wasm');
    const size = readFileSync(module).length;
    expect(built.stdout.trim()).toBe(`ok    .: build/hello-tool.wasm ${size} bytes ${sha256(module)} (digest written)`);
    expect(manifestOf(pack).digest).toBe(sha256(module));
  });

  it('helix build again changes nothing', async () => {
    const again = await helix(['build', pack]);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain('digest written');
  });

  it('helix test passes every fixture of the template and reports fuel', async () => {
    const r = await helix(['test'], pack);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const fixtures = readdirSync(path.join(pack, 'fixtures')).filter((f) => f.endsWith('.json'));
    expect(fixtures.length).toBeGreaterThanOrEqual(2);
    for (const f of fixtures) expect(r.stdout).toMatch(new RegExp(`^ok    hello\\.tool ${f.replace('.', '\\.')} \\(fuel \\d+\\)$`, 'm'));
    expect(r.stdout).toContain(`${fixtures.length} passed, 0 failed (${fixtures.length} fixtures, 1 toolpack)`);
    // At least one success and one error code among them.
    const expects = fixtures.map(
      (f) => (JSON.parse(readFileSync(path.join(pack, 'fixtures', f), 'utf8')) as { expect: Record<string, unknown> }).expect,
    );
    expect(expects.some((e) => 'output' in e)).toBe(true);
    expect(expects.some((e) => 'error_code' in e)).toBe(true);
  });

  it('helix call --plugins . reads an imported file and writes the lengths artifact', async () => {
    writeFileSync(path.join(pack, 'new.fa'), '>a first\nACGTN\nacg\n>b\r\nGGG\r\n');
    const imported = await helix(['artifact', 'import', 'new.fa'], pack);
    expect(imported.code, imported.stderr).toBe(0);
    const id = (JSON.parse(imported.stdout) as { id: string }).id;
    const r = await helix(['call', 'hello.tool', '--toolpacks', '.', '--input', JSON.stringify({ sequences: id })], pack);
    expect(r.code, r.stdout).toBe(0);
    const response = ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
    expect(response.output).toMatchObject({ format: 'FASTA', records: 2, total_length: 11 });
    expect(response.provenance.digest).toBe(manifestOf(pack).digest);
  });

  it('helix call reports a file that is neither FASTA nor FASTQ with its line', async () => {
    const imported = await helix(['artifact', 'import', '--text', '\nACGT\n'], pack);
    const id = (JSON.parse(imported.stdout) as { id: string }).id;
    const r = await helix(['call', 'hello.tool', '--toolpacks', '.', '--input', JSON.stringify({ sequences: id })], pack);
    expect(r.code).toBe(1);
    const response = ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
    expect(response.error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 2 } });
    expect(response.error?.hint).toBeTruthy();
  });
});

describe('helix test', () => {
  it('exits 1 naming a fixture that fails, with the first difference', async () => {
    const dir = copyOfPack('failing');
    writeFileSync(
      path.join(dir, 'fixtures', 'wrong-count.json'),
      JSON.stringify({ input: { sequences: '@data/example.fa' }, expect: { output_contains: { records: 5 } } }),
    );
    const r = await helix(['test', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL {2}hello\.tool wrong-count\.json: \/records: expected 5, got 4 \(fuel \d+\)$/m);
    expect(r.stdout).toMatch(/^ok {4}hello\.tool fasta\.json/m);
    expect(r.stdout).toMatch(/ 1 failed \(\d+ fixtures, 1 toolpack\)/);
  });

  it('checks partial outputs, error details and the fixture format, and reports them as JSON', async () => {
    const dir = copyOfPack('formats');
    const fx = (name: string, body: unknown) => writeFileSync(path.join(dir, 'fixtures', name), JSON.stringify(body));
    const fa = { sequences: '@data/example.fa' };
    const table = { sequences: '@data/not-sequences.tsv' };
    fx('contains-ok.json', { input: fa, expect: { output_contains: { records: 4 } } });
    fx('contains-wrong.json', { input: fa, expect: { output_contains: { format: 'FASTQ' } } });
    fx('details-wrong.json', { input: table, expect: { error_code: 'D-DATA-FORMAT', error_details: { line: 2 } } });
    fx('code-wrong.json', { input: table, expect: { error_code: 'I-REQ-INPUT' } });
    fx('no-expect.json', { input: fa });
    fx('two-expects.json', { input: fa, expect: { output: {}, error_code: 'I-REQ-INPUT' } });
    writeFileSync(path.join(dir, 'fixtures', 'not-json.json'), '{ "input": ');
    const r = await helix(['test', '--json'], dir);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      passed: number;
      failed: number;
      toolpacks: { tool: string; fixtures: { fixture: string; ok: boolean; problem?: string; fuel_used?: number }[] }[];
    };
    expect(report.ok).toBe(false);
    expect(report.toolpacks.map((t) => t.tool)).toEqual(['hello.tool']);
    const byName = new Map(report.toolpacks[0]!.fixtures.map((f) => [f.fixture, f]));
    expect(byName.get('contains-ok.json')).toMatchObject({ ok: true });
    expect(byName.get('contains-wrong.json')).toMatchObject({ ok: false, problem: '/format: expected "FASTQ", got "FASTA"' });
    expect(byName.get('details-wrong.json')).toMatchObject({ ok: false, problem: '/details/line: expected 2, got 1' });
    expect(byName.get('code-wrong.json')?.problem).toMatch(/^expected error I-REQ-INPUT, got terminal_error D-DATA-FORMAT: /);
    expect(byName.get('no-expect.json')?.problem).toMatch(/^not a valid fixture: expect: /);
    expect(byName.get('two-expects.json')?.problem).toMatch(/^not a valid fixture: .*exactly one of output, output_contains, error_code/);
    expect(byName.get('not-json.json')?.problem).toMatch(/^not a valid fixture: .*JSON/);
    expect(report.failed).toBe(6);
    expect(report.passed).toBe(report.toolpacks[0]!.fixtures.length - 6);
  });

  it('fails a pack that has no fixtures to run', async () => {
    const dir = copyOfPack('no-fixtures');
    for (const f of readdirSync(path.join(dir, 'fixtures'))) rmSync(path.join(dir, 'fixtures', f));
    const empty = await helix(['test', dir]);
    expect(empty.code).toBe(1);
    expect(empty.stdout).toContain('FAIL  hello.tool: no *.json fixtures in fixtures/');
    const manifestFile = path.join(dir, 'hello-tool.tool.yaml');
    writeFileSync(manifestFile, readFileSync(manifestFile, 'utf8').replace(/^health:\n {2}fixtures: fixtures\n/m, ''));
    const undeclared = await helix(['test', dir]);
    expect(undeclared.code).toBe(1);
    expect(undeclared.stdout).toContain('FAIL  hello.tool: no fixtures: set health.fixtures in the manifest');
    expect(undeclared.stdout).toContain('0 passed, 1 failed (0 fixtures, 1 toolpack)');
  });

  it('exits 3 when the pack has not been built, naming the digest', async () => {
    const fresh = await helix(['new', 'unbuilt-tool', '--dir', path.join(work.dir, 'unbuilt')]);
    expect(fresh.code).toBe(0);
    const r = await helix(['test', path.join(work.dir, 'unbuilt', 'unbuilt-tool')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('helix: P-PRECOND-MANIFEST-INVALID:');
    expect(r.stderr).toMatch(/unbuilt-tool\.tool\.yaml.*digest/);
  });

  it("keeps each fixture's store under --home when asked", async () => {
    const keep = path.join(work.dir, 'kept-home');
    const r = await helix(['test', pack, '--home', keep]);
    expect(r.code).toBe(0);
    const fixtures = readdirSync(path.join(pack, 'fixtures'))
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(readdirSync(path.join(keep, 'hello.tool')).sort()).toEqual(fixtures.map((f) => f.slice(0, -'.json'.length)).sort());
    const runs = await helix(['runs', 'list', '--home', path.join(keep, 'hello.tool', fixtures[0]!.slice(0, -'.json'.length))]);
    expect(runs.code).toBe(0);
    expect(runs.stdout).toContain('hello.tool');
  });

  it("runs every bundled toolpack's fixtures with `helix test plugins/`", async () => {
    const plugins = path.join(packageRoot(), 'plugins');
    let expected = 0;
    for (const dir of readdirSync(plugins)) {
      const manifest = readdirSync(path.join(plugins, dir)).find((f) => f.endsWith('.tool.yaml'));
      if (manifest === undefined) continue;
      const doc = parseYaml(readFileSync(path.join(plugins, dir, manifest), 'utf8')) as { kind?: string; health?: { fixtures: string } };
      // A container toolpack runs only under a policy granting it docker.run: helix test does not run it.
      if (doc.kind === 'container') continue;
      const fixtures = doc.health?.fixtures;
      expect(fixtures, `${dir} declares fixtures`).toBeDefined();
      expected += readdirSync(path.join(plugins, dir, fixtures!)).filter((f) => f.endsWith('.json')).length;
    }
    const r = await helix(['test', 'plugins/'], packageRoot());
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('ok    ')).length).toBe(expected);
    expect(r.stdout).toContain(`${expected} passed, 0 failed (${expected} fixtures,`);
  });
});

// Section 8 of the guide, from its own code blocks: a streaming tool reading a FASTA artifact
// and writing a TSV artifact, tested with @data/@artifact fixtures and called on an import.
describe("the guide's streaming example", () => {
  const guide = readFileSync(path.join(packageRoot(), 'sdk-guest', 'GUIDE.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## 8. Streaming artifacts'), guide.indexOf('## 9.'));
  const FENCE = '```';
  const block = (lang: string, text = section) => {
    const opening = text.indexOf(`${FENCE}${lang}\n`);
    return text.slice(opening + lang.length + 4, text.indexOf(`\n${FENCE}`, opening) + 1);
  };
  const dir = path.join(work.dir, 'streaming', 'fasta-lengths');
  const fasta = '>chr1 first\r\nACGTACGTAC\r\nGGT\r\n>chr2\n\n>chr3\nNNNN';
  const lengths = 'chr1 first\t13\nchr2\t0\nchr3\t4\n';

  beforeAll(async () => {
    expect((await helix(['new', 'fasta-lengths', '--dir', path.dirname(dir)])).code).toBe(0);
    writeFileSync(path.join(dir, 'assembly', 'index.ts'), block('ts'));
    const manifestFile = path.join(dir, 'fasta-lengths.tool.yaml');
    const manifest = {
      ...(parseYaml(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>),
      ...(parseYaml(block('yaml')) as Record<string, unknown>),
    };
    (manifest.limits as Record<string, unknown>).maxCapabilityCalls = 1000;
    writeFileSync(manifestFile, stringifyYaml(manifest));
    const idSchema = (description: string) => ({ type: 'string', 'x-helix-artifact': true, description });
    writeFileSync(
      path.join(dir, 'schemas', 'input.json'),
      JSON.stringify({
        type: 'object',
        additionalProperties: false,
        required: ['fasta'],
        properties: { fasta: idSchema('FASTA artifact') },
      }),
    );
    writeFileSync(
      path.join(dir, 'schemas', 'output.json'),
      JSON.stringify({
        type: 'object',
        additionalProperties: false,
        required: ['lengths', 'records'],
        properties: { lengths: idSchema('TSV artifact'), records: { type: 'integer' } },
      }),
    );
    mkdirSync(path.join(dir, 'data'), { recursive: true });
    writeFileSync(path.join(dir, 'data', 'small.fa'), fasta);
    writeFileSync(path.join(dir, 'data', 'small.fa.gz'), gzipSync(fasta));
    writeFileSync(path.join(dir, 'data', 'small.lengths.tsv'), lengths);
    writeFileSync(path.join(dir, 'data', 'no-header.fa'), 'ACGT\n>late\n');
    for (const f of readdirSync(path.join(dir, 'fixtures'))) rmSync(path.join(dir, 'fixtures', f));
    // The gzip fixture is the guide's own (section 9).
    const fixtureBlock = block('json', guide.slice(guide.lastIndexOf('```json\n', guide.indexOf('"@data/small.fa.gz"'))));
    expect(JSON.parse(fixtureBlock)).toMatchObject({ input: { fasta: '@data/small.fa.gz' } });
    writeFileSync(path.join(dir, 'fixtures', 'small-gzip.json'), fixtureBlock);
    writeFileSync(path.join(dir, 'fixtures', 'small.json'), fixtureBlock.replace('small.fa.gz', 'small.fa'));
    writeFileSync(
      path.join(dir, 'fixtures', 'no-header.json'),
      JSON.stringify({ input: { fasta: '@data/no-header.fa' }, expect: { error_code: 'D-DATA-FORMAT', error_details: { line: 1 } } }),
    );
    const b = await helix(['build'], dir);
    expect(b.code, b.stderr).toBe(0);
  }, 120_000);

  it("builds from the guide's code and passes @data/@artifact fixtures, plain and gzip", async () => {
    const r = await helix(['test'], dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('3 passed, 0 failed (3 fixtures, 1 toolpack)');
  });

  it('names the first differing line when an artifact differs', async () => {
    writeFileSync(path.join(dir, 'data', 'small.lengths.tsv'), lengths.replace('chr3\t4', 'chr3\t5'));
    const r = await helix(['test'], dir);
    writeFileSync(path.join(dir, 'data', 'small.lengths.tsv'), lengths);
    expect(r.code).toBe(1);
    const at = lengths.indexOf('chr3\t4') + 5;
    expect(r.stdout).toMatch(
      new RegExp(
        `^FAIL  fasta\\.lengths small\\.json: /lengths: artifact art_\\w+ differs from data/small\\.lengths\\.tsv: first difference at byte ${at}, line 3: expected "chr3\\\\t5", got "chr3\\\\t4"`,
        'm',
      ),
    );
  });

  it('is called on an imported file and its artifact exported, as the guide shows', async () => {
    const imported = await helix(['artifact', 'import', 'data/small.fa'], dir);
    expect(imported.code, imported.stderr).toBe(0);
    const id = (JSON.parse(imported.stdout) as { id: string }).id;
    const called = await helix(['call', 'fasta.lengths', '--toolpacks', '.', '--input', JSON.stringify({ fasta: id })], dir);
    expect(called.code, called.stdout).toBe(0);
    const output = ResponseEnvelopeSchema.parse(JSON.parse(called.stdout)).output as { lengths: string; records: number };
    expect(output.records).toBe(3);
    expect((await helix(['artifact', 'export', output.lengths, 'lengths.tsv'], dir)).code).toBe(0);
    expect(readFileSync(path.join(dir, 'lengths.tsv'), 'utf8')).toBe(lengths);
  });
});

describe('helix new refuses', () => {
  const refused = async (args: string[], code: string, message: RegExp) => {
    const r = await helix(['new', ...args, '--dir', path.join(work.dir, 'refused')]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^helix: ${code}: `, 'm'));
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/\nhint: \S/);
    return r;
  };

  it('a name that cannot be a directory and file name', async () => {
    await refused(['1-tool'], 'I-REQ-TOOLPACK-NAME', /"1-tool" cannot be used/);
    await refused(['../escape'], 'I-REQ-TOOLPACK-NAME', /"\.\.\/escape" cannot be used/);
    await refused(['two--dashes'], 'I-REQ-TOOLPACK-NAME', /"two--dashes"/);
    expect(existsSync(path.join(work.dir, 'refused'))).toBe(false);
    expect(existsSync(path.join(work.dir, 'escape'))).toBe(false);
  });

  it('a name that gives no dotted id, and a bad --id', async () => {
    const r = await refused(['hello'], 'I-REQ-TOOL-ID', /The name "hello" gives the tool id "hello"/);
    expect(r.stderr).toContain('--id');
    await refused(['hello-tool', '--id', 'Hello.Tool'], 'I-REQ-TOOL-ID', /"Hello\.Tool"/);
    await refused(['hello-tool', '--id', 'seq.2x'], 'I-REQ-TOOL-ID', /"seq\.2x"/);
    expect(existsSync(path.join(work.dir, 'refused'))).toBe(false);
  });

  it('an existing non-empty target, leaving it untouched', async () => {
    const parent = path.join(work.dir, 'occupied');
    mkdirSync(path.join(parent, 'taken-tool'), { recursive: true });
    writeFileSync(path.join(parent, 'taken-tool', 'notes.txt'), 'mine');
    const r = await helix(['new', 'taken-tool', '--dir', parent]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^helix: I-REQ-TARGET-NOT-EMPTY: .*taken-tool already exists and is not empty/m);
    expect(readdirSync(path.join(parent, 'taken-tool'))).toEqual(['notes.txt']);
  });

  it('a description longer than a manifest holds', async () => {
    await refused(
      ['long-tool', '--description', 'x'.repeat(2001)],
      'I-REQ-TOO-LARGE',
      /The description has 2001 characters; a manifest's description has 1 to 2000/,
    );
    expect(existsSync(path.join(work.dir, 'refused'))).toBe(false);
  });

  it('an unknown --lang', async () => {
    const r = await helix(['new', 'some-tool', '--lang', 'rust']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Allowed choices are as, c, extism/);
  });
});

describe('helix new accepts', () => {
  it('an empty target directory, an explicit id and a description needing quotes', async () => {
    const parent = path.join(work.dir, 'empty-parent');
    mkdirSync(path.join(parent, 'Quoted_Tool'), { recursive: true });
    const description = 'Counts "things": fast # not a comment \\ really';
    const r = await helix(['new', 'Quoted_Tool', '--dir', parent, '--id', 'lab.quoted', '--description', description]);
    expect(r.code, r.stderr).toBe(0);
    const manifest = manifestOf(path.join(parent, 'Quoted_Tool'));
    expect(manifest).toMatchObject({ id: 'lab.quoted', description, module: 'build/Quoted_Tool.wasm' });
    expect(readFileSync(path.join(parent, 'Quoted_Tool', 'README.md'), 'utf8')).toContain(description);
  });
});

describe('helix build', () => {
  it('exits 1 with the compiler message on a broken source, leaving module and digest alone', async () => {
    const dir = copyOfPack('broken');
    const digest = manifestOf(dir).digest;
    const moduleBefore = sha256(path.join(dir, 'build', 'hello-tool.wasm'));
    const source = path.join(dir, 'assembly', 'index.ts');
    writeFileSync(source, readFileSync(source, 'utf8').replace('let records: i64 = 0;', 'let records: i64 = "zero";'));
    const r = await helix(['build', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^FAIL {2}.*broken: .*compile failed:/m);
    expect(r.stderr).toMatch(/TS2322: Type '~lib\/string\/String' is not assignable to type 'i64'/);
    expect(r.stderr).toContain('1 of 1 toolpack failed to build');
    expect(manifestOf(dir).digest).toBe(digest);
    expect(sha256(path.join(dir, 'build', 'hello-tool.wasm'))).toBe(moduleBefore);
  });

  it('exits 2 when the directory holds no toolpack', async () => {
    const empty = path.join(work.dir, 'nothing-here');
    mkdirSync(empty);
    const r = await helix(['build', empty]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^helix: P-PRECOND-PLUGINS-DIR: No toolpack .* in or under .*nothing-here/m);
  });

  it('uses a copy of @helix/sdk-as the pack installed itself, as packed by npm', async () => {
    const dir = copyOfPack('own-sdk');
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir, '-w', 'sdk-guest/assemblyscript'], {
      cwd: packageRoot(),
    });
    const tarball = (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename;
    const modules = path.join(dir, 'node_modules', '@helix', 'sdk-as');
    mkdirSync(modules, { recursive: true });
    await run('tar', ['xzf', path.join(dir, tarball), '-C', modules, '--strip-components=1']);
    // The packed SDK alone builds the same module as the SDK in the repository.
    const same = await helix(['build', dir]);
    expect(same.code, same.stderr).toBe(0);
    expect(manifestOf(dir).digest).toBe(manifestOf(pack).digest);
    // And it is this copy that is used: break its config and the build fails on it.
    const config = path.join(modules, 'asconfig.json');
    writeFileSync(config, readFileSync(config, 'utf8').replace('helixAbort', 'helixAbortMissing'));
    const broken = await helix(['build', dir]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("Element '~lib/@helix/sdk-as/assembly/panic/helixAbortMissing' not found");
  });
});

describe('helix new --lang c', () => {
  it('creates a C pack that builds and passes its fixtures', async () => {
    const parent = path.join(work.dir, 'c-packs');
    const made = await helix(['new', 'hello-c', '--lang', 'c', '--dir', parent]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('(C template, tool hello.c)');
    const dir = path.join(parent, 'hello-c');
    const b = await helix(['build'], dir);
    expect(b.code, b.stderr).toBe(0);
    const module = path.join(dir, String(manifestOf(dir).module));
    expect(manifestOf(dir).digest).toBe(sha256(module));
    const t = await helix(['test'], dir);
    expect(t.code, t.stdout + t.stderr).toBe(0);
    expect(t.stdout).toMatch(/\d+ passed, 0 failed/);
  });
});
