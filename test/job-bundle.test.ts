// Job bundles without a cluster (abi/ABI.md, "Fan-out", ABI-FANOUT-001..006): a bundle written
// from one store, run by the real `helix job run` in its own process on a store of its own,
// collected back; the run is the one a local call gets (same id, output and output artifacts),
// verifies and exports; tampered bundles are refused with their codes and write nothing; a
// second collect changes nothing.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHelixError } from '../abi/index.js';
import { submitJobArray } from '../host/6-faces/fanout/job-array.js';
import { networkFilesystem } from '../host/6-faces/fanout/node-home.js';
import { createHost, hostStore, type Host } from '../host/5-host/host.js';
import { readAudit } from '../host/3-store/audit.js';
import { runCli as runCliWith } from './helpers/cli-process.js';
import { runCli } from './helpers/run-cli.js';

// A fresh node process loads the toolpacks and compiles a module: seconds on a loaded machine.
const RUN_BOUND_MS = 120_000;

let root: string;
let host: Host;
let fasta: string;

/** A FASTA text of `n` records with a varied composition, so each file has its own figures. */
function fastaText(seed: number, n: number): string {
  const bases = 'ACGTTGCA';
  let text = '';
  for (let r = 0; r < n; r++) {
    let seq = '';
    for (let i = 0; i < 50 + ((seed * 31 + r * 7) % 90); i++) seq += bases[(seed * 13 + r * 5 + i * (seed + 3)) % bases.length];
    text += `>r${seed}_${r}\n${seq}\n`;
  }
  return text;
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'helix-job-test-'));
  host = await createHost({ home: path.join(root, 'submit') });
  fasta = (await host.artifacts.importInline(fastaText(1, 12), { label: 'one', type: 'fasta' })).id;
}, RUN_BOUND_MS);

