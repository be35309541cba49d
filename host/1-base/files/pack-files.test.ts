// Unit tests of the toolpack file reader: containment after symlinks, regular files only, size
// bounds before reading, and the descriptor re-check (ABI-FILE-001..005).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { readPackFile, readRegularFile, realDir, resolveInPack } from './pack-files.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A toolpack directory `pack/` (real path) beside a file `outside.json` holding a marker. */
function layout(): { pack: string; outside: string } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const pack = path.join(t.dir, 'pack');
  mkdirSync(path.join(pack, 'schemas'), { recursive: true });
  writeFileSync(path.join(pack, 'schemas', 'in.json'), '{"type":"object"}');
  const outside = path.join(t.dir, 'outside.json');
  writeFileSync(outside, '{"title":"OUTSIDE-MARKER"}');
  return { pack: realDir(pack), outside };
}

describe('resolveInPack', () => {
  it('resolves a relative path inside the toolpack to its real path', () => {
    const { pack } = layout();
    expect(resolveInPack('schemas/../schemas/in.json', pack, pack)).toEqual({ ok: true, file: path.join(pack, 'schemas', 'in.json') });
  });

  it('refuses absolute paths and paths that climb out (ABI-FILE-001)', () => {
    const { pack, outside } = layout();
    expect(resolveInPack(outside, pack, pack)).toMatchObject({ ok: false, reason: expect.stringMatching(/absolute path.*ABI-FILE-001/) });
    expect(resolveInPack('../outside.json', pack, pack)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/leaves the toolpack directory.*ABI-FILE-001/),
    });
    expect(resolveInPack('..', pack, pack)).toMatchObject({ ok: false });
    expect(resolveInPack('.', pack, pack)).toMatchObject({ ok: false });
  });

  it('refuses a symlink inside the pack that points out of it, file or directory (ABI-FILE-002)', () => {
    const { pack, outside } = layout();
    symlinkSync(outside, path.join(pack, 'schemas', 'link.json'));
    symlinkSync(path.dirname(outside), path.join(pack, 'up'));
    expect(resolveInPack('schemas/link.json', pack, pack)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/symbolic link.*outside.*ABI-FILE-002/),
    });
    expect(resolveInPack('up/outside.json', pack, pack)).toMatchObject({ ok: false, reason: expect.stringMatching(/ABI-FILE-002/) });
  });

  it('follows a symlink that stays inside the pack', () => {
    const { pack } = layout();
    symlinkSync('in.json', path.join(pack, 'schemas', 'alias.json'));
    expect(resolveInPack('schemas/alias.json', pack, pack)).toEqual({ ok: true, file: path.join(pack, 'schemas', 'in.json') });
  });
});

describe('readRegularFile', () => {
  it('reads a regular file within its bound', () => {
    const { pack } = layout();
    const read = readPackFile('schemas/in.json', pack, pack, 100);
    expect(read.ok && read.bytes.toString()).toBe('{"type":"object"}');
  });

  it('refuses a file over the bound before reading it (ABI-FILE-005)', () => {
    const { pack } = layout();
    expect(readPackFile('schemas/in.json', pack, pack, 5)).toEqual({
      ok: false,
      reason: 'is 17 bytes, more than the bound of 5 bytes (ABI-FILE-005)',
    });
  });

  it('refuses a FIFO at once instead of waiting for a writer, and devices and directories (ABI-FILE-003)', () => {
    const { pack } = layout();
    execFileSync('mkfifo', [path.join(pack, 'schemas', 'pipe.json')]);
    expect(readPackFile('schemas/pipe.json', pack, pack, 1000)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/is a FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)/),
    });
    expect(readRegularFile('/dev/zero', 1000)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/is a character device, not a regular file/),
    });
    expect(readPackFile('schemas', pack, pack, 1000)).toMatchObject({ ok: false, reason: expect.stringMatching(/is a directory/) });
  });

  it('does not follow a final symlink inside a toolpack: a link swapped in after the check is refused (ABI-FILE-004)', () => {
    const { pack, outside } = layout();
    const link = path.join(pack, 'schemas', 'swapped.json');
    symlinkSync(outside, link);
    // Called as if the check had seen a regular file at this path: the open must not follow the link.
    const read = readRegularFile(link, 1000, pack);
    expect(read).toMatchObject({ ok: false, reason: expect.stringMatching(/replaced by a symbolic link.*ABI-FILE-004/) });
    expect(JSON.stringify(read)).not.toContain('OUTSIDE-MARKER');
  });

  it('refuses a file swapped with a link to outside while it is resolved and read, with the rule, never reading outside (ABI-FILE-002, -004)', async () => {
    const { pack, outside } = layout();
    const target = path.join(pack, 'schemas', 'race.json');
    writeFileSync(target, '{"type":"object"}');
    // Another process swaps the file for a link to outside and back as fast as it can.
    const script = `const fs = require('node:fs'); const [t, o] = JSON.parse(process.argv[1]); const end = Date.now() + 3000;
      while (Date.now() < end) { try { fs.rmSync(t + '.l', { force: true }); fs.symlinkSync(o, t + '.l'); fs.renameSync(t + '.l', t); fs.writeFileSync(t + '.r', '{}'); fs.renameSync(t + '.r', t); } catch {} }`;
    const child = spawn(process.execPath, ['-e', script, JSON.stringify([target, outside])], { stdio: 'ignore' });
    const reasons = new Set<string>();
    try {
      for (const end = Date.now() + 1500; Date.now() < end; ) {
        const read = readPackFile('schemas/race.json', pack, pack, 1000);
        if (read.ok) expect(read.bytes.toString()).not.toContain('OUTSIDE-MARKER');
        else reasons.add(read.reason.replace(/ \/.*? \(/, ' DIR ('));
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      child.kill('SIGKILL');
    }
    for (const reason of reasons) expect(reason).toMatch(/\(ABI-FILE-00[24]\)$/);
  }, 20_000);

  it('follows a symlinked policy file outside any toolpack: the operator chose it', () => {
    const { pack, outside } = layout();
    const link = path.join(pack, 'policy.json');
    symlinkSync(outside, link);
    expect(readRegularFile(link, 1000)).toMatchObject({ ok: true });
  });

  it('says what is missing without quoting anything', () => {
    const { pack } = layout();
    expect(readPackFile('schemas/gone.json', pack, pack, 10)).toEqual({ ok: false, reason: 'does not exist' });
  });
});
