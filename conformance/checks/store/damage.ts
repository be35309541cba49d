// Store checks of damaged records and pages: a record that does not decode, one under the wrong
// key, text that does not hash to its key, a B-tree page LMDB cannot read, a flipped chunk byte,
// each refused where it is read; a damaged module record rebuilt (ABI-STORE-020..022).
import path from 'node:path';
import { isHelixError } from '../../../abi/index.js';
import { createHost } from '../../../host/5-host/host.js';
import { loadPolicy } from '../../../host/5-host/toolpacks.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import {
  expectCleanError,
  firstLine,
  helix,
  LMDB,
  namedDbRoot,
  pageSizeOf,
  patchFile,
  readAt,
  storeFile,
  u16,
  UNDECODABLE,
  withDiagnostics,
} from '../../kit/store-kit.js';
import { cliPolicy, flip, packs, policy, seed } from './shared.js';

/** The checks of this file, in the report's order. */
export const damageChecks: readonly Check[] = [
  // ---------------------------------------------------------------- damage (ABI-STORE-020..022)
  {
    id: 'store.damaged-run-record',
    title: 'A run record that does not decode is one D-DATA-RECORD-INVALID everywhere it is read, and the host goes on serving',
    category: 'store',
    abi: ['ABI-STORE-020'],
    engines: ['helix'],
    expected:
      'replaying call and run_get: terminal_error D-DATA-RECORD-INVALID with details {database: runs, key, problem, violations}; CLI runs list/show/verify: one clean error, exit 1; a replaying helix call prints one envelope and exits 1',
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const first = await ctx.call('s.echo', { n: 1 });
      expectSuccess(first);
      const runId = first.run_id!;
      await host.diagnostics.plant('runs', runId, UNDECODABLE);
      const replay = await ctx.call('s.echo', { n: 1 });
      expectOutcome(replay, 'terminal_error', 'D-DATA-RECORD-INVALID');
      const d = replay.error!.details as Record<string, unknown>;
      expect(
        d.database === 'runs' && d.key === runId && typeof d.problem === 'string' && Array.isArray(d.violations),
        `details are not {database: runs, key, problem, violations}: ${JSON.stringify(d)}`,
      );
      expectOutcome(await ctx.call('helix.run_get', { run_id: runId }), 'terminal_error', 'D-DATA-RECORD-INVALID');
      ctx.observe('envelope', { code: replay.error!.code, message: replay.error!.message, details: d });
      const home = host.home;
      for (const args of [
        ['runs', 'list'],
        ['runs', 'show', runId],
        ['verify', runId],
      ]) {
        const r = await helix([...args, '--home', home]);
        expectCleanError(r, 'D-DATA-RECORD-INVALID', 1, `helix ${args.join(' ')}`);
        expect(
          r.stderr.includes(`The record ${runId} in the store's runs database is damaged`),
          `helix ${args.join(' ')} does not name the record and database: ${firstLine(r.stderr)}`,
        );
      }
      const cli = await helix([
        'call',
        's.echo',
        '--toolpacks',
        await ctx.toolpacksDir(),
        '--home',
        home,
        '--policy',
        cliPolicy(ctx),
        '--input',
        '{"n":1}',
        '--compact',
      ]);
      const lines = cli.stdout.trim().split('\n');
      expect(cli.code === 1 && lines.length === 1, `helix call on the damaged run: exit ${cli.code}, ${lines.length} lines of stdout`);
      const env = JSON.parse(lines[0]!) as { status: string; error?: { code: string } };
      expect(
        env.status === 'terminal_error' && env.error?.code === 'D-DATA-RECORD-INVALID',
        `helix call printed ${lines[0]!.slice(0, 200)}`,
      );
      expectSuccess(await ctx.call('s.echo', { n: 2 }));
    },
  },
  {
    id: 'store.record-key-and-text-mismatch',
    title:
      'A well-formed record under the wrong key, an artifact of the wrong shape and params text that does not hash to its key are refused on read',
    category: 'store',
    abi: ['ABI-STORE-020'],
    engines: ['helix'],
    expected:
      'runs show of a run holding another run\'s record: D-DATA-RECORD-INVALID "carries the run id"; artifact show of {id: 7}: D-DATA-RECORD-INVALID with its violations; runs show of a run whose params text was edited: D-DATA-CHECKSUM; each exit 1, one clean error',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      await withDiagnostics(s.home, async (store) => {
        await store.plant('runs', s.echo.run_id, { ...s.writer });
        await store.plant('artifacts', s.small.id, Buffer.from([0x81, 0xa2, 0x69, 0x64, 0x07]));
        const params = store.record('params', s.script.params_hash) as string;
        await store.plant('params', s.script.params_hash, params.replace('}', ',"edited":true}'));
      });
      const swapped = await helix(['runs', 'show', s.echo.run_id, '--home', s.home]);
      expectCleanError(swapped, 'D-DATA-RECORD-INVALID', 1, 'runs show of a swapped record');
      expect(
        swapped.stderr.includes(`carries the run id ${s.writer.run_id}`),
        `the refusal does not say which id the record carries: ${firstLine(swapped.stderr)}`,
      );
      const shape = await helix(['artifact', 'show', s.small.id, '--home', s.home]);
      expectCleanError(shape, 'D-DATA-RECORD-INVALID', 1, 'artifact show of {id: 7}');
      expect(/\n {2}\S+: /.test(shape.stderr), `no violation listed: ${shape.stderr.slice(0, 300)}`);
      const text = await helix(['runs', 'show', s.script.run_id, '--home', s.home]);
      expectCleanError(text, 'D-DATA-CHECKSUM', 1, 'runs show with edited params');
      ctx.observe('swapped run record', firstLine(swapped.stderr));
      ctx.observe('artifact of the wrong shape', firstLine(shape.stderr));
      ctx.observe('params not hashing to key', firstLine(text.stderr));
    },
  },
  {
    id: 'store.lmdb-page-and-chunk-damage',
    title:
      'A B-tree page LMDB cannot read is D-DATA-STORE-DAMAGED naming the database; a flipped chunk byte is D-DATA-CHECKSUM on every read',
    category: 'store',
    abi: ['ABI-STORE-021'],
    engines: ['helix'],
    expected:
      "with the runs tree root page's flags zeroed, runs list exits 1 with D-DATA-STORE-DAMAGED naming runs (no crash) while artifact list still works; a flipped chunk makes artifact export and a call reading the artifact fail with D-DATA-CHECKSUM naming the blob",
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      // The chunk first (the tree damage below keeps the store from opening cleanly for writes).
      await withDiagnostics(s.home, async (store) => {
        const key = s.big.chunks[1]!;
        await store.plant('chunks', key, flip(Buffer.from(store.bytes('chunks', key)!), 100));
      });
      const out = path.join(ctx.env.dir, 'export', 'big.bin');
      const exported = await helix(['artifact', 'export', s.big.id, out, '--home', s.home, '--policy', cliPolicy(ctx)]);
      expectCleanError(exported, 'D-DATA-CHECKSUM', 1, 'artifact export of a flipped chunk');
      expect(
        exported.stderr.includes(s.big.sha256) || exported.stderr.includes(s.big.chunks[1]!),
        `the refusal names neither the blob nor the chunk: ${firstLine(exported.stderr)}`,
      );
      ctx.observe('export of flipped chunk', firstLine(exported.stderr));
      const reader = await createHost({
        toolpacksDir: await ctx.toolpacksDir(),
        policy: loadPolicy(cliPolicy(ctx)),
        home: s.home,
        warn: () => undefined,
      });
      try {
        const read = await reader.artifacts.readBytes(s.big.id, 1 << 30).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(
          isHelixError(read) && read.code === 'D-DATA-CHECKSUM',
          `a host reading the damaged artifact got ${isHelixError(read) ? read.code : String(read)}`,
        );
        ctx.observe('host read of the flipped chunk', `${read.code}: ${read.message}`);
      } finally {
        await reader.close();
      }

      const file = storeFile(s.home);
      const runs = namedDbRoot(file, 'runs');
      const ps = pageSizeOf(file);
      const at = Number(runs.root) * ps + LMDB.flagsAt;
      ctx.observe('runs tree', {
        root_page: String(runs.root),
        depth: runs.depth,
        flags_before: `0x${readAt(file, at, 2).readUInt16LE(0).toString(16)}`,
      });
      patchFile(file, at, u16(0));
      const listed = await helix(['runs', 'list', '--home', s.home]);
      // LMDB's C code prints its own diagnostic line to stderr before it returns MDB_CORRUPTED; Helix's error follows it.
      const lmdbLine = /^internal error, index points to a [0-9A-Fa-f]+ page!\?\n/;
      if (lmdbLine.test(listed.stderr)) ctx.note(`LMDB's own stderr line before Helix's error: ${firstLine(listed.stderr)}`);
      expectCleanError(
        { ...listed, stderr: listed.stderr.replace(lmdbLine, '') },
        'D-DATA-STORE-DAMAGED',
        1,
        'runs list over a damaged runs page',
      );
      expect(
        /helix: D-DATA-STORE-DAMAGED: .*runs database: MDB_(CORRUPTED|PAGE_NOTFOUND|INVALID)/.test(listed.stderr),
        `the refusal does not name the runs database and LMDB's error: ${listed.stderr.slice(0, 300)}`,
      );
      ctx.observe('runs list', listed.stderr.trim().split('\n').slice(0, 2));
      const artifacts = await helix(['artifact', 'list', '--json', '--home', s.home]);
      expect(artifacts.code === 0, `artifact list (another database) failed too: ${firstLine(artifacts.stderr)}`);
    },
  },
  {
    id: 'store.module-record-rebuilt',
    title: 'A damaged module record is rebuilt at host start with an audit record; other damaged records stay as they are',
    category: 'store',
    abi: ['ABI-STORE-022'],
    engines: ['helix'],
    expected:
      'the host starts, the module record reads back whole, audit holds store.module_record_rebuilt naming the digest and the damage; a damaged run record still answers D-DATA-RECORD-INVALID',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'home');
      const first = await createHost({
        toolpacksDir: await ctx.toolpacksDir(),
        policy: loadPolicy(cliPolicy(ctx)),
        home,
        warn: () => undefined,
      });
      const digest = first.tools().find((t) => t.id === 's.echo')!.moduleDigest!;
      const run = (await first.call({ tool_id: 's.echo', input: { n: 1 } })).run_id!;
      await first.close();
      await withDiagnostics(home, async (store) => {
        await store.plant('modules', digest, UNDECODABLE);
        await store.plant('runs', run, UNDECODABLE);
      });
      const host = await ctx.host();
      expect(host.home === home, `the check's host runs in ${host.home}, not ${home}`);
      const record = host.modules.get(digest);
      expect(record?.digest === digest, `the module record was not rebuilt: ${JSON.stringify(record)}`);
      const audit = host.audit.list().filter((a) => a.kind === 'store.module_record_rebuilt');
      expect(audit.length === 1 && (audit[0] as { digest?: string }).digest === digest, `audit holds ${JSON.stringify(audit)}`);
      const problem = String((audit[0] as { problem?: string }).problem ?? '');
      expect(/damaged|decoded/.test(problem), `the audit record does not name the damage: ${problem}`);
      ctx.observe('audit', audit[0]);
      expectOutcome(await ctx.call('helix.run_get', { run_id: run }), 'terminal_error', 'D-DATA-RECORD-INVALID');
    },
  },
];
