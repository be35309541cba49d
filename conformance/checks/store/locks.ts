// Store checks of locks: a hostile process rewriting LMDB's lock region to an older commit cannot
// make a write start from it, and the lifecycle lock makes openers wait for a live owner and takes
// over a dead one's (ABI-STORE-005..007).
import { spawn } from 'node:child_process';
import { existsSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { STORE_MARKERS } from '../../../host/5-host/store-upkeep.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import { helix, problemLines, startHelix, storeCheck, until } from '../../kit/store-kit.js';
import { deadPid, sleeper } from './setups.js';
import { call, packs, policy } from './shared.js';

/** The checks of this file, in the report's order. */
export const lockChecks: readonly Check[] = [
  {
    id: 'store.stale-lock-region',
    title: "A hostile process rewriting LMDB's lock region to an older commit before each call cannot make a write start from it",
    category: 'store',
    abi: ['ABI-STORE-007', 'ABI-STORE-005'],
    engines: ['helix'],
    expected:
      'with the lock region set to newest-1 before each of 6 calls: every call succeeds, no earlier run or event is lost, each run has exactly [started, finished], the lock region names the newest commit after each write, store check clean',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const file = host.storePath;
      const lock = `${file}-lock`;
      // Another process reads and rewrites the lock region: a descriptor of the lock file opened
      // and closed in this process would drop the host's own POSIX locks on it (ABI-STORE-007).
      const script = `const fs = require('fs'); const [file, lock, mode] = process.argv.slice(1);
const fd = fs.openSync(file, 'r'); const b = Buffer.alloc(8); fs.readSync(fd, b, 0, 4, 24 + 24); const ps = b.readUInt32LE(0);
let newest = 0n; for (const p of [0, 1]) { fs.readSync(fd, b, 0, 8, p * ps + 24 + 128); const t = b.readBigUInt64LE(0); if (t > newest) newest = t; }
const l = fs.openSync(lock, 'r+'); const w = Buffer.alloc(8);
if (mode === 'stale') { w.writeBigUInt64LE(newest - 1n); fs.writeSync(l, w, 0, 8, ${STORE_MARKERS.lockTxnidAt}); }
fs.readSync(l, w, 0, 8, ${STORE_MARKERS.lockTxnidAt}); console.log(String(newest) + ' ' + String(w.readBigUInt64LE(0)));`;
      const other = async (mode: 'stale' | 'read'): Promise<{ newest: bigint; region: bigint }> => {
        const c = spawn(process.execPath, ['-e', script, file, lock, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        await new Promise((r) => c.once('exit', r));
        const [n, r] = out.trim().split(' ');
        return { newest: BigInt(n ?? '0'), region: BigInt(r ?? '0') };
      };
      const runs: string[] = [];
      const seen: Array<{ newest: number; region_before_call: string; region_after: string }> = [];
      expectSuccess(await ctx.call('s.echo', { warm: true }));
      for (let i = 0; i < 6; i++) {
        const set = await other('stale');
        expect(
          set.region === set.newest - 1n,
          `the hostile process did not set the lock region (it reads ${set.region}, newest ${set.newest})`,
        );
        const r = await ctx.call('s.script', { calls: [call('kv.put', { key: `k${i}`, value: i })], round: i });
        expectSuccess(r);
        runs.push(r.run_id!);
        const after = await other('read');
        seen.push({ newest: Number(set.newest), region_before_call: String(set.region), region_after: String(after.region) });
        expect(
          after.newest > set.newest && after.region === after.newest,
          `after the write the lock region names ${after.region}, the newest commit is ${after.newest} (before the call ${set.newest})`,
        );
      }
      ctx.observe('rounds', seen);
      for (const id of runs) {
        const kinds = host.runs
          .events(id)
          .map((e) => e.kind)
          .join(',');
        expect(
          host.runs.get(id)?.status === 'succeeded' && kinds === 'started,finished',
          `run ${id} is ${host.runs.get(id)?.status} with events ${kinds}`,
        );
      }
      for (let i = 0; i < 6; i++) {
        const got = await ctx.call('s.script', { calls: [call('kv.get', { key: `k${i}` })] });
        expect(
          JSON.stringify(expectSuccess(got)).includes(`"value":${i}`),
          `kv k${i} written under a stale lock region is lost: ${JSON.stringify(got.output).slice(0, 200)}`,
        );
      }
      const { exit, report } = await storeCheck(host.home);
      expect(exit.code === 0, `store check: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.lifecycle-lock',
    title:
      "A lifecycle lock held by a live process makes an opener wait and say whom it waits for; a dead owner's or an old empty lock is taken over",
    category: 'store',
    abi: ['ABI-STORE-006'],
    engines: ['helix'],
    expected:
      'runs list waits past 1 s, prints "helix: waiting for process N to finish opening or closing the store in HOME", and exits 0 once the lock goes; a lock of a dead pid and an empty lock 10 s old are taken over at once (no waiting line)',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'locked');
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      const lock = path.join(home, STORE_MARKERS.lifecycleLock);
      const owner = sleeper(ctx);
      writeFileSync(lock, JSON.stringify({ pid: owner.pid, hostname: hostname(), started_at: owner.started_at }));
      const waiter = startHelix(['runs', 'list', '--json', '--home', home], { timeoutMs: 60_000 });
      const t0 = Date.now();
      await until('the waiting line', () => waiter.stderr().includes('helix: waiting for process'), 10_000, 20);
      const waitedMs = Date.now() - t0;
      expect(
        waiter.stderr() === `helix: waiting for process ${owner.pid} to finish opening or closing the store in ${home}\n`,
        `the waiting line is ${JSON.stringify(waiter.stderr())}`,
      );
      expect(waitedMs >= 800, `the waiting line came after ${waitedMs} ms, before 1 s`);
      rmSync(lock);
      const done = await waiter.ended;
      expect(done.code === 0, `the waiter exited ${done.code} once the lock went: ${done.stderr}`);
      ctx.observe('live owner', { waited_ms_before_notice: waitedMs, total_ms: done.ms, stderr: done.stderr.trim() });
      writeFileSync(lock, JSON.stringify({ pid: await deadPid(), hostname: hostname(), started_at: Date.now() - 60_000 }));
      const dead = await helix(['runs', 'list', '--json', '--home', home]);
      expect(
        dead.code === 0 && dead.stderr === '' && dead.ms < 5_000,
        `a dead owner's lock: exit ${dead.code} in ${dead.ms} ms, stderr ${dead.stderr}`,
      );
      writeFileSync(lock, '');
      const old = (Date.now() - 10_000) / 1000;
      utimesSync(lock, old, old);
      const empty = await helix(['runs', 'list', '--json', '--home', home]);
      expect(empty.code === 0 && empty.stderr === '', `an old empty lock: exit ${empty.code}, stderr ${empty.stderr}`);
      expect(!existsSync(lock), 'the lock file was left behind');
      ctx.observe('taken over', { dead_owner_ms: dead.ms, old_empty_ms: empty.ms });
      ctx.note(
        'The 30 s give-up (P-PRECOND-STORE-BUSY) is not waited for here; host/3-store/lifecycle-lock.test.ts covers it with a shorter wait.',
      );
    },
  },
];
