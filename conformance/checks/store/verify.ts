// Store check of `helix verify` over tampered outputs: damaged output bytes, an output record moved
// to other bytes, and an edited stored output value are each found (ABI-STORE-031..033).
import path from 'node:path';
import type { RunRecord } from '../../../abi/index.js';
import type { VerifyReport } from '../../../host/5-host/host-records.js';
import { CheckFailure, expect, type Check } from '../../check.js';
import { firstLine, helix, withDiagnostics, withRecords } from '../../kit/store-kit.js';
import { flip, packs, policy, seed } from './shared.js';

/** The checks of this file, in the report's order. */
export const verifyChecks: readonly Check[] = [
  // ---------------------------------------------------------------- verify (ABI-STORE-031..033)
  {
    id: 'store.verify-tampered-outputs',
    title: 'helix verify finds damaged output bytes, an output record moved to other bytes, and an edited stored output value',
    category: 'store',
    abi: ['ABI-STORE-031', 'ABI-STORE-032', 'ABI-STORE-033'],
    engines: ['helix'],
    expected:
      'exit 1 and match false with first_difference.where "output report (<artifact>)" and check "stored outputs read back as recorded" false; then "output report" with "same output artifacts" false; then "output value" with "same output value" false; exit 0 when untouched',
    packs,
    policy,
    async run(ctx) {
      const s = await seed(ctx, path.join(ctx.env.dir, 'seeded'));
      const verify = async (runId: string): Promise<{ code: number | null; report: VerifyReport }> => {
        const r = await helix(['verify', runId, '--home', s.home]);
        try {
          return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
        } catch {
          throw new CheckFailure(`helix verify printed no report (exit ${r.code}): ${firstLine(r.stderr)}`);
        }
      };
      const clean = await verify(s.writer.run_id);
      expect(
        clean.code === 0 && clean.report.match,
        `verify of the untouched run: exit ${clean.code} ${JSON.stringify(clean.report.first_difference)}`,
      );
      const output = s.writer.outputs[0]!;
      const check = (r: VerifyReport, name: string): boolean | undefined => r.checks.find((c) => c.check === name)?.ok;

      const chunk = await withDiagnostics(s.home, async (store) => {
        const rec = store.record('blobs', output.sha256) as { chunks: string[] };
        return [await store.plant('chunks', rec.chunks[0]!, flip(Buffer.from(store.bytes('chunks', rec.chunks[0]!)!), 0))];
      });
      const damaged = await verify(s.writer.run_id);
      const where1 = (damaged.report.first_difference as { where?: string } | undefined)?.where;
      expect(
        damaged.code === 1 &&
          !damaged.report.match &&
          where1 === `output report (${output.artifact_id})` &&
          check(damaged.report, 'stored outputs read back as recorded') === false,
        `damaged output bytes: exit ${damaged.code} ${JSON.stringify(damaged.report.first_difference)}`,
      );
      await withDiagnostics(s.home, (store) => store.restore(chunk));
      ctx.observe('damaged bytes', damaged.report.first_difference);

      const other = await withRecords(s.home, (records) => records.artifacts.importInline('line 1\nline X\n'));
      const moved = await withDiagnostics(s.home, async (store) => {
        const rec = store.record('artifacts', output.artifact_id) as Record<string, unknown>;
        const run = store.record('runs', s.writer.run_id) as RunRecord;
        return [
          await store.plant('artifacts', output.artifact_id, { ...rec, sha256: other.sha256, size: other.size }),
          await store.plant('runs', s.writer.run_id, { ...run, outputs: [{ ...output, sha256: other.sha256 }] }),
        ];
      });
      const movedVerify = await verify(s.writer.run_id);
      const where2 = (movedVerify.report.first_difference as { where?: string } | undefined)?.where;
      expect(
        movedVerify.code === 1 &&
          where2 === 'output report' &&
          check(movedVerify.report, 'same output artifacts') === false &&
          check(movedVerify.report, 'stored outputs read back as recorded') === true,
        `output moved to other bytes: exit ${movedVerify.code} ${JSON.stringify(movedVerify.report.first_difference)} checks ${JSON.stringify(movedVerify.report.checks)}`,
      );
      await withDiagnostics(s.home, (store) => store.restore(moved));
      ctx.observe('moved output', movedVerify.report.first_difference);

      await withDiagnostics(s.home, async (store) => {
        const run = store.record('runs', s.echo.run_id) as RunRecord;
        await store.plant('runs', s.echo.run_id, { ...run, result: { ...run.result!, output: { n: 2 } } });
      });
      const value = await verify(s.echo.run_id);
      const where3 = (value.report.first_difference as { where?: string } | undefined)?.where;
      expect(
        value.code === 1 && where3 === 'output value' && check(value.report, 'same output value') === false,
        `edited output value: exit ${value.code} ${JSON.stringify(value.report.first_difference)} checks ${JSON.stringify(value.report.checks)}`,
      );
      ctx.observe('edited value', value.report.first_difference);
    },
  },
];
