// Store checks of `helix store check`: it re-hashes every chunk and blob, parses every record,
// follows every reference and re-chains every journal, finding each kind of damage planted, and
// writes nothing, even beside a live import (ABI-STORE-060..065).
import { hostname } from 'node:os';
import path from 'node:path';
import type { JournalEntry } from '../../../abi/index.js';
import { keyText, newestCommitIn, STORE_MARKERS } from '../../../host/5-host/store-upkeep.js';
import { expect, type Check } from '../../check.js';
import {
  bigFile,
  fileSize,
  firstLine,
  helix,
  problemLines,
  startHelix,
  storeCheck,
  storeFile,
  UNDECODABLE,
  until,
  type CliExit,
} from '../../kit/store-kit.js';
import { cliPolicy, expectProblem, flip, MIB, packs, plantedCheck, policy, seed } from './shared.js';

/** The checks of this file, in the report's order. */
export const storeCheckChecks: readonly Check[] = [
  // ---------------------------------------------------------------- store check (ABI-STORE-060..065)
  {
    id: 'store.check-chunks-and-blobs',
    title:
      'store check re-hashes every chunk and blob: a flipped bit, a missing chunk, a reordered chunk list, a wrong size, an undecodable blob record',
    category: 'store',
    abi: ['ABI-STORE-060', 'ABI-STORE-061', 'ABI-STORE-065'],
    engines: ['helix'],
    expected:
      'D-DATA-CHECKSUM chunks <key> and blobs <sha>; D-DATA-REFERENCE blobs "chunk 2 (...) is not in chunks"; D-DATA-RECORD-INVALID blobs "chunk 0 holds N bytes, not 1048576"; D-DATA-CHECKSUM blobs for the size; D-DATA-RECORD-INVALID for the record; one line each, exit 1; clean (exit 0) once restored',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const round1 = await plantedCheck(ctx, s.home, async (store) => [
        await store.plant('chunks', s.big.chunks[1]!, flip(Buffer.from(store.bytes('chunks', s.big.chunks[1]!)!), 1000)),
        await store.plant('blobs', s.big2.sha256, { size: 2_400_000, chunks: [...s.big2.chunks].reverse() }),
        await store.plant('blobs', s.small.sha256, UNDECODABLE),
      ]);
      expectProblem(round1.report, 'D-DATA-CHECKSUM', 'chunks', s.big.chunks[1]!, /do not hash to its key/);
      expectProblem(round1.report, 'D-DATA-CHECKSUM', 'blobs', s.big.sha256);
      expectProblem(round1.report, 'D-DATA-RECORD-INVALID', 'blobs', s.big2.sha256, /chunk 0 holds \d+ bytes, not 1048576/);
      expectProblem(round1.report, 'D-DATA-RECORD-INVALID', 'blobs', s.small.sha256);
      const round2 = await plantedCheck(ctx, s.home, async (store) => [
        await store.plant('chunks', s.big.chunks[2]!, undefined),
        await store.plant('blobs', s.big2.sha256, { size: 2_400_001, chunks: s.big2.chunks }),
      ]);
      expectProblem(
        round2.report,
        'D-DATA-REFERENCE',
        'blobs',
        s.big.sha256,
        new RegExp(`chunk 2 \\(${s.big.chunks[2]}\\) is not in chunks`),
      );
      expectProblem(round2.report, 'D-DATA-CHECKSUM', 'blobs', s.big2.sha256, /its chunks hold 2400000 bytes, the record says 2400001/);
      ctx.observe('round 1', problemLines(round1.report));
      ctx.observe('round 2', problemLines(round2.report));
      ctx.observe('bytes re-hashed', round1.report.bytes_hashed);
    },
  },
  {
    id: 'store.check-records',
    title: 'store check parses every record of every database against its schema and its key, and hashes params and policies',
    category: 'store',
    abi: ['ABI-STORE-062', 'ABI-STORE-065'],
    engines: ['helix'],
    expected:
      'D-DATA-RECORD-INVALID for a cut run record, an artifact with size "large", a run event and audit record of the wrong shape, a kv key that is not [tool, key], an active run of the wrong shape, a module record carrying another digest, meta last_created_at "x", a pending header of the wrong shape; D-DATA-CHECKSUM for edited params and policy text',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      let auditKey: unknown;
      let moduleKey = '';
      const { report } = await plantedCheck(ctx, s.home, async (store) => {
        auditKey = [...store.keys('audit')][0];
        moduleKey = String([...store.keys('modules')][0]);
        const mod = store.record('modules', moduleKey) as Record<string, unknown>;
        const artifact = store.record('artifacts', s.big.id) as Record<string, unknown>;
        return [
          await store.plant('runs', s.echo.run_id, Buffer.from([0x92, 0x01])),
          await store.plant('artifacts', s.big.id, { ...artifact, size: 'large' }),
          await store.plant('runEvents', [s.writer.run_id, 0], { kind: 42 }),
          await store.plant('audit', auditKey as string, { at: 'yesterday' }),
          await store.plant('kv', 'plain-key', { n: 1 }),
          await store.plant('activeRuns', s.script.run_id, { pid: 'x' }),
          await store.plant('modules', moduleKey, { ...mod, digest: `sha256:${'0'.repeat(64)}` }),
          await store.plant('meta', 'last_created_at', 'x'),
          await store.plant('pending', ['cafe', STORE_MARKERS.pendingHeader], { owner: 'me' }),
          await store.plant('params', s.writer.params_hash, '{"edited":true}'),
          await store.plant('policies', s.writer.policy_hash, '{"version":1}'),
        ];
      });
      const k = keyText;
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'runs', s.echo.run_id);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'artifacts', s.big.id, /at size/);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'run_events', k([s.writer.run_id, 0]));
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'audit', k(auditKey));
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'kv', 'plain-key');
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'active_runs', s.script.run_id);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'modules', moduleKey, /carries the digest/);
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'meta', 'last_created_at');
      expectProblem(report, 'D-DATA-RECORD-INVALID', 'pending_writes', k(['cafe', STORE_MARKERS.pendingHeader]));
      expectProblem(report, 'D-DATA-CHECKSUM', 'param_sets', s.writer.params_hash);
      expectProblem(report, 'D-DATA-CHECKSUM', 'policies', s.writer.policy_hash);
      ctx.observe('problems', problemLines(report));
    },
  },
  {
    id: 'store.check-references',
    title:
      'store check follows every reference: artifacts to blobs and the time index, runs to params, logs and idempotency keys, events and active runs to runs, modules to their bytes',
    category: 'store',
    abi: ['ABI-STORE-063'],
    engines: ['helix'],
    expected:
      'D-DATA-REFERENCE for: an artifact whose blob is gone, an artifact missing from artifacts_by_time, a run whose params and log artifact are gone, an event and an active run of a run that does not exist, an idempotency key naming no run, a module whose bytes are gone',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const ghost = `run_${'0'.repeat(32)}`;
      let byTime: unknown;
      let moduleKey = '';
      const { report } = await plantedCheck(ctx, s.home, async (store) => {
        const a = store.record('artifacts', s.big2.id) as { created_at: number };
        byTime = [a.created_at, s.big2.id];
        const echoModuleDigest = s.echo.module_digest!;
        moduleKey = echoModuleDigest;
        const mod = store.record('modules', echoModuleDigest) as { blob: string };
        return [
          await store.plant('blobs', s.small.sha256, undefined),
          await store.plant('artifactsByTime', byTime as string, undefined),
          await store.plant('params', s.writer.params_hash, undefined),
          await store.plant('artifacts', s.echo.log_artifact_id!, undefined),
          await store.plant('runEvents', [ghost, 0], store.record('runEvents', [s.echo.run_id, 0]) as object),
          await store.plant('activeRuns', ghost, { pid: 1, hostname: hostname(), started_at: 1 }),
          await store.plant('idempotency', 'ghost-key', ghost),
          await store.plant('blobs', mod.blob, undefined),
        ];
      });
      const k = keyText;
      expectProblem(report, 'D-DATA-REFERENCE', 'artifacts', s.small.id, /its blob .* is not in blobs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'artifacts', s.big2.id, /missing from artifacts_by_time/);
      expectProblem(report, 'D-DATA-REFERENCE', 'runs', s.writer.run_id, /its params .* are not in param_sets/);
      expectProblem(report, 'D-DATA-REFERENCE', 'runs', s.echo.run_id, /its log .* is not in artifacts/);
      expectProblem(report, 'D-DATA-REFERENCE', 'run_events', k([ghost, 0]), /is not in runs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'active_runs', ghost, /is not in runs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'idempotency', 'ghost-key', /is not in runs/);
      expectProblem(report, 'D-DATA-REFERENCE', 'modules', moduleKey, /its bytes, blob .* are not in blobs/);
      ctx.observe('problems', problemLines(report));
    },
  },
  {
    id: 'store.check-journal',
    title: "store check re-chains every run's journal: an edited entry and a dropped last entry break it",
    category: 'store',
    abi: ['ABI-STORE-064'],
    engines: ['helix'],
    expected:
      'D-DATA-JOURNAL run_journal <run>/1 "entry 1 does not match its hash" for an edited (still valid) entry; D-DATA-JOURNAL naming the run when its last entry is removed',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const runId = s.script.run_id;
      expect(s.script.journal.entries === 4, `the seeded run has ${s.script.journal.entries} journal entries, not 4`);
      const edited = await plantedCheck(ctx, s.home, async (store) => {
        const entry = store.record('journal', [runId, 1]) as JournalEntry;
        return [await store.plant('journal', [runId, 1], { ...entry, args: { key: 'edited' } })];
      });
      expectProblem(edited.report, 'D-DATA-JOURNAL', 'run_journal', `${runId}/1`, /entry 1 does not match its hash/);
      const dropped = await plantedCheck(ctx, s.home, async (store) => [await store.plant('journal', [runId, 3], undefined)]);
      const journalProblem = dropped.report.problems.find((p) => p.code === 'D-DATA-JOURNAL' && p.key.startsWith(runId));
      expect(
        journalProblem !== undefined,
        `a dropped last entry was not reported as D-DATA-JOURNAL of ${runId}: ${problemLines(dropped.report).join('; ')}`,
      );
      ctx.observe('edited entry', problemLines(edited.report));
      ctx.observe(
        'dropped entry',
        dropped.report.problems.map((p) => `${p.code} ${p.database} ${p.key}: ${p.message}`),
      );
    },
  },
  {
    id: 'store.check-read-only-beside-writer',
    title: 'store check writes nothing, runs beside a live import, and does not count its pending write as damage',
    category: 'store',
    abi: ['ABI-STORE-065', 'ABI-STORE-004'],
    engines: ['helix'],
    expected:
      'on an idle store, store check leaves the newest commit unchanged; every store check run wholly during a 256 MiB import in another process it exits 0 with no note of a dead pending write, and the import then succeeds',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const before = newestCommitIn(storeFile(s.home));
      const idle = await storeCheck(s.home);
      expect(
        idle.exit.code === 0 && newestCommitIn(storeFile(s.home)) === before,
        `store check on an idle store: exit ${idle.exit.code}, commits ${before} -> ${newestCommitIn(storeFile(s.home))}`,
      );
      const data = bigFile(path.join(ctx.env.importRoot, 'live.bin'), 256, 11);
      const imp = startHelix(['artifact', 'import', data, '--home', s.home, '--policy', cliPolicy(ctx)], { timeoutMs: 120_000 });
      await until(
        'the import to start writing chunks',
        () => fileSize(storeFile(s.home)) > idle.report.bytes_hashed + 8 * MIB || imp.child.exitCode !== null,
        30_000,
        5,
      );
      // Each store check must begin and end while the import runs: its reading overlaps the import's writes.
      const beside: CliExit[] = [];
      while (imp.child.exitCode === null) {
        const r = await helix(['store', 'check', '--home', s.home]);
        if (imp.child.exitCode === null) beside.push(r);
      }
      const ended = await imp.ended;
      ctx.observe(
        'store checks run wholly beside the import',
        beside.map((r) => ({ exit: r.code, summary: r.stdout.trim().split('\n').pop() })),
      );
      expect(beside.length > 0, 'the import ended before one store check could run beside it');
      for (const r of beside)
        expect(
          r.code === 0 && !/pending write/.test(r.stdout),
          `store check beside a live import: exit ${r.code}: ${r.stdout.slice(-300)}`,
        );
      expect(ended.code === 0, `the import beside store check failed: ${firstLine(ended.stderr)}`);
    },
  },
];
