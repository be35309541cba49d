// helix new's pack, made in a temporary folder for each language: what git keeps of it.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { tempDir } from '../test/helpers/toolpack.js';
import { BARE_DESCRIPTION, createToolpack, PACK_GITIGNORE, TEMPLATE_LANGS } from './new-command.js';

const work = tempDir('helix-new-');
afterAll(() => work.cleanup());

/** Whether git, in a repository made at `dir`, ignores `file` (relative to it). */
function ignored(dir: string, file: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', '--no-index', file], { cwd: dir, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('helix new', () => {
  for (const lang of TEMPLATE_LANGS) {
    it(`writes a .gitignore in a ${lang} pack that keeps the store out of git and the module and sources in`, () => {
      const created = createToolpack(`hello-${lang}`, { lang, dir: work.dir });
      expect(created.files).toContain('.gitignore');
      expect(readFileSync(path.join(created.dir, '.gitignore'), 'utf8')).toBe(PACK_GITIGNORE);
      execFileSync('git', ['init', '-q'], { cwd: created.dir });
      expect(ignored(created.dir, '.helix/helix.mdb')).toBe(true);
      expect(ignored(created.dir, 'node_modules/x/index.js')).toBe(true);
      expect(ignored(created.dir, `build/hello-${lang}.wasm`)).toBe(false);
      expect(ignored(created.dir, `hello-${lang}.tool.yaml`)).toBe(false);
      expect(created.files.filter((f) => ignored(created.dir, f))).toEqual([]);
    });
  }
});

/** Every file under `dir`, relative to it, sorted. */
function filesUnder(dir: string, relative = ''): string[] {
  return readdirSync(path.join(dir, relative), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(dir, path.join(relative, e.name)) : [path.join(relative, e.name)]))
    .sort();
}

describe('helix new --bare', () => {
  const code = {
    as: ['asconfig.json', 'assembly/index.ts', 'assembly/tsconfig.json'],
    c: ['src/main.c'],
    extism: ['asconfig.json', 'assembly/index.ts', 'assembly/tsconfig.json'],
  };
  for (const lang of TEMPLATE_LANGS) {
    it(`writes the ${lang} skeleton: its code, schemas, one data file and two fixtures, every name substituted`, () => {
      const created = createToolpack(`bare-${lang}`, { lang, dir: work.dir, bare: true, id: `my.bare_${lang}` });
      expect(created.bare).toBe(true);
      const expected = [
        '.gitignore',
        'README.md',
        `bare-${lang}.tool.yaml`,
        'data/example.txt',
        'fixtures/count.json',
        'fixtures/missing-input.json',
        'schemas/input.json',
        'schemas/output.json',
        ...code[lang],
      ].sort();
      expect(created.files).toEqual(expected);
      expect(filesUnder(created.dir)).toEqual(expected);
      for (const file of created.files)
        expect(readFileSync(path.join(created.dir, file), 'utf8'), file).not.toMatch(/__(NAME|ID|DESCRIPTION)__/);
      const manifest = parseYaml(readFileSync(path.join(created.dir, `bare-${lang}.tool.yaml`), 'utf8')) as {
        limits: { perInputMiB: Record<string, number> };
        capabilities: { allow: string[] };
        declaredOutputs?: unknown;
      };
      expect(manifest).toMatchObject({ id: `my.bare_${lang}`, description: BARE_DESCRIPTION, module: `build/bare-${lang}.wasm` });
      // The code reads the artifact, so its budgets grow with it, and it asks for no more than it calls.
      expect(Object.keys(manifest.limits.perInputMiB).sort()).toEqual(['fuel', 'maxCapabilityCalls', 'timeoutMs']);
      expect(manifest.capabilities.allow).toEqual(['artifact.stat', 'artifact.read']);
      expect(manifest.declaredOutputs).toBeUndefined();
      const readme = readFileSync(path.join(created.dir, 'README.md'), 'utf8');
      expect(readme).toMatch(new RegExp(`^# bare-${lang}\n\n\`my.bare_${lang}\`: ${BARE_DESCRIPTION.replace(/[.()]/g, '\\$&')}`));
      expect(readme).toContain(`helix call my.bare_${lang} --toolpacks . --input '{"file":"@file:data/example.txt"}'`);
      const input = JSON.parse(readFileSync(path.join(created.dir, 'schemas/input.json'), 'utf8'));
      expect(input).toMatchObject({ title: `my.bare_${lang} input`, properties: { file: { 'x-helix-artifact': true } } });
      // The one success fixture reads the one data file, whose 46 bytes and 3 lines it expects.
      const fixture = JSON.parse(readFileSync(path.join(created.dir, 'fixtures/count.json'), 'utf8'));
      expect(fixture).toMatchObject({ input: { file: '@data/example.txt' }, expect: { output: { bytes: 46, lines: 3 } } });
      const data = readFileSync(path.join(created.dir, 'data/example.txt'), 'utf8');
      expect([data.length, data.split('\n').length]).toEqual([46, 3]);
    });
  }

  it('keeps the worked example without --bare', () => {
    const created = createToolpack('full-as', { lang: 'as', dir: work.dir });
    expect(created.bare).toBe(false);
    expect(created.files).toContain('data/example.fa');
    expect(created.files).not.toContain('data/example.txt');
  });
});
