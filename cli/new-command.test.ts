// helix new's pack, made in a temporary folder for each language: what git keeps of it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../test/helpers/toolpack.js';
import { createToolpack, PACK_GITIGNORE, TEMPLATE_LANGS } from './new-command.js';

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
