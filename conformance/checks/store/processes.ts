// Store checks of several processes on one store: a map size fixed for good, every flush on the
// committing thread, and imports, calls and listings in seven processes at once losing nothing
// (ABI-STORE-001..004, ABI-STORE-006).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunRecord } from '../../../abi/index.js';
import { newestCommitIn, STORE_MARKERS } from '../../../host/5-host/store-upkeep.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import {
  bigFile,
  CLI,
  fileSize,
  firstLine,
  helix,
  kill9,
  LMDB,
  mappingsOf,
  pageSizeOf,
  problemLines,
  readAt,
  startHelix,
  storeCheck,
  storeFile,
} from '../../kit/store-kit.js';
import { foreverRun } from './setups.js';
import { call, cliPolicy, packs, policy, sha256File } from './shared.js';

/** The checks of this file, in the report's order. */
export const processChecks: readonly Check[] = [
  // ---------------------------------------------------------------- concurrency (ABI-STORE-001..007)
  {
    id: 'store.map-size-fixed',
    title: 'Every process maps the store at 1 TiB and never remaps it while another process grows the file',
    category: 'store',
    abi: ['ABI-STORE-001'],
    engines: ['helix'],
    expected:
      'one mapping of helix.mdb of exactly 2^40 bytes in this host and in a helix call process; after a 24 MiB import by a third process the call process still has that one mapping at the same address',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const mine = mappingsOf('self', host.storePath);
      expect(
        mine.length === 1 && mine[0]!.bytes === 1n << 40n,
        `this host maps the store as ${JSON.stringify(mine.map((m) => String(m.bytes)))}`,
      );
      const home = path.join(ctx.env.dir, 'other');
      const r = await foreverRun(ctx, home);
      const before = mappingsOf(r.proc.pid, storeFile(home));
      expect(
        before.length === 1 && before[0]!.bytes === 1n << 40n,
        `the helix call process maps the store as ${JSON.stringify(before.map((m) => String(m.bytes)))}`,
      );
      const sizeBefore = fileSize(storeFile(home));
      const data = bigFile(path.join(ctx.env.importRoot, 'grow.bin'), 24);
      const imported = await helix(['artifact', 'import', data, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(imported.code === 0, `the import failed: ${firstLine(imported.stderr)}`);
      const after = mappingsOf(r.proc.pid, storeFile(home));
      ctx.observe('mapping', {
        bytes: String(before[0]!.bytes),
        file_before: sizeBefore,
        file_after: fileSize(storeFile(home)),
        remapped: after.length !== 1 || after[0]!.start !== before[0]!.start,
      });
      expect(
        after.length === 1 && after[0]!.start === before[0]!.start && after[0]!.bytes === before[0]!.bytes,
        `the call process remapped the store: ${JSON.stringify(after.map((m) => [m.start.toString(16), String(m.bytes)]))}`,
      );
      await kill9(r.proc.child);
    },
  },
  {
    id: 'store.flush-on-calling-thread',
    title: 'Every flush of a commit is made by the thread that commits, before the call answers; no flushed-meta copy appears',
    category: 'store',
    abi: ['ABI-STORE-002', 'ABI-STORE-003'],
    engines: ['helix'],
    expected:
      "strace -f of helix call: every fdatasync/fsync/msync is on the main thread, at least one per commit; the run the call reported is readable by another process at once; lmdb-js's flushed-meta slot stays empty",
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'traced');
      const seeded = await helix(['runs', 'list', '--home', home]);
      expect(seeded.code === 0, `creating the store failed: ${seeded.stderr}`);
      const before = newestCommitIn(storeFile(home));
      const trace = path.join(ctx.env.dir, 'strace.txt');
      const traced = spawn(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=execve,fdatasync,fsync,msync,sync_file_range',
          '-o',
          trace,
          process.execPath,
          CLI,
          'call',
          's.script',
          '--toolpacks',
          await ctx.toolpacksDir(),
          '--home',
          home,
          '--policy',
          cliPolicy(ctx),
          '--compact',
          '--input',
          JSON.stringify({ calls: [call('kv.put', { key: 'k', value: 1 })] }),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      traced.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      const timer = setTimeout(() => traced.kill('SIGKILL'), 60_000);
      const code = await new Promise((r) => {
        traced.once('exit', r);
        traced.once('error', (e) => r(`not started (${e.message}): this check needs strace installed`));
      });
      clearTimeout(timer);
      expect(code === 0, `strace helix call exited ${code}: ${out.slice(0, 200)}`);
      const runId = (JSON.parse(out.trim().split('\n')[0]!) as { run_id: string }).run_id;
      const shown = await helix(['runs', 'show', runId, '--home', home]);
      expect(
        shown.code === 0 && (JSON.parse(shown.stdout) as RunRecord).status === 'succeeded',
        `the reported run is not in the store for another process: ${firstLine(shown.stderr)}`,
      );
      const lines = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
      const main = Number(/^(\d+)\s+execve\(/.exec(lines.find((l) => l.includes(`execve("${process.execPath}"`)) ?? '')?.[1]);
      const flushes = lines.filter((l) => /\s(fdatasync|fsync|msync|sync_file_range)\(/.test(l));
      const offThread = flushes.filter((l) => Number(l.split(/\s+/)[0]) !== main);
      const commits = newestCommitIn(storeFile(home)) - before;
      ctx.observe('flushes', { main_thread: main, flushes: flushes.length, off_main_thread: offThread.length, commits });
      expect(Number.isFinite(main) && flushes.length > 0, `no flush traced (main thread ${main})`);
      expect(offThread.length === 0, `flushes made off the main thread: ${offThread.slice(0, 3).join(' | ')}`);
      expect(flushes.length >= commits, `${commits} commits but only ${flushes.length} flushes`);
      const ps = pageSizeOf(storeFile(home));
      const flushedSlot = readAt(storeFile(home), ps / 2 + LMDB.pageHeader + LMDB.meta.txnid, 8).readBigUInt64LE(0);
      ctx.observe('flushed-meta slot txnid', String(flushedSlot));
      expect(
        flushedSlot === 0n,
        `lmdb-js's flushed-meta slot holds transaction ${flushedSlot}: a process opening alone could roll back to it`,
      );
    },
  },
  {
    id: 'store.concurrent-processes',
    title: "Imports, calls and listings in seven processes at once beside this host's calls: every process exits 0 and nothing is lost",
    category: 'store',
    abi: ['ABI-STORE-004', 'ABI-STORE-006'],
    engines: ['helix'],
    expected:
      'three imports (3, 6, 9 MiB), two calls, two listings and 12 calls of this host on one store: every exit 0, every artifact and run reported is in the store, store check clean, the lifecycle lock gone',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const home = host.home;
      const pol = cliPolicy(ctx);
      const files = [3, 6, 9].map((n) => bigFile(path.join(ctx.env.importRoot, `c${n}.bin`), n, n));
      const procs = [
        ...files.map((f) => startHelix(['artifact', 'import', f, '--home', home, '--policy', pol], { timeoutMs: 120_000 })),
        ...[1, 2].map(async (i) =>
          startHelix(
            [
              'call',
              's.echo',
              '--toolpacks',
              await ctx.toolpacksDir(),
              '--home',
              home,
              '--policy',
              pol,
              '--compact',
              '--input',
              JSON.stringify({ proc: i }),
            ],
            { timeoutMs: 120_000 },
          ),
        ),
        startHelix(['runs', 'list', '--json', '--home', home], { timeoutMs: 120_000 }),
        startHelix(['artifact', 'list', '--json', '--home', home], { timeoutMs: 120_000 }),
      ];
      const mine = Array.from({ length: 12 }, (_, i) => ctx.call('s.echo', { mine: i }));
      const ended = await Promise.all(procs.map(async (p) => (await p).ended));
      const own = await Promise.all(mine);
      const codes = ended.map((e) => e.code);
      ctx.observe('exit codes', codes);
      expect(
        ended.every((e) => e.code === 0),
        `processes ended ${ended.map((e) => `${e.code ?? e.signal} ${firstLine(e.stderr)}`).join(' | ')}`,
      );
      for (const r of own) expectSuccess(r);
      for (const [i, e] of ended.slice(0, 3).entries()) {
        const rec = JSON.parse(e.stdout) as { id: string; sha256: string };
        const stored = host.artifacts.get(rec.id);
        expect(
          stored.sha256 === rec.sha256 && rec.sha256 === sha256File(files[i]!),
          `import ${i} reported ${rec.id} but the store holds ${JSON.stringify(stored)}`,
        );
      }
      for (const e of ended.slice(3, 5)) {
        const runId = (JSON.parse(e.stdout.trim()) as { run_id: string }).run_id;
        expect(host.runs.get(runId)?.status === 'succeeded', `the run ${runId} a CLI call reported is not stored succeeded`);
      }
      for (const r of own) expect(host.runs.get(r.run_id!)?.status === 'succeeded', `this host's run ${r.run_id} is not stored`);
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check after the concurrent processes: ${problemLines(report).join('; ')}`);
      expect(!existsSync(path.join(home, STORE_MARKERS.lifecycleLock)), 'the lifecycle lock was left behind');
    },
  },
];
