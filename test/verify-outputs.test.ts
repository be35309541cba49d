// helix verify checks a run's stored outputs (ABI-STORE-031, ABI-STORE-032): damaged output bytes
// and an output record pointing at other bytes are mismatches with the difference named, through
// the CLI (exit 1) and in-process, and the host serves the next call afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../abi/index.js';
import { importInline } from '../host/4-calls/artifacts/index.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { verifyRun, type VerifyReport } from '../host/4-calls/runs/verify.js';
import { openStore } from '../host/3-store/open-store.js';
import { rawDatabases } from '../host/3-store/raw-access.js';
import { compileGuest } from './helpers/as-guest.js';
import { damageBlob } from './helpers/store-damage.js';
import { runCli } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const dirs: Array<{ dir: string; cleanup: () => void }> = [];
afterAll(() => {
  for (const d of dirs) d.cleanup();
});
let plugins: string;
const limits = { maxInputBytes: 100_000, maxOutputBytes: 100_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 100 };
const write = (data: string, final = false) => ({ name: 'artifact.write', args: { role: 'report', data, ...(final ? { final } : {}) } });

beforeAll(async () => {
  const script = await compileGuest('script.ts');
  const p = await toolpacksDir([
    {
      id: 'v.writer',
      module: script,
      manifest: {
        limits,
        capabilities: { abiVersion: 1, allow: ['artifact.write'] },
        declaredOutputs: [{ role: 'report', type: 'text', label: 'a report' }],
      },
    },
  ]);
  dirs.push(p);
  plugins = p.dir;
}, 180_000);

/** A store holding one succeeded run that wrote a two-piece text output. */
async function recorded(): Promise<{ home: string; run: RunRecord }> {
  const t = tempDir('helix-verify-');
  dirs.push(t);
  const host = await createHost({ toolpacksDir: plugins, home: t.dir });
  try {
    const r = await host.call({ tool_id: 'v.writer', input: { calls: [write('line 1\n'), write('line 2\n', true)] } });
    expect(r.status).toBe('success');
    const run = getRun(hostStore(host), r.run_id!)!;
    expect(run.outputs).toHaveLength(1);
    const report = await verifyRun(hostStore(host), run.run_id);
    expect(report.match).toBe(true);
    expect(report.checks.map((c) => [c.check, c.ok])).toEqual(
      expect.arrayContaining([
        ['stored outputs read back as recorded', true],
        ['same output artifacts', true],
      ]),
    );
    return { home: t.dir, run };
  } finally {
    await host.close();
  }
}

async function helixVerify(runId: string, home: string): Promise<{ code: number | null; report: VerifyReport; stderr: string }> {
  const r = await runCli(['verify', runId, '--home', home]);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport, stderr: r.stderr };
}

describe('helix verify with damaged outputs', () => {
  it('reports damaged output bytes as a mismatch naming the output (CLI exit 1, in-process), then serves', async () => {
    const { home, run } = await recorded();
    const output = run.outputs[0]!;
    await damageBlob(home, output.sha256);

    const byCli = await helixVerify(run.run_id, home);
    expect(byCli.code).toBe(1);
    expect(byCli.report).toMatchObject({
      match: false,
      first_difference: { where: `output report (${output.artifact_id})`, expected: output.sha256, actual: 'D-DATA-CHECKSUM' },
    });
    expect(byCli.report.checks).toContainEqual(
      expect.objectContaining({
        check: 'stored outputs read back as recorded',
        ok: false,
        detail: expect.stringMatching(/does not match its hash/),
      }),
    );

    const host = await createHost({ toolpacksDir: plugins, home });
    try {
      expect((await verifyRun(hostStore(host), run.run_id)).match).toBe(false);
      expect(await host.call({ tool_id: 'helix.run_verify', input: { run_id: run.run_id } })).toMatchObject({
        status: 'success',
        output: { match: false },
      });
      expect(await host.call({ tool_id: 'v.writer', input: { calls: [write('again\n', true)] } })).toMatchObject({ status: 'success' });
    } finally {
      await host.close();
    }
  }, 300_000);

  it('reports an output record moved to other, intact bytes as a difference of the re-executed output', async () => {
    const { home, run } = await recorded();
    const output = run.outputs[0]!;
    const store = openStore(home);
    try {
      const other = await importInline(store, 'line 1\nline X\n');
      const record = rawDatabases(store).artifacts.get(output.artifact_id)!;
      await rawDatabases(store).artifacts.put(output.artifact_id, { ...record, sha256: other.sha256, size: other.size });
      await rawDatabases(store).runs.put(run.run_id, { ...run, outputs: [{ ...output, sha256: other.sha256 }] });
    } finally {
      await store.close();
    }
    const byCli = await helixVerify(run.run_id, home);
    expect(byCli.code).toBe(1);
    expect(byCli.report.checks).toContainEqual({ check: 'stored outputs read back as recorded', ok: true });
    expect(byCli.report).toMatchObject({
      match: false,
      first_difference: { where: 'output report', expected: expect.not.stringMatching(output.sha256), actual: output.sha256 },
    });
  }, 300_000);
});
