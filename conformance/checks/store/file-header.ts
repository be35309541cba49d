// Store checks of the file itself: meta pages that lack the magic, the version, the meta flag or
// their page number, a wrong page size or a misplaced transaction, a truncated file or pages past
// its end, and a store or lock file that is no regular file, each refused before LMDB maps it
// (ABI-STORE-010..013).
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, type Check } from '../../check.js';
import { expectCleanError, firstLine, helix, readAt, storeFile, u16, u32, u64 } from '../../kit/store-kit.js';
import { damagedCopy, expectRefusedEverywhere, soundFile } from './setups.js';
import { packs, policy } from './shared.js';

/** The checks of this file, in the report's order. */
export const fileHeaderChecks: readonly Check[] = [
  // ---------------------------------------------------------------- the file (ABI-STORE-010..013)
  {
    id: 'store.header-magic-version-flag',
    title:
      'A store file whose meta pages lack the magic, the format version, the meta flag or their page number is refused before LMDB maps it',
    category: 'store',
    abi: ['ABI-STORE-010'],
    engines: ['helix'],
    expected:
      'runs list and store check (and, for the first case, call) each exit 3 with one D-DATA-STORE-HEADER naming the file and what is wrong, hinting at a backup and helix store check; the file is unchanged; an empty file is a new store',
    packs,
    policy,
    async run(ctx) {
      const { file: sound, pageSize } = await soundFile(ctx);
      const cases: Array<[string, Array<[number, Buffer]>, RegExp]> = [
        ['magic-meta0', [[24, u32(0)]], /meta page 0 lacks the LMDB magic number/],
        ['magic-meta1', [[pageSize + 24, u32(0x12345678)]], /meta page 1 lacks the LMDB magic number/],
        ['version', [[28, u32(7)]], /format version 7, not 2/],
        ['meta-flag', [[18, u16(0)]], /not marked as a meta page/],
        ['page-number', [[pageSize, u64(9n)]], /meta page 1 carries page number 9/],
      ];
      await Promise.all(
        cases.map(async ([label, edits, problem]) => {
          const home = path.join(ctx.env.dir, `h-${label}`);
          damagedCopy(sound, home, edits);
          const line = await expectRefusedEverywhere(ctx, home, 'D-DATA-STORE-HEADER', 3, problem, label, label === cases[0]![0]);
          expect(line.includes(storeFile(home)), `${label}: the refusal does not name the file: ${line}`);
          const r = await helix(['runs', 'list', '--home', home]);
          expect(
            /backup/.test(r.stderr) && /helix store check/.test(r.stderr),
            `${label}: the hint does not say to restore from a backup and run helix store check: ${r.stderr}`,
          );
        }),
      );
      const empty = path.join(ctx.env.dir, 'h-empty');
      mkdirSync(empty);
      writeFileSync(storeFile(empty), '');
      const listed = await helix(['runs', 'list', '--json', '--home', empty]);
      expect(
        listed.code === 0 && JSON.parse(listed.stdout).length === 0,
        `an empty store file is not a new store: exit ${listed.code} ${listed.stderr.slice(0, 200)}`,
      );
      ctx.observe('empty_file', 'opened as a new store, runs list []');
    },
  },
  {
    id: 'store.header-page-size-and-txnid',
    title:
      'A page size that is no power of two in 512..65536, differs between the metas, or a transaction id in the wrong meta page is refused',
    category: 'store',
    abi: ['ABI-STORE-011'],
    engines: ['helix'],
    expected: 'D-DATA-STORE-HEADER naming the page size or the misplaced transaction, exit 3 from every command, the file unchanged',
    packs,
    policy,
    async run(ctx) {
      const { file: sound, pageSize } = await soundFile(ctx);
      const txn0 = readAt(sound, 24 + 128, 8).readBigUInt64LE(0);
      const cases: Array<[string, Array<[number, Buffer]>, RegExp]> = [
        ['page-size-0', [[48, u32(0)]], /page size 0/],
        ['page-size-4097', [[48, u32(4097)]], /page size 4097/],
        ['page-size-256', [[48, u32(256)]], /page size 256/],
        ['page-size-128k', [[48, u32(131072)]], /page size 131072/],
        [
          'page-size-differs',
          [[pageSize + 48, u32(pageSize * 2)]],
          new RegExp(`meta page 1 has page size ${pageSize * 2}, meta page 0 has ${pageSize}`),
        ],
        [
          'txnid-odd-in-page-0',
          [[24 + 128, u64(txn0 === 0n ? 3n : txn0 | 1n)]],
          /meta page 0 holds transaction \d+, which belongs in meta page 1/,
        ],
      ];
      await Promise.all(
        cases.map(async ([label, edits, problem]) => {
          const home = path.join(ctx.env.dir, `h-${label}`);
          damagedCopy(sound, home, edits);
          await expectRefusedEverywhere(ctx, home, 'D-DATA-STORE-HEADER', 3, problem, label, label === cases[0]![0]);
        }),
      );
    },
  },
  {
    id: 'store.header-page-numbers-truncated',
    title: 'A truncated store file, a last page past the end, a tree root outside the file or a tree depth of 65535 is refused',
    category: 'store',
    abi: ['ABI-STORE-012'],
    engines: ['helix'],
    expected:
      'D-DATA-STORE-HEADER (exit 3) saying the file is too short, the last page lies beyond the file, the root is outside pages 2..last, or the depth is out of 1..32',
    packs,
    policy,
    async run(ctx) {
      const { file: sound, pageSize } = await soundFile(ctx);
      const cases: Array<[string, Array<[number, Buffer]>, RegExp, number?]> = [
        ['last-page-beyond', [[pageSize + 24 + 120, u64(1n << 40n)]], /meta page 1 says the last page is \d+, but the file has \d+ pages/],
        ['main-root-beyond', [[24 + 72 + 40, u64(1n << 30n)]], /root of the main tree at page \d+, outside pages 2-\d+/],
        ['free-root-page-1', [[pageSize + 24 + 24 + 40, u64(1n)]], /root of the free-page tree at page 1, outside/],
        ['main-depth-65535', [[24 + 72 + 6, u16(0xffff)]], /main tree depth 65535/],
        ['cut-inside-meta-1', [], /shorter than its two \d+-byte meta pages/, pageSize + 100],
        ['cut-to-10-bytes', [], /too short for an LMDB header/, 10],
        [
          'cut-to-half',
          [],
          /the last page is \d+, but the file has \d+ pages|outside pages/,
          Math.floor(readFileSync(sound).length / pageSize / 2) * pageSize,
        ],
      ];
      await Promise.all(
        cases.map(async ([label, edits, problem, cut]) => {
          const home = path.join(ctx.env.dir, `h-${label}`);
          const file = damagedCopy(sound, home, edits);
          if (cut !== undefined) truncateSync(file, cut);
          await expectRefusedEverywhere(ctx, home, 'D-DATA-STORE-HEADER', 3, problem, label, label === cases[0]![0]);
        }),
      );
    },
  },
  {
    id: 'store.not-a-regular-file',
    title:
      'A store file or lock file that is a directory, a FIFO or a link to a device, and a home the user cannot write, are refused by name',
    category: 'store',
    abi: ['ABI-STORE-013'],
    engines: ['helix'],
    expected:
      'P-PRECOND-STORE (exit 3) naming the file, never a hang on a FIFO nor a crash; for an unprivileged user a read-only home or store file is P-PRECOND-STORE too',
    packs,
    policy,
    async run(ctx) {
      const { file: sound } = await soundFile(ctx);
      const fresh = (label: string, withFile = true): string => {
        const home = path.join(ctx.env.dir, `h-${label}`);
        mkdirSync(home, { recursive: true });
        if (withFile) copyFileSync(sound, storeFile(home));
        return home;
      };
      const mkfifo = async (p: string): Promise<void> => {
        const c = spawn('mkfifo', [p], { stdio: 'ignore' });
        const code = await new Promise((r) => {
          c.once('exit', r);
          c.once('error', (e) => r(e.message));
        });
        expect(code === 0, `mkfifo ${p} failed`);
      };
      let home = fresh('store-dir', false);
      mkdirSync(storeFile(home));
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /is not a regular file/, 'store file is a directory', true);
      home = fresh('store-fifo', false);
      await mkfifo(storeFile(home));
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /is not a regular file/, 'store file is a FIFO');
      home = fresh('lock-dir');
      mkdirSync(`${storeFile(home)}-lock`);
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /lock file .* is not a regular file/, 'lock file is a directory');
      home = fresh('lock-fifo');
      await mkfifo(`${storeFile(home)}-lock`);
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /lock file .* is not a regular file/, 'lock file is a FIFO');
      home = fresh('lock-devnull');
      symlinkSync('/dev/null', `${storeFile(home)}-lock`);
      await expectRefusedEverywhere(ctx, home, 'P-PRECOND-STORE', 3, /lock file .* is not a regular file/, 'lock file links to /dev/null');
      if (process.getuid?.() === 0) {
        // As an unprivileged user (root passes every access check): a home and store file owned by root, read-only to others.
        chmodSync(ctx.env.dir, 0o755);
        home = fresh('read-only');
        chmodSync(home, 0o755);
        chmodSync(storeFile(home), 0o644);
        const r = await helix(['runs', 'list', '--home', home], { uid: 65534, gid: 65534, cwd: '/' });
        expectCleanError(r, 'P-PRECOND-STORE', 3, 'read-only home for uid 65534');
        expect(
          /not readable and writable/.test(r.stderr) && r.stderr.includes(home),
          `the refusal does not name the home and say it is not writable: ${firstLine(r.stderr)}`,
        );
        ctx.observe('read-only home (uid 65534)', firstLine(r.stderr));
        chownSync(storeFile(home), 65534, 65534);
        chownSync(home, 65534, 65534);
        chmodSync(storeFile(home), 0o444);
        const r2 = await helix(['runs', 'list', '--home', home], { uid: 65534, gid: 65534, cwd: '/' });
        expectCleanError(r2, 'P-PRECOND-STORE', 3, 'read-only store file for uid 65534');
        ctx.observe('read-only store file (uid 65534)', firstLine(r2.stderr));
      } else ctx.note('not root: the read-only cases ran as this user only through the checks above');
    },
  },
];
