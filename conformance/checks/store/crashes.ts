// Store checks of crashes and commits: a run whose process is killed is recorded interrupted by the
// first reader, leaving no journal or audit of it, or nothing at all when killed before its commit;
// a run commits once, or twice past 200 ms (ABI-STORE-030, ABI-STORE-034..037).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RunRecord } from '../../../abi/index.js';
import { packageRoot } from '../../../host/1-base/paths.js';
import { createHost } from '../../../host/5-host/host.js';
import { newestCommitIn } from '../../../host/5-host/store-upkeep.js';
import { loadPolicy } from '../../../host/5-host/toolpacks.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import { helix, kill9, problemLines, storeCheck, withDiagnostics, withRecords } from '../../kit/store-kit.js';
import { foreverRun } from './setups.js';
import { call, cliPolicy, packs, policy } from './shared.js';

/** The checks of this file, in the report's order. */
export const crashChecks: readonly Check[] = [
  // ---------------------------------------------------------------- crashes (ABI-STORE-030, 034, 037)
  {
    id: 'store.killed-run-interrupted',
    title:
      "A run whose process is SIGKILLed is recorded interrupted by the first reader (another CLI process, or a host start); another host's run is left alone",
    category: 'store',
    abi: ['ABI-STORE-030', 'ABI-STORE-034'],
    engines: ['helix'],
    expected:
      "while executing past 200 ms the run is running under the child's pid; after kill -9 runs list shows it interrupted, owner null, finished_at set, events [started, interrupted {found_by: read}]; a run owned by another host stays running; a host start records found_by: startup",
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'killed');
      const one = await foreverRun(ctx, home);
      ctx.observe('first run seen running after (ms)', one.ms);
      const alive = JSON.parse((await helix(['runs', 'list', '--json', '--home', home])).stdout) as RunRecord[];
      expect(
        alive.some((r) => r.run_id === one.runId && r.status === 'running' && r.owner?.pid === one.proc.pid),
        `the live run is not listed running under pid ${one.proc.pid}: ${JSON.stringify(alive).slice(0, 300)}`,
      );
      await kill9(one.proc.child);
      const listed = await helix(['runs', 'list', '--json', '--home', home]);
      const run = (JSON.parse(listed.stdout) as RunRecord[]).find((r) => r.run_id === one.runId);
      expect(
        run?.status === 'interrupted' && run.owner === null && typeof run.finished_at === 'number',
        `after kill -9 the run is ${JSON.stringify(run)}`,
      );
      const shown = JSON.parse((await helix(['runs', 'show', one.runId, '--home', home])).stdout) as {
        events: Array<{ kind: string; detail?: { found_by?: string } }>;
        outputs: unknown[];
      };
      const kinds = shown.events.map((e) => `${e.kind}${e.detail?.found_by === undefined ? '' : `:${e.detail.found_by}`}`);
      expect(JSON.stringify(kinds) === JSON.stringify(['started', 'interrupted:read']), `events are ${kinds.join(', ')}`);
      ctx.observe('events after kill -9', kinds);

      const two = await foreverRun(ctx, home, 's.forever', { n: 2 });
      await kill9(two.proc.child);
      const foreign = { pid: two.proc.pid, hostname: 'another-host.example', started_at: 1 };
      const saved = await withDiagnostics(home, async (store) => {
        const r = store.record('runs', two.runId) as RunRecord;
        return [await store.plant('runs', two.runId, { ...r, owner: foreign }), await store.plant('activeRuns', two.runId, foreign)];
      });
      const other = (JSON.parse((await helix(['runs', 'list', '--json', '--home', home])).stdout) as RunRecord[]).find(
        (r) => r.run_id === two.runId,
      );
      expect(
        other?.status === 'running' && other.owner?.hostname === foreign.hostname,
        `a run owned by another host was changed: ${JSON.stringify(other)}`,
      );
      await withDiagnostics(home, (store) => store.restore(saved));
      const host = await createHost({
        toolpacksDir: await ctx.toolpacksDir(),
        policy: loadPolicy(cliPolicy(ctx)),
        home,
        warn: () => undefined,
      });
      try {
        expect(
          host.interrupted.includes(two.runId),
          `the host start did not record ${two.runId} interrupted: ${JSON.stringify(host.interrupted)}`,
        );
        const events = host.runs
          .events(two.runId)
          .map(
            (e) =>
              `${e.kind}${(e.detail as { found_by?: string } | undefined)?.found_by === undefined ? '' : `:${(e.detail as { found_by: string }).found_by}`}`,
          );
        expect(events.join(',') === 'started,interrupted:startup', `events of the run found at startup: ${events.join(', ')}`);
        ctx.observe('events found at startup', events);
      } finally {
        await host.close();
      }
    },
  },
  {
    id: 'store.killed-mid-run-leaves-no-audit',
    title: 'A run killed mid-way after kv, log and clock calls leaves no journal entry and no audit record, only an interrupted run',
    category: 'store',
    abi: ['ABI-STORE-037', 'ABI-STORE-034'],
    engines: ['helix'],
    expected:
      'the child made its capability calls and kept calling (running, committed after 200 ms); after kill -9 the run is interrupted with no journal entries and no audit records of it; store check clean',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'killed');
      const r = await foreverRun(ctx, home, 's.stall', {
        calls: [call('kv.put', { key: 'k', value: 1 }), call('log.emit', { event: 'before-kill', fields: {} })],
        storm: 'clock.now_unix',
      });
      await new Promise((res) => setTimeout(res, 300));
      await kill9(r.proc.child);
      const journal = await withDiagnostics(
        home,
        (store) => store.keys('journal', { start: [r.runId, 0], end: [r.runId, Number.MAX_SAFE_INTEGER] }).length,
      );
      const audit = await withRecords(home, (records) => records.audit.list({ runId: r.runId }).length);
      const counts = { journal, audit };
      ctx.observe('after kill -9', counts);
      expect(
        counts.journal === 0 && counts.audit === 0,
        `the killed run left ${counts.journal} journal entries and ${counts.audit} audit records`,
      );
      const shown = JSON.parse((await helix(['runs', 'show', r.runId, '--home', home])).stdout) as RunRecord;
      expect(
        shown.status === 'interrupted' && shown.journal.entries === 0,
        `the run is ${shown.status} with ${shown.journal.entries} journal entries`,
      );
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check after the kill: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.killed-before-commit',
    title: "A process SIGKILLed 50 ms into a run, before the run's one commit, leaves nothing of the run in the store",
    category: 'store',
    abi: ['ABI-STORE-034'],
    engines: ['helix'],
    expected:
      'the child reports the run id and kills itself about 50 ms after the run began (under 200 ms); afterwards the store holds no run record, no event and no active run under that id, and store check is clean',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'early');
      const script = `const [hostJs, plugins, home, policyFile] = process.argv.slice(1);
const { createHost } = await import(hostJs);
const host = await createHost({ toolpacksDir: plugins, policyFile, home, warn: () => {} });
host.call({ tool_id: 's.forever', input: {} }, { onRunStarted: (id) => { const t0 = performance.now(); setTimeout(() => process.stdout.write(id + ' ' + Math.round(performance.now() - t0) + '\\n', () => process.kill(process.pid, 'SIGKILL')), 50); } });`;
      const hostJs = pathToFileURL(path.join(packageRoot(), 'dist', 'host', '5-host', 'host.js')).href;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, hostJs, await ctx.toolpacksDir(), home, cliPolicy(ctx)], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      ctx.defer(() => kill9(child));
      let out = '';
      let err = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const signal = await new Promise((r) => child.once('exit', (_code, sig) => r(sig)));
      clearTimeout(timer);
      const [runId, ms] = out.trim().split(' ');
      expect(
        signal === 'SIGKILL' && /^run_[0-9a-f]{32}$/.test(runId ?? ''),
        `the child did not report a run and kill itself: ${out} ${err.slice(0, 300)}`,
      );
      ctx.observe('killed after the run began (ms)', Number(ms));
      expect(Number(ms) < 200, `the kill came ${ms} ms after the run began, not before its start could commit`);
      const left = await withDiagnostics(home, (store) => ({
        run: store.bytes('runs', runId!) !== undefined,
        events: [...store.keys('runEvents', { start: [runId!, 0], end: [runId!, Number.MAX_SAFE_INTEGER] })].length,
        active: store.bytes('activeRuns', runId!) !== undefined,
      }));
      ctx.observe('left in the store', left);
      expect(!left.run && left.events === 0 && !left.active, `the run killed before its commit left ${JSON.stringify(left)}`);
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.run-commits-once',
    title:
      'A run of 40 capability calls commits once with its journal and audit; 16 runs ending together share commits; a run past 200 ms commits twice',
    category: 'store',
    abi: ['ABI-STORE-034', 'ABI-STORE-035', 'ABI-STORE-037'],
    engines: ['helix'],
    expected:
      'commits counted on the meta pages: 1 for the 40-call run (40 allowed audit records visible after), fewer than 16 for 16 concurrent runs, exactly 2 for a run still executing after 200 ms',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const commits = async (body: () => Promise<unknown>): Promise<number> => {
        await host.diagnostics.flushed();
        const before = newestCommitIn(host.storePath);
        await body();
        await host.diagnostics.flushed();
        return newestCommitIn(host.storePath) - before;
      };
      const storm = { calls: Array.from({ length: 40 }, () => call('clock.now_unix', {})) };
      expectSuccess(await ctx.call('s.script', { ...storm, warm: true }));
      let runId = '';
      const one = await commits(async () => {
        const r = await ctx.call('s.script', storm);
        expectSuccess(r);
        runId = r.run_id!;
      });
      const audit = host.audit.list({ runId, kind: 'capability' });
      ctx.observe('commits of a 40-call run', one);
      expect(one === 1, `a run of 40 capability calls took ${one} commits, not 1`);
      expect(audit.length === 40, `the run has ${audit.length} capability audit records, not 40`);
      const sixteen = await commits(async () => {
        const rs = await Promise.all(Array.from({ length: 16 }, (_, i) => ctx.call('s.echo', { together: i })));
        for (const r of rs) expectSuccess(r);
      });
      ctx.observe('commits of 16 concurrent runs', sixteen);
      expect(sixteen < 16, `16 concurrent runs took ${sixteen} commits: none shared`);
      let ms = 0;
      const slow = await commits(async () => {
        const t0 = performance.now();
        expectSuccess(await ctx.call('s.slow', {}));
        ms = performance.now() - t0;
      });
      ctx.observe('slow run', { ms: Math.round(ms), commits: slow });
      expect(ms > 250, `the slow run took only ${Math.round(ms)} ms; it must outlast 200 ms`);
      expect(slow === 2, `a run executing past 200 ms took ${slow} commits, not 2 (start, end)`);
    },
  },
];
