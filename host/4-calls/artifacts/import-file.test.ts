// The import boundary under attack, on real files and a real store: every refusal has its code,
// names the path, and leaves the store exactly as it was.
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PolicySchema, type Policy } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { packageRoot } from '../../1-base/paths.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { importFile } from './import-file.js';

let t: { dir: string; cleanup: () => void };
let data: string;
let outside: string;
let store: Store;
let policy: Policy;

const makePolicy = (importRoots: string[], maxImportBytes = 1 << 20): Policy =>
  PolicySchema.parse({ version: 1, tools: { allow: [] }, ceilings: { maxImportBytes }, paths: { importRoots, exportRoots: [] } });

beforeEach(() => {
  t = tempDir('helix-import-');
  const root = realpathSync(t.dir);
  data = path.join(root, 'data');
  outside = path.join(root, 'outside');
  mkdirSync(data);
  mkdirSync(outside);
  store = openStore(path.join(root, 'home'));
  policy = makePolicy([data]);
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

/** A store's artifact and blob counts (default the test's store), to show a refusal wrote nothing. */
const counts = (s: Store = store): { artifacts: number; blobs: number } => ({
  artifacts: rawDatabases(s).artifacts.getKeysCount(),
  blobs: rawDatabases(s).blobs.getKeysCount(),
});

/** The unprivileged user a root test process drops to: `nobody` on Debian. */
const NOBODY = { uid: 65534, gid: 65534 };

/**
 * Runs importFile (the built one, dist/) in a child process as `nobody`, on a store under `home`
 * and the import roots of `policy`; resolves with the error it threw, as plain fields.
 */
function importAsNobody(home: string, p: Policy, file: string): Promise<{ name?: string; code?: string; message?: string; hint?: string }> {
  const dist = (rel: string): string => pathToFileURL(path.join(packageRoot(), 'dist', rel)).href;
  for (const rel of ['host/4-calls/artifacts/import-file.js', 'host/3-store/open-store.js']) {
    if (!existsSync(new URL(dist(rel)))) throw new Error(`dist/${rel} is missing: run \`npm run build\` before this test`);
  }
  const script = `
    const { importFile } = await import(${JSON.stringify(dist('host/4-calls/artifacts/import-file.js'))});
    const { openStore } = await import(${JSON.stringify(dist('host/3-store/open-store.js'))});
    const [home, policy, file] = JSON.parse(process.argv[1]);
    const store = openStore(home);
    let out = { imported: true };
    try { await importFile(store, policy, file); } catch (e) { out = { name: e.name, code: e.code, message: e.message, hint: e.hint }; }
    await store.close();
    process.stdout.write(JSON.stringify(out));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script, JSON.stringify([home, p, file])],
      { ...NOBODY, cwd: '/' },
      (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`the import as nobody failed to run: ${stderr || err.message}`));
        else resolve(JSON.parse(stdout) as { name?: string; code?: string; message?: string; hint?: string });
      },
    );
  });
}

async function expectRefused(file: string, code: string, message: RegExp, p: Policy = policy): Promise<void> {
  const before = counts();
  const err = await importFile(store, p, file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `importing ${file} should fail`).toMatchObject({ name: 'HelixError', code });
  expect((err as Error).message).toMatch(message);
  expect((err as { hint: string }).hint.length).toBeGreaterThan(0);
  expect(counts()).toEqual(before);
}

describe('importFile', () => {
  it('importFile imports a regular file inside a root, recording its real path and mtime', async () => {
    const file = path.join(data, 'reads.fa');
    writeFileSync(file, '>r1\nACGT\n');
    const record = await importFile(store, policy, file, { label: 'reads' });
    expect(record).toMatchObject({
      type: 'fasta',
      size: 9,
      label: 'reads',
      source: { kind: 'import', path: file, mtime_ms: statSync(file).mtimeMs },
    });
    expect(counts()).toEqual({ artifacts: 1, blobs: 1 });
  });

  it('importFile refuses a symbolic link to a file, even one inside the root', async () => {
    writeFileSync(path.join(data, 'real.txt'), 'hello\n');
    symlinkSync(path.join(data, 'real.txt'), path.join(data, 'link.txt'));
    await expectRefused(path.join(data, 'link.txt'), 'A-AUTH-SYMLINK', /link\.txt: it is a symbolic link/);
  });

  it('importFile refuses a path that goes through a symbolic link to a directory', async () => {
    mkdirSync(path.join(data, 'real-dir'));
    writeFileSync(path.join(data, 'real-dir', 'f.txt'), 'hello\n');
    symlinkSync(path.join(data, 'real-dir'), path.join(data, 'dir-link'));
    await expectRefused(
      path.join(data, 'dir-link', 'f.txt'),
      'A-AUTH-SYMLINK',
      /goes through a symbolic link \(its real path is .*real-dir\/f\.txt\)/,
    );
  });

  it('importFile refuses a link inside the root that points outside it', async () => {
    writeFileSync(path.join(outside, 'secret'), 'key\n');
    symlinkSync(path.join(outside, 'secret'), path.join(data, 'escape'));
    symlinkSync(outside, path.join(data, 'escape-dir'));
    await expectRefused(path.join(data, 'escape'), 'A-AUTH-SYMLINK', /symbolic link/);
    await expectRefused(path.join(data, 'escape-dir', 'secret'), 'A-AUTH-SYMLINK', /symbolic link/);
  });

  it('importFile refuses .. that climbs out of the root', async () => {
    writeFileSync(path.join(outside, 'secret'), 'key\n');
    await expectRefused(`${data}/../outside/secret`, 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside\/secret: it is outside the import roots/);
    await expectRefused(`${data}/sub/../../outside/secret`, 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside the import roots/);
  });

  it('importFile refuses a path outside the roots without revealing whether it exists', async () => {
    writeFileSync(path.join(outside, 'secret'), 'key\n');
    await expectRefused(path.join(outside, 'secret'), 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside the import roots \(.*data\)/);
    await expectRefused(path.join(outside, 'no-such-file'), 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside the import roots/);
    await expectRefused(path.join(data, 'x'), 'A-AUTH-PATH-OUTSIDE-ROOTS', /has no import roots/, makePolicy([]));
  });

  it('importFile refuses the root itself, a directory and a missing file', async () => {
    mkdirSync(path.join(data, 'sub'));
    await expectRefused(data, 'P-PRECOND-PATH', /data: it is the import root itself, a directory/);
    await expectRefused(path.join(data, 'sub'), 'P-PRECOND-PATH', /sub: it is a directory, not a regular file/);
    await expectRefused(path.join(data, 'missing.txt'), 'P-PRECOND-PATH', /missing\.txt: it does not exist/);
  });

  it('importFile refuses a FIFO without blocking on it', async () => {
    const fifo = path.join(data, 'pipe');
    execFileSync('mkfifo', [fifo]);
    await expectRefused(fifo, 'P-PRECOND-PATH', /pipe: it is a FIFO \(named pipe\), not a regular file/);
  });

  it('importFile refuses a character device such as /dev/null', async () => {
    await expectRefused('/dev/null', 'P-PRECOND-PATH', /\/dev\/null: it is a character device/, makePolicy(['/dev']));
  });

  it('importFile refuses a file it may not read', async () => {
    const file = path.join(data, 'locked.txt');
    writeFileSync(file, 'private\n');
    chmodSync(file, 0o000);
    let readable = true;
    try {
      closeSync(openSync(file, 'r'));
    } catch {
      readable = false;
    }
    const refusal = /locked\.txt: it cannot be opened for reading: permission denied/;
    if (!readable) {
      await expectRefused(file, 'P-PRECOND-PATH', refusal);
      return;
    }
    // Root (CAP_DAC_OVERRIDE, as in CI) reads mode-000 files, so the same import runs in a child
    // process as `nobody`, with a store home it may write in and directories it may pass through.
    expect(process.getuid?.(), 'only root reads a mode-000 file').toBe(0);
    const home = path.join(path.dirname(data), 'nobody-home');
    mkdirSync(home);
    chownSync(home, NOBODY.uid, NOBODY.gid);
    for (const dir of [path.dirname(data), data]) chmodSync(dir, 0o755);
    const err = await importAsNobody(home, policy, file);
    expect(err).toMatchObject({ name: 'HelixError', code: 'P-PRECOND-PATH' });
    expect(err.message).toMatch(refusal);
    expect(err.hint?.length).toBeGreaterThan(0);
    const nobodyStore = openStore(home);
    try {
      expect(counts(nobodyStore)).toEqual({ artifacts: 0, blobs: 0 });
    } finally {
      await nobodyStore.close();
    }
    // Root still reads it: the refusal came from the permission alone.
    closeSync(openSync(file, 'r'));
  });

  it('importFile turns a failed read into P-PRECOND-PATH and stores nothing', async () => {
    // /proc/<pid>/mem is a regular file that opens but fails to read at offset 0 (EIO).
    const dir = `/proc/${process.pid}`;
    await expectRefused(`${dir}/mem`, 'P-PRECOND-PATH', /mem: reading it failed: EIO/, makePolicy([dir]));
  });

  it('importFile refuses a file over ceilings.maxImportBytes before reading it', async () => {
    writeFileSync(path.join(data, 'big.bin'), Buffer.alloc(1001));
    await expectRefused(
      path.join(data, 'big.bin'),
      'I-REQ-TOO-LARGE',
      /big\.bin: it is 1001 bytes, above the import limit of 1000 bytes/,
      makePolicy([data], 1000),
    );
  });

  it('importFile refuses a file that grows past the ceiling while it is read', async () => {
    // /proc/<pid>/maps reports size 0 but reads several KiB: the stream check must catch it.
    const dir = `/proc/${process.pid}`;
    await expectRefused(
      `${dir}/maps`,
      'I-REQ-TOO-LARGE',
      /maps: it grew past the import limit of 100 bytes while being read/,
      makePolicy([dir], 100),
    );
  });

  it('importFile refuses a bad label or type before touching the file', async () => {
    await expect(importFile(store, policy, path.join(outside, 'x'), { type: 'Not A Word' })).rejects.toMatchObject({
      code: 'I-REQ-INPUT',
      message: expect.stringMatching(/^Invalid type/),
    });
    await expect(importFile(store, policy, path.join(data, 'x'), { label: '\u0007' })).rejects.toMatchObject({ code: 'I-REQ-INPUT' });
  });
});
