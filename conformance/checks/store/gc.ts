// Store checks of gc and compaction: a killed import's pending write reclaimed exactly, gc beside
// live writers losing nothing, gc refusing to remove anything past damage, freed pages reused, and
// compaction refused while any process holds the store (ABI-STORE-050..057).
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { isHelixError } from '../../../abi/index.js';
import { keyText, STORE_MARKERS, type GcReport } from '../../../host/5-host/store-upkeep.js';
import { expect, expectSuccess, type Check } from '../../check.js';
import {
  bigFile,
  expectCleanError,
  fileSize,
  firstLine,
  helix,
  kill9,
  problemLines,
  startHelix,
  storeCheck,
  storeFile,
  UNDECODABLE,
  withDiagnostics,
} from '../../kit/store-kit.js';
import { foreverRun, killedImport, sleeper } from './setups.js';
import { cliPolicy, expectProblem, MIB, NEVER_COLLECTED, packs, policy, seed, sha256, sha256File } from './shared.js';

/** The checks of this file, in the report's order. */
export const gcChecks: readonly Check[] = [
  // ---------------------------------------------------------------- gc (ABI-STORE-050..057)
  {
    id: 'store.gc-pending-writes',
    title:
      "An import SIGKILLed halfway leaves a pending write of a dead process; gc reclaims exactly its chunks and unreferenced blobs, keeps another host's write, and never touches records",
    category: 'store',
    abi: ['ABI-STORE-050', 'ABI-STORE-051', 'ABI-STORE-052'],
    engines: ['helix'],
    expected:
      "store check exits 0 noting the dead pending write; gc --dry-run reports what gc then removes; gc removes the dead write, its unmarked chunks and an unreferenced blob, keeps the chunk another host's pending write marks; counts of runs, artifacts, events, journal, audit, kv, modules, params, policies, idempotency unchanged",
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const data = bigFile(path.join(ctx.env.importRoot, 'killed.bin'), 96);
      const killed = await killedImport(ctx, s.home, data, fileSize(storeFile(s.home)) + 12 * MIB);
      ctx.observe('killed import at store size', killed.fileBytes);
      const dead = await withDiagnostics(s.home, (store) => {
        const ids = [...store.keys('pending')] as Array<[string, string]>;
        const marks = ids.filter((k) => k[1] !== STORE_MARKERS.pendingHeader).map((k) => k[1]);
        return { writes: new Set(ids.map((k) => k[0])).size, marks };
      });
      expect(
        dead.writes === 1 && dead.marks.length >= 2,
        `the killed import left ${dead.writes} pending writes marking ${dead.marks.length} chunks`,
      );
      const noted = await helix(['store', 'check', '--home', s.home]);
      expect(
        noted.code === 0 && /note: 1 pending write of a process that died/.test(noted.stdout),
        `store check on the orphans: exit ${noted.code}: ${noted.stdout.slice(-300)}`,
      );
      // Another host's pending write marking one orphan chunk, and a blob nothing names.
      const held = dead.marks[0]!;
      const orphanBlob = sha256(randomBytes(8));
      await withDiagnostics(s.home, async (store) => {
        await store.plant('pending', ['feedface', STORE_MARKERS.pendingHeader], {
          owner: { pid: 1, hostname: 'another-host.example', started_at: 1 },
          created_at: Date.now(),
        });
        await store.plant('pending', ['feedface', held], true);
        await store.plant('blobs', orphanBlob, { size: 1, chunks: [held] });
      });
      const before = (await storeCheck(s.home)).report;
      const dry = await helix(['gc', '--dry-run', '--json', '--home', s.home]);
      const gcRun = await helix(['gc', '--json', '--home', s.home]);
      expect(dry.code === 0 && gcRun.code === 0, `gc exited ${dry.code} (dry) and ${gcRun.code}: ${dry.stderr}${gcRun.stderr}`);
      const d = JSON.parse(dry.stdout) as GcReport;
      const g = JSON.parse(gcRun.stdout) as GcReport;
      ctx.observe('gc', { removed: g.removed, kept: g.kept });
      expect(
        JSON.stringify(d.removed) === JSON.stringify(g.removed),
        `--dry-run said ${JSON.stringify(d.removed)}, gc removed ${JSON.stringify(g.removed)}`,
      );
      expect(
        g.removed.pending_writes === 1 &&
          g.removed.blobs === 1 &&
          g.removed.chunks === dead.marks.length - 1 &&
          g.kept.live_pending_writes === 1,
        `gc removed ${JSON.stringify(g.removed)} kept ${JSON.stringify(g.kept)}; expected the dead write, 1 blob, ${dead.marks.length - 1} chunks, another host's write kept`,
      );
      const after = await storeCheck(s.home);
      expect(after.exit.code === 0, `store check after gc: ${problemLines(after.report).join('; ')}`);
      for (const db of NEVER_COLLECTED)
        expect(before.checked[db] === after.report.checked[db], `gc changed ${db}: ${before.checked[db]} -> ${after.report.checked[db]}`);
      expect(after.report.checked.chunks === before.checked.chunks! - g.removed.chunks, 'the chunk count does not match what gc reported');
      const stillHeld = await withDiagnostics(s.home, (store) => store.has('chunks', held));
      expect(stillHeld, "gc removed the chunk another host's pending write marks");
      const again = JSON.parse((await helix(['gc', '--json', '--home', s.home])).stdout) as GcReport;
      expect(
        again.removed.chunks === 0 && again.removed.blobs === 0 && again.removed.pending_writes === 0,
        `a second gc still removed ${JSON.stringify(again.removed)}`,
      );
    },
  },
  {
    id: 'store.gc-beside-writers',
    title:
      'gc looping in another process and in this host while an import deduplicates against orphans and calls are served never loses a chunk',
    category: 'store',
    abi: ['ABI-STORE-053', 'ABI-STORE-050'],
    engines: ['helix'],
    expected:
      "the import (whose first chunks are orphans of a killed import) exits 0 with the file's sha256; gc ran beside its live pending write; every call during gc succeeds; export reads back the same bytes; store check clean",
    packs,
    policy,
    async run(ctx) {
      const host = await ctx.host();
      const home = host.home;
      const data = bigFile(path.join(ctx.env.importRoot, 'shared.bin'), 96, 7);
      await killedImport(ctx, home, data, fileSize(storeFile(home)) + 16 * MIB);
      const imp = startHelix(['artifact', 'import', data, '--home', home, '--policy', cliPolicy(ctx)], { timeoutMs: 120_000 });
      let cliGc = 0;
      let inProcess = 0;
      let besideLive = 0;
      let calls = 0;
      const gcLoop = (async () => {
        while (imp.child.exitCode === null) {
          const r = await helix(['gc', '--json', '--home', home]);
          expect(r.code === 0, `helix gc beside the import failed: ${firstLine(r.stderr)}`);
          cliGc++;
          if ((JSON.parse(r.stdout) as GcReport).kept.live_pending_writes > 0) besideLive++;
        }
      })();
      while (imp.child.exitCode === null) {
        const report = await host.diagnostics.collectGarbage();
        inProcess++;
        if (report.kept.live_pending_writes > 0) besideLive++;
        expectSuccess(await ctx.call('s.echo', { during_gc: calls++ }));
        await new Promise((r) => setTimeout(r, 5));
      }
      const ended = await imp.ended;
      await gcLoop;
      ctx.observe('beside the import', {
        cli_gc_runs: cliGc,
        in_process_gc_runs: inProcess,
        beside_live_pending_write: besideLive,
        calls_served: calls,
      });
      expect(ended.code === 0, `the import beside gc failed: ${firstLine(ended.stderr)}`);
      expect(besideLive > 0, 'gc never ran beside the live pending write; the import was too quick to test');
      const rec = JSON.parse(ended.stdout) as { id: string; sha256: string };
      expect(rec.sha256 === sha256File(data), 'the import reported another sha256 than the file');
      const out = path.join(ctx.env.dir, 'export', 'shared.out');
      const exported = await helix(['artifact', 'export', rec.id, out, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(exported.code === 0 && sha256File(out) === rec.sha256, `export after gc: exit ${exported.code} ${firstLine(exported.stderr)}`);
      const { exit, report } = await storeCheck(home);
      expect(exit.code === 0, `store check: ${problemLines(report).join('; ')}`);
    },
  },
  {
    id: 'store.gc-refuses-damage',
    title:
      'gc removes nothing when a record that may name a blob cannot be read or a chunk key is no digest; a damaged pending header is kept',
    category: 'store',
    abi: ['ABI-STORE-054'],
    engines: ['helix'],
    expected:
      'an undecodable artifact record: helix gc exits 1 with D-DATA-RECORD-INVALID naming artifacts and the key, an orphan chunk survives; a chunk key "not-a-digest": the same naming chunks; an undecodable pending header: gc succeeds, keeps it and its chunk, store check reports it',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const orphan = randomBytes(1000);
      const orphanKey = sha256(orphan);
      const saved = await withDiagnostics(s.home, async (store) => {
        await store.plant('chunks', orphanKey, orphan);
        return [await store.plant('artifacts', s.small.id, UNDECODABLE)];
      });
      const refused = await helix(['gc', '--home', s.home]);
      expectCleanError(refused, 'D-DATA-RECORD-INVALID', 1, 'gc over an undecodable artifact');
      expect(
        refused.stderr.includes(s.small.id) && /artifacts/.test(refused.stderr),
        `the refusal does not name the database and key: ${firstLine(refused.stderr)}`,
      );
      const inProc = await withDiagnostics(s.home, (store) =>
        store.collectGarbage().then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      expect(
        isHelixError(inProc) &&
          inProc.code === 'D-DATA-RECORD-INVALID' &&
          inProc.details.database === 'artifacts' &&
          inProc.details.key === s.small.id,
        `collectGarbage threw ${JSON.stringify(inProc)}`,
      );
      ctx.observe('damaged artifact', firstLine(refused.stderr));
      const kept = await withDiagnostics(s.home, async (store) => {
        const there = store.has('chunks', orphanKey);
        await store.restore(saved);
        await store.plant('chunks', 'not-a-digest', Buffer.from('x'));
        return there;
      });
      expect(kept, 'the refused gc removed the orphan chunk');
      const badKey = await helix(['gc', '--home', s.home]);
      expectCleanError(badKey, 'D-DATA-RECORD-INVALID', 1, 'gc over a chunk key that is no digest');
      expect(
        /chunks/.test(firstLine(badKey.stderr)) && badKey.stderr.includes('not-a-digest'),
        `the refusal does not name the chunk: ${firstLine(badKey.stderr)}`,
      );
      ctx.observe('chunk key no digest', firstLine(badKey.stderr));
      await withDiagnostics(s.home, async (store) => {
        expect(store.has('chunks', orphanKey), 'the refused gc removed the orphan chunk');
        await store.plant('chunks', 'not-a-digest', undefined);
        await store.plant('pending', ['0badc0de', STORE_MARKERS.pendingHeader], UNDECODABLE);
        await store.plant('pending', ['0badc0de', orphanKey], true);
      });
      const gcRun = await helix(['gc', '--json', '--home', s.home]);
      expect(gcRun.code === 0, `gc with a damaged pending header failed: ${firstLine(gcRun.stderr)}`);
      const g = JSON.parse(gcRun.stdout) as GcReport;
      expect(g.kept.live_pending_writes >= 1, `gc did not keep the damaged pending write: ${JSON.stringify(g)}`);
      const still = await withDiagnostics(
        s.home,
        (store) => store.has('chunks', orphanKey) && store.has('pending', ['0badc0de', STORE_MARKERS.pendingHeader]),
      );
      expect(still, 'gc removed the damaged pending write or the chunk it marks');
      const { report } = await storeCheck(s.home);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'pending_writes', keyText(['0badc0de', STORE_MARKERS.pendingHeader]));
    },
  },
  {
    id: 'store.gc-space-and-compact',
    title: 'gc frees pages without shrinking the file, later writes reuse them, and --compact is refused while any process holds the store',
    category: 'store',
    abi: ['ABI-STORE-055', 'ABI-STORE-056'],
    engines: ['helix'],
    expected:
      'after a killed import gc keeps the file size (within 1 MiB) and raises free bytes by at least what it removed; a 16 MiB import then grows the file by under 8 MiB; gc --compact with a helix call holding the store: P-PRECOND-STORE-BUSY naming its pid, exit 1, file unchanged; alone: the file shrinks and store check is clean',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'gc');
      const data = bigFile(path.join(ctx.env.importRoot, 'killed.bin'), 96, 3);
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      await killedImport(ctx, home, data, 24 * MIB);
      const g = JSON.parse((await helix(['gc', '--json', '--home', home])).stdout) as GcReport;
      const freed = g.space_after.free_bytes - g.space_before.free_bytes;
      ctx.observe('gc', {
        removed_bytes: g.removed.chunk_bytes,
        freed,
        file_before: g.space_before.file_bytes,
        file_after: g.space_after.file_bytes,
      });
      expect(g.removed.chunks >= 8, `gc removed only ${g.removed.chunks} chunks of the killed import`);
      expect(
        Math.abs(g.space_after.file_bytes - g.space_before.file_bytes) < MIB,
        `gc changed the file size ${g.space_before.file_bytes} -> ${g.space_after.file_bytes}`,
      );
      expect(freed >= g.removed.chunk_bytes, `gc freed ${freed} bytes but removed ${g.removed.chunk_bytes}`);
      const next = bigFile(path.join(ctx.env.importRoot, 'next.bin'), 16, 4);
      const imported = await helix(['artifact', 'import', next, '--home', home, '--policy', cliPolicy(ctx)]);
      expect(imported.code === 0, `the import after gc failed: ${firstLine(imported.stderr)}`);
      const grown = fileSize(storeFile(home)) - g.space_after.file_bytes;
      ctx.observe('growth of a 16 MiB import after gc', grown);
      expect(grown < 8 * MIB, `a 16 MiB import after gc grew the file by ${grown} bytes: the freed pages were not reused`);
      const holder = await foreverRun(ctx, home);
      const size = fileSize(storeFile(home));
      const refused = await helix(['gc', '--compact', '--json', '--home', home]);
      expect(
        refused.code === 1 &&
          refused.stderr.startsWith('helix: P-PRECOND-STORE-BUSY: ') &&
          refused.stderr.includes(`process ${holder.proc.pid}`),
        `gc --compact beside a holder: exit ${refused.code}: ${firstLine(refused.stderr)}`,
      );
      expect(
        fileSize(storeFile(home)) === size && !existsSync(path.join(home, STORE_MARKERS.compacting)),
        'the refused compaction changed the file or left its marker',
      );
      ctx.observe('compaction refused', firstLine(refused.stderr));
      await kill9(holder.proc.child);
      const alone = await helix(['gc', '--compact', '--json', '--home', home]);
      expect(alone.code === 0, `gc --compact alone failed: ${firstLine(alone.stderr)}`);
      const c = (JSON.parse(alone.stdout) as { compaction: { file_bytes_before: number; file_bytes_after: number } }).compaction;
      ctx.observe('compaction', c);
      expect(c.file_bytes_after < c.file_bytes_before, `compaction did not shrink the file: ${JSON.stringify(c)}`);
      const { exit, report } = await storeCheck(home);
      expect(
        exit.code === 0 && report.checked.artifacts === 1,
        `store check after compaction: ${problemLines(report).join('; ')} (${report.checked.artifacts} artifacts)`,
      );
    },
  },
  {
    id: 'store.compaction-marker',
    title: "A compaction marker held by a live process keeps every opener out; a dead owner's marker is ignored",
    category: 'store',
    abi: ['ABI-STORE-057'],
    engines: ['helix'],
    expected:
      'runs list and call fail with P-PRECOND-STORE-BUSY "being compacted by process N", exit 1, writing nothing; with the marker\'s process dead, runs list exits 0',
    packs,
    policy,
    async run(ctx) {
      const home = path.join(ctx.env.dir, 'marked');
      expect((await helix(['runs', 'list', '--home', home])).code === 0, 'creating the store failed');
      const owner = sleeper(ctx);
      writeFileSync(
        path.join(home, STORE_MARKERS.compacting),
        JSON.stringify({ pid: owner.pid, hostname: hostname(), started_at: owner.started_at }),
      );
      const before = sha256File(storeFile(home));
      for (const args of [
        ['runs', 'list', '--home', home],
        ['call', 's.echo', '--toolpacks', await ctx.toolpacksDir(), '--home', home, '--policy', cliPolicy(ctx), '--input', '{}'],
      ]) {
        const r = await helix(args);
        expect(r.code === 1 || r.code === 3, `helix ${args[0]} beside a compaction exited ${r.code}`);
        expect(
          r.stderr.includes(`helix: P-PRECOND-STORE-BUSY: The store in ${home} is being compacted by process ${owner.pid}.`),
          `helix ${args[0]}: ${firstLine(r.stderr)}`,
        );
        ctx.observe(`helix ${args[0]}`, `exit ${r.code}: ${firstLine(r.stderr)}`);
      }
      expect(sha256File(storeFile(home)) === before, 'an opener refused by the marker wrote to the store');
      await owner.stop();
      const r = await helix(['runs', 'list', '--json', '--home', home]);
      expect(r.code === 0, `with the marker's owner dead, runs list exited ${r.code}: ${firstLine(r.stderr)}`);
    },
  },
];
