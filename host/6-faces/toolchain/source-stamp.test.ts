// The source stamp on hand-made packs: which files are build inputs, and what checkSourcesFresh
// says after each kind of edit. The stamp is written by the same function `helix build` uses.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { sha256Digest } from '../../1-base/hashing.js';
import { checkSourcesFresh, collectSourceInputs, staleLine, stampPath, stampText } from './source-stamp.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function pack(tree: Record<string, string>): string {
  const t = tempDir('helix-stamp-');
  cleanups.push(t.cleanup);
  for (const [name, text] of Object.entries(tree)) {
    mkdirSync(path.dirname(path.join(t.dir, name)), { recursive: true });
    writeFileSync(path.join(t.dir, name), text);
  }
  return t.dir;
}

// What buildToolpack does after compiling: the module, then its stamp.
function build(dir: string, moduleBytes = 'module'): { packDir: string; modulePath: string } {
  const modulePath = path.join(dir, 'build', 'm.wasm');
  mkdirSync(path.dirname(modulePath), { recursive: true });
  writeFileSync(modulePath, moduleBytes);
  writeFileSync(stampPath(modulePath), stampText(dir, modulePath, sha256Digest(moduleBytes), collectSourceInputs(dir), 'sdk'));
  return { packDir: dir, modulePath };
}

describe('collectSourceInputs', () => {
  it('collectSourceInputs takes asconfig.json, its entries and local extends, and everything under assembly/, but no hidden files or backups', () => {
    const dir = pack({
      'asconfig.json': JSON.stringify({ extends: './base.json', entries: ['lib/entry.ts', '../outside.ts'] }),
      'base.json': '{}',
      'lib/entry.ts': '',
      'lib/unnamed.ts': '',
      'assembly/index.ts': '',
      'assembly/util/deep.ts': '',
      'assembly/.index.ts.swp': '',
      'assembly/index.ts~': '',
      'schemas/input.json': '{}',
    });
    const inputs = collectSourceInputs(dir);
    expect(inputs.language).toBe('assemblyscript');
    expect(Object.keys(inputs.files)).toEqual(['asconfig.json', 'assembly/index.ts', 'assembly/util/deep.ts', 'base.json', 'lib/entry.ts']);
  });

  it('collectSourceInputs takes every file under src/ of a C pack, headers included', () => {
    const dir = pack({ 'src/main.c': 'int x;', 'src/include/util.h': '', 'README.md': '' });
    expect(collectSourceInputs(dir)).toEqual({
      language: 'c',
      files: { 'src/include/util.h': sha256Digest(''), 'src/main.c': sha256Digest('int x;') },
    });
  });
});

describe('checkSourcesFresh', () => {
  it('checkSourcesFresh says fresh right after a build, and names each changed, appeared and disappeared file', () => {
    const dir = pack({ 'src/a.c': 'a', 'src/b.c': 'b' });
    const built = build(dir);
    expect(checkSourcesFresh(built)).toEqual({ state: 'fresh' });
    writeFileSync(path.join(dir, 'src/a.c'), 'a2');
    writeFileSync(path.join(dir, 'src/c.c'), 'c');
    rmSync(path.join(dir, 'src/b.c'));
    const stale = checkSourcesFresh(built);
    expect(stale).toEqual({ state: 'stale', changed: ['src/a.c'], appeared: ['src/c.c'], disappeared: ['src/b.c'] });
    if (stale.state !== 'stale') return;
    expect(staleLine(dir, stale)).toBe(
      `stale: ${dir}: src/a.c changed, src/c.c appeared, src/b.c disappeared since the last build; run \`helix build ${dir}\``,
    );
    build(dir);
    expect(checkSourcesFresh(built)).toEqual({ state: 'fresh' });
  });

  it('checkSourcesFresh knows nothing without a stamp, or when the module is not the one the stamp was written for', () => {
    const dir = pack({ 'src/a.c': 'a' });
    const modulePath = path.join(dir, 'build', 'm.wasm');
    expect(checkSourcesFresh({ packDir: dir, modulePath })).toEqual({ state: 'unknown', reason: 'no m.sources.json' });
    build(dir);
    writeFileSync(modulePath, 'another module');
    writeFileSync(path.join(dir, 'src/a.c'), 'edited');
    expect(checkSourcesFresh({ packDir: dir, modulePath })).toEqual({
      state: 'unknown',
      reason: 'the stamp was written for another module',
    });
  });

  it('staleLine lists three files and counts the rest', () => {
    const line = staleLine('/p', { state: 'stale', changed: ['a', 'b', 'c', 'd', 'e'], appeared: [], disappeared: [] });
    expect(line).toBe('stale: /p: a, b, c and 2 more changed since the last build; run `helix build /p`');
  });
});
