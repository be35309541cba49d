// The export boundary on real files: verified, atomic writes inside the export roots, and
// refusals that leave the destination directory as it was.
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PolicySchema, type ArtifactRecord, type Policy } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { blobRecord } from '../../3-store/blobs.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { rawDatabases } from '../../3-store/raw-access.js';
import { exportArtifact } from './export-artifact.js';
import { importInline } from './prepare-artifact.js';

let t: { dir: string; cleanup: () => void };
let out: string;
let outside: string;
let store: Store;
let policy: Policy;
let content: Buffer;
let artifact: ArtifactRecord;

beforeEach(async () => {
  t = tempDir('helix-export-');
  const root = realpathSync(t.dir);
  out = path.join(root, 'out');
  outside = path.join(root, 'outside');
  mkdirSync(out);
  mkdirSync(outside);
  store = openStore(path.join(root, 'home'));
  policy = PolicySchema.parse({ version: 1, tools: { allow: [] }, paths: { importRoots: [], exportRoots: [out] } });
  content = Buffer.concat([randomBytes(2 * 1024 * 1024), Buffer.from('tail\n')]);
  artifact = await importInline(store, content, { maxBytes: 8 << 20 });
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

async function expectRefused(dest: string, code: string, message: RegExp, opts: { overwrite?: boolean } = {}): Promise<void> {
  const before = readdirSync(path.dirname(dest)).sort();
  const err = await exportArtifact(store, policy, artifact.id, dest, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `exporting to ${dest} should fail`).toMatchObject({ name: 'HelixError', code });
  expect((err as Error).message).toMatch(message);
  expect(readdirSync(path.dirname(dest)).sort()).toEqual(before);
}

describe('exportArtifact', () => {
  it('exportArtifact writes the exact bytes to a new file and leaves no temporary file', async () => {
    const dest = path.join(out, 'copy.bin');
    expect(await exportArtifact(store, policy, artifact.id, dest)).toEqual({ path: dest, bytes: content.length });
    expect(readFileSync(dest).equals(content)).toBe(true);
    expect(readdirSync(out)).toEqual(['copy.bin']);
  });

  it('exportArtifact refuses a destination outside the export roots, also through ..', async () => {
    await expectRefused(path.join(outside, 'copy.bin'), 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside the export roots/);
    await expectRefused(`${out}/../outside/copy.bin`, 'A-AUTH-PATH-OUTSIDE-ROOTS', /outside\/copy\.bin: it is outside the export roots/);
  });

  it('exportArtifact refuses a directory inside the root that is a link to outside it', async () => {
    symlinkSync(outside, path.join(out, 'elsewhere'));
    await expectRefused(path.join(out, 'elsewhere', 'copy.bin'), 'A-AUTH-PATH-OUTSIDE-ROOTS', /its real path is .*outside\/copy\.bin/);
  });

  it('exportArtifact refuses an existing file unless told to overwrite it', async () => {
    const dest = path.join(out, 'existing.bin');
    writeFileSync(dest, 'keep me');
    await expectRefused(dest, 'P-PRECOND-PATH', /existing\.bin: the file already exists/);
    expect(readFileSync(dest, 'utf8')).toBe('keep me');
    await exportArtifact(store, policy, artifact.id, dest, { overwrite: true });
    expect(readFileSync(dest).equals(content)).toBe(true);
    expect(readdirSync(out)).toEqual(['existing.bin']);
  });

  it('exportArtifact refuses a destination that is a symbolic link, even with overwrite', async () => {
    const target = path.join(outside, 'target.txt');
    writeFileSync(target, 'untouched');
    const dest = path.join(out, 'link.bin');
    symlinkSync(target, dest);
    await expectRefused(dest, 'A-AUTH-SYMLINK', /link\.bin: it is a symbolic link/);
    await expectRefused(dest, 'A-AUTH-SYMLINK', /symbolic link/, { overwrite: true });
    expect(readFileSync(target, 'utf8')).toBe('untouched');
    expect(lstatSync(dest).isSymbolicLink()).toBe(true);
  });

  it('exportArtifact refuses a missing directory and a destination that is a directory', async () => {
    await expect(exportArtifact(store, policy, artifact.id, path.join(out, 'no-dir', 'copy.bin'))).rejects.toMatchObject({
      code: 'P-PRECOND-PATH',
      message: expect.stringMatching(/its directory .*no-dir cannot be used: it does not exist/),
    });
    mkdirSync(path.join(out, 'sub'));
    await expectRefused(path.join(out, 'sub'), 'P-PRECOND-PATH', /sub: it exists and is a directory/, { overwrite: true });
    await expectRefused(`${out}/new/`, 'P-PRECOND-PATH', /names a directory/);
  });

  it('exportArtifact fails with D-DATA-CHECKSUM on a tampered chunk and leaves no destination file', async () => {
    const chunks = blobRecord(store, artifact.sha256)!.chunks;
    expect(chunks).toHaveLength(3);
    // Same length, other bytes: only the hash check can tell.
    rawDatabases(store).chunks.putSync(chunks[1]!, randomBytes(1024 * 1024));
    const dest = path.join(out, 'copy.bin');
    await expectRefused(dest, 'D-DATA-CHECKSUM', /does not match its hash/);
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(out)).toEqual([]);
  });

  it('exportArtifact names a missing artifact and refuses a malformed id', async () => {
    await expect(exportArtifact(store, policy, 'art_00000000000000000000000000', path.join(out, 'x'))).rejects.toMatchObject({
      code: 'P-PRECOND-ARTIFACT-NOT-FOUND',
    });
    await expect(exportArtifact(store, policy, '../etc/passwd', path.join(out, 'x'))).rejects.toMatchObject({ code: 'I-REQ-INPUT' });
    expect(readdirSync(out)).toEqual([]);
  });
});
