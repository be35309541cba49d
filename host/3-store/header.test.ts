// The store file's header check on real LMDB files: a sound header passes, and each kind of damage
// to the meta pages (ABI-STORE-010..012) is refused by name before LMDB maps the file.
import { copyFileSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { checkStoreHeader } from './header.js';
import { openStore } from './open-store.js';
import { rawDatabases } from './raw-access.js';

const t = tempDir('helix-header-');
let sound: string;
let pageSize: number;
afterAll(() => t.cleanup());
beforeAll(async () => {
  const store = openStore(path.join(t.dir, 'sound'));
  await store.transaction(() => {
    for (let i = 0; i < 200; i++) rawDatabases(store).meta.putSync(`k${i}`, { i, text: 'x'.repeat(100) });
  });
  await store.close();
  sound = store.path;
  pageSize = readFileSync(sound).readUInt32LE(48);
});

let copies = 0;
/** A copy of the sound file with `bytes` written at `offset`. */
function damaged(offset: number, bytes: Buffer): string {
  copies += 1;
  const file = path.join(t.dir, `copy-${copies}.mdb`);
  copyFileSync(sound, file);
  const fd = openSync(file, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
  return file;
}
const u32 = (n: number): Buffer => Buffer.from(new Uint32Array([n]).buffer);
const u64 = (n: bigint): Buffer => Buffer.from(new BigUint64Array([n]).buffer);

/** The refusal checkStoreHeader gives `file`. */
function refusal(file: string): { code: string; message: string; details: Record<string, unknown> } {
  try {
    checkStoreHeader(file);
  } catch (err) {
    return err as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error(`${file} was accepted`);
}

describe('checkStoreHeader', () => {
  it('accepts a sound store file and reports its page size and newest transaction', () => {
    expect(checkStoreHeader(sound)).toMatchObject({ pageSize, fileBytes: readFileSync(sound).length });
    expect(checkStoreHeader(sound)!.txnid).toBeGreaterThan(0n);
  });

  it('accepts a missing or empty file: LMDB creates the store', () => {
    expect(checkStoreHeader(path.join(t.dir, 'none.mdb'))).toBeUndefined();
    writeFileSync(path.join(t.dir, 'empty.mdb'), '');
    expect(checkStoreHeader(path.join(t.dir, 'empty.mdb'))).toBeUndefined();
  });

  // Each case is a real corruption that made lmdb-js crash the process (SIGSEGV, SIGFPE or SIGBUS).
  const cases: Array<[string, () => string, RegExp]> = [
    ['the magic of meta page 0 (ABI-STORE-010)', () => damaged(24, u32(0)), /meta page 0 lacks the LMDB magic number/],
    ['the magic of meta page 1 (ABI-STORE-010)', () => damaged(pageSize + 24, u32(0x12345678)), /meta page 1 lacks the LMDB magic number/],
    ['the format version (ABI-STORE-010)', () => damaged(28, u32(7)), /format version 7, not 2/],
    ['a zero page size (ABI-STORE-011)', () => damaged(48, u32(0)), /page size 0/],
    ['an odd page size (ABI-STORE-011)', () => damaged(48, u32(4097)), /page size 4097/],
    ['the meta page flag (ABI-STORE-010)', () => damaged(18, Buffer.from([0, 0])), /not marked as a meta page/],
    ['the page number of meta page 1 (ABI-STORE-011)', () => damaged(pageSize, u64(9n)), /meta page 1 carries page number 9/],
    [
      'a last page beyond the file (ABI-STORE-012)',
      () => damaged(pageSize + 24 + 120, u64(1n << 40n)),
      /meta page 1 says the last page is \d+, but the file has \d+ pages/,
    ],
    [
      'a main tree root beyond the last page (ABI-STORE-012)',
      () => damaged(24 + 72 + 40, u64(1n << 30n)),
      /root of the main tree at page \d+/,
    ],
    ['a main tree depth of 0xffff (ABI-STORE-012)', () => damaged(24 + 72 + 6, Buffer.from([0xff, 0xff])), /main tree depth 65535/],
  ];
  it.each(cases)('refuses damage to %s with D-DATA-STORE-HEADER naming the file', (_what, make, problem) => {
    const file = make();
    const err = refusal(file);
    expect(err).toMatchObject({ code: 'D-DATA-STORE-HEADER', details: expect.objectContaining({ path: file }) });
    expect(err.message).toContain(file);
    expect(err.message).toMatch(problem);
  });

  it('refuses a file cut shorter than its two meta pages (ABI-STORE-012)', () => {
    const file = damaged(0, Buffer.alloc(0));
    truncateSync(file, pageSize + 100);
    expect(refusal(file).message).toMatch(/shorter than its two \d+-byte meta pages/);
    truncateSync(file, 10);
    expect(refusal(file).message).toMatch(/too short for an LMDB header/);
  });

  it('openStore refuses a damaged header before LMDB maps the file, and opens the sound one', async () => {
    const home = path.join(t.dir, 'home');
    const store = openStore(home);
    await store.close();
    copyFileSync(damaged(24, u32(0)), store.path);
    expect(() => openStore(home)).toThrow(expect.objectContaining({ code: 'D-DATA-STORE-HEADER' }));
    copyFileSync(sound, store.path);
    const again = openStore(home);
    expect(rawDatabases(again).meta.get('k7')).toMatchObject({ i: 7 });
    await again.close();
  });
});
