// A plugin author's first tool, for each template (AssemblyScript, C, Extism): the commands of
// sdk-guest/GUIDE.md's walkthrough, read from the guide itself and run as written through the
// real CLI (dist/cli/main.js) in a temporary directory outside the repository: `helix
// new`, `helix build`, `helix test` (fixtures that read data artifacts), `helix artifact
// import` of a data file, and `helix call` of the new tool on it.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { DEFAULT_DESCRIPTION } from '../cli/new-command.js';
import { packageRoot } from '../host/1-base/paths.js';
import { digestOf, tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
const guide = readFileSync(path.join(packageRoot(), 'sdk-guest', 'GUIDE.md'), 'utf8');

const work = tempDir('helix-author-');
afterAll(() => work.cleanup());

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function helix(args: string[], cwd: string, home: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, HELIX_HOME: home },
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The walkthrough's commands: the first `sh` block of section 2, one command a line. */
function walkthrough(): string[][] {
  const section = guide.slice(guide.indexOf('## 2. Your first tool'), guide.indexOf('## 3.'));
  const start = section.indexOf('```sh\n') + '```sh\n'.length;
  const block = section.slice(start, section.indexOf('```', start));
  // Words, and single-quoted words as the shell reads them.
  return block
    .trim()
    .split('\n')
    .map((line) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!));
}

const LANGS = [
  { lang: 'as', name: 'AssemblyScript' },
  { lang: 'c', name: 'C' },
  { lang: 'extism', name: 'Extism' },
] as const;

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));

describe("the guide's first tool, followed literally outside the repository", () => {
  it('is helix new, cd, build, test, artifact import and call, in that order', () => {
    const commands = walkthrough().map((words) => words.join(' '));
    const expected = [
      'helix new hello-tool',
      'cd hello-tool',
      'helix build',
      'helix test',
      'helix artifact import data/',
      'helix call hello.tool --toolpacks .',
    ];
    expect(commands.length).toBe(expected.length);
    for (const [i, prefix] of expected.entries()) expect(commands[i]).toMatch(new RegExp(`^${prefix.replace(/\./g, '\\.')}`));
  });

  for (const { lang, name } of LANGS) {
    it(`works for --lang ${lang}: built, fixtures passed on data artifacts, called on an imported file`, async () => {
      const parent = path.join(work.dir, lang);
      const home = path.join(work.dir, `${lang}-home`);
      mkdirSync(parent);
      let cwd = parent;
      let imported: string | undefined;
      let called: Ran | undefined;
      for (const words of walkthrough()) {
        if (words[0] === 'cd') {
          cwd = path.join(cwd, words[1]!);
          continue;
        }
        let args = words.slice(1);
        if (args[0] === 'new' && lang !== 'as') {
          // The guide names the option for the other languages.
          expect(guide).toContain(`\`helix new ${args[1]} --lang ${lang}\``);
          args = [...args, '--lang', lang];
        }
        if (args[0] === 'call') args = args.map((a) => a.replace('art_...', imported!));
        const r = await helix(args, cwd, home);
        expect(r.code, `helix ${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
        if (args[0] === 'new') expect(r.stdout).toContain(`(${name} template, tool hello.tool)`);
        if (args[0] === 'test') expect(r.stdout).toMatch(/^5 passed, 0 failed \(5 fixtures, 1 toolpack\)$/m);
        if (args[0] === 'artifact') imported = (JSON.parse(r.stdout) as { id: string }).id;
        if (args[0] === 'call') called = r;
      }

      // helix build pinned the digest of the module it wrote.
      const manifest = parseYaml(readFileSync(path.join(cwd, 'hello-tool.tool.yaml'), 'utf8')) as {
        digest: string;
        module: string;
        abi: string;
        description: string;
      };
      expect(manifest.digest).toBe(digestOf(readFileSync(path.join(cwd, manifest.module))));
      expect(manifest.abi).toBe(lang === 'extism' ? 'extism/v1' : 'helix/v1');
      // The fixtures helix test passed read data files and expect artifact bytes.
      const fixtures = readdirSync(path.join(cwd, 'fixtures')).map((f) => readFileSync(path.join(cwd, 'fixtures', f), 'utf8'));
      expect(fixtures.some((f) => f.includes('"@data/example.fa"') && f.includes('"@artifact:data/example.fa.lengths.tsv"'))).toBe(true);
      expect(fixtures.some((f) => f.includes('"D-DATA-FORMAT"'))).toBe(true);

      // The call succeeded on the imported file and wrote the lengths artifact.
      const response = ResponseEnvelopeSchema.parse(JSON.parse(called!.stdout));
      expect(response.status).toBe('success');
      const output = response.output as { lengths: string };
      expect(output).toEqual({ format: 'FASTA', records: 4, total_length: 68, lengths: expect.stringMatching(/^art_/) });
      const listed = await helix(['artifact', 'list'], cwd, home);
      expect(listed.stdout).toContain(imported!);
      expect(listed.stdout).toMatch(new RegExp(`^${output.lengths}\\s+tsv\\s.*record lengths$`, 'm'));
      const exported = await helix(['artifact', 'export', output.lengths, 'lengths.tsv'], cwd, home);
      expect(exported.code, exported.stderr).toBe(0);
      expect(readFileSync(path.join(cwd, 'lengths.tsv'), 'utf8')).toBe(
        readFileSync(path.join(cwd, 'data', 'example.fa.lengths.tsv'), 'utf8'),
      );

      // Generated text reads right for the name: no placeholder left, and the id is never
      // spliced into a sentence (the description is about the tool, not its id).
      for (const file of files(cwd).filter(
        (f) => !f.includes(`${path.sep}build${path.sep}`) && !f.includes(`${path.sep}.helix`) && !f.endsWith('.gz'),
      )) {
        expect(readFileSync(file, 'utf8'), file).not.toMatch(/__(NAME|ID|DESCRIPTION)__/);
      }
      expect(manifest.description).toBe(DEFAULT_DESCRIPTION);
      expect(readFileSync(path.join(cwd, 'README.md'), 'utf8').split('\n')[2]).toBe(`\`hello.tool\`: ${DEFAULT_DESCRIPTION}`);
    }, 300_000);
  }
});