afterAll(async () => {
  await host?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Writes a bundle for `input` of `tool` and runs it with the real CLI; the bundle directory and the CLI's exit. */
async function bundleAndRun(
  tool: string,
  input: Record<string, unknown>,
  name: string,
): Promise<{ dir: string; runId: string; code: number | null; stdout: string; stderr: string }> {
  const dir = path.join(root, name);
  const job = await host.jobs.bundle({ tool_id: tool, input }, dir);
  const run = await runCli(['job', 'run', dir], tmpdir());
  return { dir, runId: job.run_id, code: run.code, stdout: run.stdout, stderr: run.stderr };
}

/** This process's environment without an array task id (the tests may run inside a Slurm job). */
function withoutTaskId(): NodeJS.ProcessEnv {
  const { SLURM_ARRAY_TASK_ID: _, ...env } = process.env;
  return env;
}

/** A copy of a bundle directory, to change without touching the original. */
function copyOf(dir: string, name: string): string {
  const copy = path.join(root, name);
  cpSync(dir, copy, { recursive: true });
  return copy;
}

/** What the submitting store holds of a run and beyond: to show a refused or repeated collect wrote nothing. */
function snapshot(runId: string): string {
  return JSON.stringify({
    run: host.runs.get(runId) ?? null,
    events: host.runs.events(runId),
    artifacts: host.artifacts.list({ limit: 1000 }).length,
    audit: readAudit(hostStore(host)).length,
  });
}

describe('a job bundle run on a store of its own and collected', () => {
  it(
    'gives the run a local call gets, with its output artifact, and helix verify and the RO-Crate export cover it',
    async () => {
      const job = await bundleAndRun('seq.revcomp', { fasta, line_width: 60 }, 'revcomp');
      expect(job.stderr).toBe('');
      expect(job.code).toBe(0);
      const node = JSON.parse(job.stdout) as { run_id: string; output: { artifact_id: string } };
      expect(node.run_id).toBe(job.runId);
      expect(host.runs.get(job.runId)).toBeUndefined();

      const collected = await host.jobs.collect(job.dir);
      expect(collected).toMatchObject({ run_id: job.runId, outcome: 'imported', status: 'succeeded' });
      const run = host.runs.get(job.runId)!;
      expect(run.status).toBe('succeeded');
      expect(run.inputs).toEqual([{ role: 'fasta', artifact_id: fasta, sha256: host.artifacts.get(fasta).sha256 }]);
      expect(host.runs.events(job.runId).map((e) => e.kind)).toEqual(['started', 'finished', 'collected']);
      const output = host.artifacts.get(run.outputs[0]!.artifact_id);
      expect(output).toMatchObject({ created_by_run: job.runId, type: 'fasta', sha256: run.outputs[0]!.sha256 });

      // The same call made here, on a store of its own: same run id, same output bytes.
      const local = await createHost({ home: path.join(root, 'local') });
      try {
        const again = await local.artifacts.importInline(fastaText(1, 12), { label: 'one', type: 'fasta' });
        const response = await local.call({ tool_id: 'seq.revcomp', input: { fasta: again.id, line_width: 60 } });
        expect(response.run_id).toBe(job.runId);
        expect(local.runs.get(job.runId)!.outputs[0]!.sha256).toBe(output.sha256);
      } finally {
        await local.close();
      }

      const report = await host.runs.verify(job.runId);
      expect(report.checks.filter((c) => !c.ok)).toEqual([]);
      expect(report.match).toBe(true);
      const crate = await host.runs.exportCrate(job.runId, path.join(root, 'crate'));
      expect(crate.runs).toContain(job.runId);
      expect(readFileSync(path.join(root, 'crate', 'ro-crate-metadata.json'), 'utf8')).toContain(output.id);

      const check = await runCli(['store', 'check', '--home', host.home], tmpdir());
      expect(check.stdout).toContain('clean');
      expect(check.code).toBe(0);

      // A local call of the same identity replays the collected run; nothing executes.
      const replay = await host.call({ tool_id: 'seq.revcomp', input: { fasta, line_width: 60 } });
      expect(replay).toMatchObject({ run_id: job.runId, replayed: true, output: node.output });

      // A second collect changes nothing.
      const before = snapshot(job.runId);
      expect((await host.jobs.collect(job.dir)).outcome).toBe('unchanged');
      expect(snapshot(job.runId)).toBe(before);
    },
    RUN_BOUND_MS,
  );

  it(
    'refuses a tampered result bundle with the precise code and writes nothing',
    async () => {
      const job = await bundleAndRun('seq.revcomp', { fasta, line_width: 7 }, 'tamper');
      expect(job.code).toBe(0);
      const result = path.join(job.dir, 'result', 'result.json');
      const parsed = JSON.parse(readFileSync(result, 'utf8')) as {
        run: { outputs: Array<{ sha256: string }>; params_hash: string };
        journal: Array<{ result: unknown }>;
      };
      const before = snapshot(job.runId);
      const refusedWith = async (dir: string): Promise<string> => {
        try {
          await host.jobs.collect(dir);
          return 'collected';
        } catch (err) {
          return isHelixError(err) ? err.code : String(err);
        }
      };

      const bytes = copyOf(job.dir, 'tamper-bytes');
      const outputFile = path.join(bytes, 'result', 'blobs', parsed.run.outputs[0]!.sha256);
      writeFileSync(outputFile, readFileSync(outputFile, 'utf8').replace('A', 'C'));
      expect(await refusedWith(bytes)).toBe('D-DATA-BUNDLE-HASH');

      const journal = copyOf(job.dir, 'tamper-journal');
      const edited = structuredClone(parsed);
      edited.journal[0]!.result = { tampered: true };
      writeFileSync(path.join(journal, 'result', 'result.json'), JSON.stringify(edited));
      expect(await refusedWith(journal)).toBe('D-DATA-JOURNAL');

      const identity = copyOf(job.dir, 'tamper-identity');
      const other = structuredClone(parsed);
      other.run.params_hash = `sha256:${'0'.repeat(64)}`;
      writeFileSync(path.join(identity, 'result', 'result.json'), JSON.stringify(other));
      expect(await refusedWith(identity)).toBe('D-DATA-BUNDLE-IDENTITY');

      const creator = copyOf(job.dir, 'tamper-creator');
      const stolen = JSON.parse(readFileSync(result, 'utf8')) as {
        artifacts: Array<{ created_by_run: string | null; source: { kind: string } }>;
      };
      for (const a of stolen.artifacts) a.created_by_run = `run_${'2'.repeat(32)}`;
      writeFileSync(path.join(creator, 'result', 'result.json'), JSON.stringify(stolen));
      expect(await refusedWith(creator)).toBe('D-DATA-BUNDLE-IDENTITY');

      const missing = copyOf(job.dir, 'tamper-missing');
      rmSync(path.join(missing, 'result', 'blobs', parsed.run.outputs[0]!.sha256));
      expect(await refusedWith(missing)).toBe('I-REQ-JOB-BUNDLE');

      expect(snapshot(job.runId)).toBe(before);
      expect(host.runs.get(job.runId)).toBeUndefined();
      expect((await host.jobs.collect(job.dir)).outcome).toBe('imported');
    },
    RUN_BOUND_MS,
  );
});

describe('a result whose output value was changed', () => {
  it(
    'is refused by collect --verify, and a plain collect leaves helix verify to find it (ABI-STORE-033)',
    async () => {
      const job = await bundleAndRun('seq.stats', { sequences: fasta }, 'value');
      expect(job.code).toBe(0);
      const dir = copyOf(job.dir, 'value-tampered');
      const file = path.join(dir, 'result', 'result.json');
      const result = JSON.parse(readFileSync(file, 'utf8')) as {
        run: { result: { output: { num_seqs: number } } };
        response: { output: { num_seqs: number } };
      };
      result.run.result.output.num_seqs += 1;
      result.response.output.num_seqs += 1;
      writeFileSync(file, JSON.stringify(result));

      const before = snapshot(job.runId);
      const refused = await host.jobs.collect(dir, { verify: true }).then(
        () => 'collected',
        (err: unknown) => (isHelixError(err) ? err.code : String(err)),
      );
      expect(refused).toBe('D-DATA-BUNDLE-VERIFY');
      expect(snapshot(job.runId)).toBe(before);

      const other = await createHost({ home: path.join(root, 'value-store') });
      try {
        const refusedHere = await other.jobs.collect(dir).catch((err: unknown) => (isHelixError(err) ? err.code : String(err)));
        expect(refusedHere).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
        await other.jobs.importInputs(dir, [host.artifacts.get(fasta)]);
        expect((await other.jobs.collect(dir)).outcome).toBe('imported');
        const report = await other.runs.verify(job.runId);
        expect(report.match).toBe(false);
        expect(report.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(['same output value']);
        expect(report.first_difference).toMatchObject({ where: 'output value' });
      } finally {
        await other.close();
      }
      expect((await host.jobs.collect(job.dir, { verify: true })).outcome).toBe('imported');
      expect((await host.runs.verify(job.runId)).match).toBe(true);
    },
    RUN_BOUND_MS,
  );
});

describe('a run that fails on the node, and an array element run by index', () => {
  it(
    'collects a failed run as failed, once',
    async () => {
      const text = (await host.artifacts.importInline('hello there', { type: 'fasta' })).id;
      const job = await bundleAndRun('seq.stats', { sequences: text }, 'failing');
      expect(job.code).toBe(1);
      expect(JSON.parse(job.stdout)).toMatchObject({ status: 'terminal_error', error: { code: 'D-DATA-FORMAT' }, run_id: job.runId });
      expect(await host.jobs.collect(job.dir)).toMatchObject({ outcome: 'imported', status: 'failed' });
      expect(host.runs.get(job.runId)).toMatchObject({ status: 'failed', result: { error: { code: 'D-DATA-FORMAT' } } });
      const before = snapshot(job.runId);
      expect((await host.jobs.collect(job.dir)).outcome).toBe('unchanged');
      expect(snapshot(job.runId)).toBe(before);
    },
    RUN_BOUND_MS,
  );

  it(
    'runs the element SLURM_ARRAY_TASK_ID of an array directory with --array-element, and refuses without one',
    async () => {
      const other = (await host.artifacts.importInline(fastaText(2, 5), { type: 'fasta' })).id;
      // An element the host would refuse stops the whole array before any bundle is written.
      const unknown = path.join(root, 'array-unknown');
      const refused = await submitJobArray(
        host,
        { tool_id: 'seq.stats', input: {} },
        '/sequences',
        [fasta, `art_${'0'.repeat(26)}`],
        unknown,
        { submit: false },
      ).catch((err: unknown) => (isHelixError(err) ? err.code : String(err)));
      expect(refused).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
      expect(existsSync(unknown)).toBe(false);
      const dir = path.join(root, 'array');
      const array = await submitJobArray(host, { tool_id: 'seq.stats', input: {} }, '/sequences', [fasta, other], dir, { submit: false });
      expect(array).toMatchObject({
        slurm_job_id: null,
        elements: [
          { index: 0, artifact_id: fasta },
          { index: 1, artifact_id: other },
        ],
      });
      const missing = await runCliWith(['job', 'run', dir, '--array-element'], { env: withoutTaskId() });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('I-REQ-JOB-ARRAY');
      const element = await runCliWith(['job', 'run', dir, '--array-element'], { env: { ...withoutTaskId(), SLURM_ARRAY_TASK_ID: '1' } });
      expect(element.code).toBe(0);
      expect(JSON.parse(element.stdout)).toMatchObject({ run_id: array.elements[1]!.run_id, status: 'success' });
      expect(existsSync(path.join(dir, '1', 'result', 'result.json'))).toBe(true);
      expect(existsSync(path.join(dir, '0', 'result'))).toBe(false);
    },
    RUN_BOUND_MS,
  );
});

describe('a job refused on the node', () => {
  it(
    'refuses an input whose bytes were changed, and writes the refusal as the result',
    async () => {
      const dir = path.join(root, 'bad-input');
      await host.jobs.bundle({ tool_id: 'seq.stats', input: { sequences: fasta } }, dir);
      const blobs = path.join(dir, 'blobs');
      const [blob] = readdirSync(blobs);
      writeFileSync(path.join(blobs, blob!), '>x\nACGT\n');
      const run = await runCli(['job', 'run', dir], tmpdir());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('D-DATA-BUNDLE-HASH');
      const collected = await host.jobs.collect(dir);
      expect(collected).toMatchObject({
        outcome: 'refused',
        status: null,
        response: { status: 'terminal_error', error: { code: 'D-DATA-BUNDLE-HASH' } },
      });
    },
    RUN_BOUND_MS,
  );

  it(
    'refuses a job whose run id the node does not reproduce (C-CONTRACT-JOB-TOOL), running nothing',
    async () => {
      const dir = path.join(root, 'other-id');
      await host.jobs.bundle({ tool_id: 'seq.stats', input: { sequences: fasta } }, dir);
      const file = path.join(dir, 'job.json');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/"run_id": "run_[0-9a-f]+"/, `"run_id": "run_${'1'.repeat(32)}"`));
      const run = await runCli(['job', 'run', dir], tmpdir());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('C-CONTRACT-JOB-TOOL');
      const result = JSON.parse(readFileSync(path.join(dir, 'result', 'result.json'), 'utf8')) as { run: unknown; journal: unknown[] };
      expect(result).toMatchObject({ run: null, journal: [] });
    },
    RUN_BOUND_MS,
  );

  it(
    'refuses to open the submitting store as its own, or a home on a network filesystem',
    async () => {
      const dir = path.join(root, 'same-home');
      await host.jobs.bundle({ tool_id: 'seq.stats', input: { sequences: fasta } }, dir);
      const run = await runCli(['job', 'run', dir, '--home', host.home], tmpdir());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('P-PRECOND-JOB-HOME');
      expect(networkFilesystem('/x', () => ({ type: 0x6969 }))).toBe('nfs');
      expect(networkFilesystem('/x', () => ({ type: 0xff534d42 }))).toBe('cifs');
      expect(networkFilesystem(tmpdir())).toBeUndefined();
    },
    RUN_BOUND_MS,
  );

  it(
    'refuses a bundle file that is not of the format, naming it (the bundle written by `helix job bundle`)',
    async () => {
      const dir = path.join(root, 'bad-format');
      const made = await runCli(
        ['job', 'bundle', 'seq.stats', '--input', JSON.stringify({ sequences: fasta }), '--dir', dir, '--home', host.home],
        tmpdir(),
      );
      expect(made.code).toBe(0);
      expect(JSON.parse(made.stdout)).toMatchObject({
        bundle: dir,
        format: 'helix-job/1',
        request: { tool_id: 'seq.stats', tool_version: '1.0.0' },
      });
      expect((await runCli(['job', 'bundle', 'seq.stats', '--input', '{}', '--dir', dir, '--home', host.home], tmpdir())).code).toBe(2);
      writeFileSync(path.join(dir, 'job.json'), JSON.stringify({ format: 'helix-job/9' }));
      const run = await runCli(['job', 'run', dir], tmpdir());
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('I-REQ-JOB-BUNDLE');
      expect(run.stderr).toContain('job.json');
    },
    RUN_BOUND_MS,
  );
});

describe('helix job collect on one bundle', () => {
  it(
    'collects it into the store --home names (with --verify), answers unchanged the second time, and exits 1 for a bundle not run yet',
    async () => {
      const input = { fasta, line_width: 30 };
      const pending = path.join(root, 'cli-pending');
      await host.jobs.bundle({ tool_id: 'seq.revcomp', input }, pending);
      const missing = await runCli(['job', 'collect', pending, '--home', host.home], tmpdir());
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('P-PRECOND-JOB-RESULT-MISSING');

      const job = await bundleAndRun('seq.revcomp', input, 'cli-collect');
      expect(job.code).toBe(0);
      const first = await runCli(['job', 'collect', job.dir, '--home', host.home, '--verify'], tmpdir());
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ run_id: job.runId, outcome: 'imported', status: 'succeeded' });
      expect(host.runs.get(job.runId)?.status).toBe('succeeded');
      const second = await runCli(['job', 'collect', job.dir, '--home', host.home], tmpdir());
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({ run_id: job.runId, outcome: 'unchanged' });
    },
    RUN_BOUND_MS,
  );
});
