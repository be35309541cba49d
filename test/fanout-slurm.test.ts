// Fan-out on the real Slurm cluster of scripts/services.sh (abi/ABI.md, ABI-FANOUT-007): seq.stats,
// and the container toolpack seqkit.stats, over several FASTA artifacts submitted by `helix job
// submit` as one job array, each element run by `helix job run` on a store of its own, collected
// by `helix job collect --wait-ms`. The runs are the ones local calls get (same ids and figures),
// verify, export, and a second collect changes nothing; a tampered element is refused with its
// code while the others come in; an array is adopted after a lost job id, and cancelled.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPolicyDocument } from '../host/4-calls/policy/default-policy.js';
import { runCli } from './helpers/cli-process.js';
import { SEQKIT_IMAGE_NAME, UP_BOUND_MS, upDocker } from './helpers/docker-services.js';
import { SLURM_UP_BOUND_MS, slurmUp } from './helpers/slurm-kit.js';

// The elements queue on a 2-CPU node that other Slurm tests share (one holds it for minutes), and
// each starts a node process; the bound only stops a hang.
const ARRAY_BOUND_MS = 900_000;

let root: string;
let env: NodeJS.ProcessEnv;
/** The policy every command here runs under: the default one, with a slurm section for seq.stats. */
let policy: string;

/** FASTA texts of different composition and size, one per array element. */
const TEXTS = [0, 1, 2].map((seed) => {
  let text = '';
  for (let r = 0; r < 5 + seed * 4; r++) text += `>s${seed}_${r}\n${'ACGGTCA'.repeat(3 + seed + r).slice(seed)}${'GC'.repeat(seed * r)}\n`;
  return text;
});

/** Runs the CLI with the cluster's environment; its JSON stdout parsed. */
async function helix(args: readonly string[]): Promise<{ code: number | string; json: unknown; stderr: string }> {
  const run = await runCli(args, { env, killAfterMs: ARRAY_BOUND_MS });
  let json: unknown = null;
  try {
    json = JSON.parse(run.stdout);
  } catch {
    json = run.stdout;
  }
  return { code: run.code, json, stderr: run.stderr };
}

/** Imports the texts into a store under `home`; their artifact ids in order. */
async function importTexts(home: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, text] of TEXTS.entries()) {
    const r = await helix([
      'artifact',
      'import',
      '--text',
      text,
      '--type',
      'fasta',
      '--label',
      `sample ${i}`,
      '--home',
      home,
      '--policy',
      policy,
    ]);
    expect(r.code).toBe(0);
    ids.push((r.json as { id: string }).id);
  }
  return ids;
}

interface ArrayFile {
  elements: Array<{ index: number; artifact_id: string; run_id: string }>;
  slurm_job_name: string;
  slurm_job_id: string;
}
interface CollectedArray {
  elements: Array<{
    index: number;
    run_id: string;
    slurm_state: string | null;
    collected?: { outcome: string; status: string; response: { output: unknown } };
    error?: { code: string };
  }>;
}

beforeAll(async () => {
  await slurmUp();
  env = { ...process.env };
  root = mkdtempSync(path.join(tmpdir(), 'helix-fanout-'));
  policy = path.join(root, 'policy.json');
  writeFileSync(
    policy,
    JSON.stringify({
      ...defaultPolicyDocument(),
      slurm: {
        partitions: ['debug'],
        workRoot: path.join(root, 'jobs'),
        tools: { 'seq.stats': {} },
        ceilings: { timeMinutes: 10, arraySize: 8 },
      },
    }),
  );
}, SLURM_UP_BOUND_MS + 60_000);

afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

describe('fan-out to a Slurm job array', () => {
  it(
    'runs one element per artifact on the cluster and collects runs equal to local calls, which verify and export',
    async () => {
      const home = path.join(root, 'submit');
      const ids = await importTexts(home);
      const dir = path.join(root, 'jobs', 'array');
      const submitted = await helix([
        'job',
        'submit',
        'seq.stats',
        '--input',
        '{}',
        '--over',
        '/sequences',
        '--artifacts',
        ids.join(','),
        '--dir',
        dir,
        '--home',
        home,
        '--policy',
        policy,
        '--time-minutes',
        '5',
      ]);
      expect(submitted.stderr).toBe('');
      expect(submitted.code).toBe(0);
      const array = submitted.json as ArrayFile;
      expect(array.slurm_job_id).toMatch(/^[0-9]+$/);
      expect(array.slurm_job_name).toMatch(/^helix-fanout\.seq\.stats\.[0-9a-f]{16}$/);
      expect(array.elements.map((e) => e.artifact_id)).toEqual(ids);

      // A copy of the submitting store as it is now (no process has it open), for the tampered collect below.
      const other = path.join(root, 'other');
      cpSync(home, other, { recursive: true });

      const collected = await helix(['job', 'collect', dir, '--verify', '--home', home, '--wait-ms', String(ARRAY_BOUND_MS - 30_000)]);
      expect(collected.stderr).toBe('');
      expect(collected.code).toBe(0);
      const elements = (collected.json as CollectedArray).elements;
      expect(elements.map((e) => [e.slurm_state, e.collected?.outcome, e.collected?.status])).toEqual(
        ids.map(() => ['COMPLETED', 'imported', 'succeeded']),
      );

      // One Slurm job per element, all in one array.
      const { stdout } = await promisify(execFile)(
        'sacct',
        ['-j', array.slurm_job_id, '--noheader', '--parsable2', '--allocations', '--format=JobID'],
        { env },
      );
      expect(stdout.trim().split('\n').sort()).toEqual(ids.map((_, i) => `${array.slurm_job_id}_${i}`));

      // The same calls made here on a store of their own: the same run ids and figures.
      const local = path.join(root, 'local');
      for (const [i, id] of (await importTexts(local)).entries()) {
        const call = await helix(['call', 'seq.stats', '--input', JSON.stringify({ sequences: id }), '--home', local, '--policy', policy]);
        expect(call.code).toBe(0);
        expect(call.json).toMatchObject({
          run_id: array.elements[i]!.run_id,
          replayed: false,
          output: elements[i]!.collected!.response.output,
        });
      }
      const figures = elements.map((e) => (e.collected!.response.output as { num_seqs: number }).num_seqs);
      expect(new Set(figures).size).toBe(TEXTS.length);

      for (const e of array.elements) {
        const verified = await helix(['verify', e.run_id, '--home', home]);
        expect(verified.json).toMatchObject({ run_id: e.run_id, match: true });
        expect(verified.code).toBe(0);
      }
      const exported = await helix(['runs', 'export', array.elements[0]!.run_id, path.join(root, 'crate'), '--home', home]);
      expect(exported.code).toBe(0);
      expect(readFileSync(path.join(root, 'crate', 'ro-crate-metadata.json'), 'utf8')).toContain(array.elements[0]!.run_id);

      // A second collect changes nothing.
      const listed = await helix(['runs', 'list', '--json', '--home', home]);
      const again = await helix(['job', 'collect', dir, '--home', home]);
      expect(again.code).toBe(0);
      expect((again.json as CollectedArray).elements.map((e) => e.collected?.outcome)).toEqual(ids.map(() => 'unchanged'));
      expect((await helix(['runs', 'list', '--json', '--home', home])).json).toEqual(listed.json);

      // A submit that died between sbatch and writing the job id: collect finds the array by its name and adopts it.
      const adopted = path.join(root, 'jobs', 'adopted');
      cpSync(dir, adopted, { recursive: true });
      writeFileSync(
        path.join(adopted, 'array.json'),
        JSON.stringify({ ...(JSON.parse(readFileSync(path.join(dir, 'array.json'), 'utf8')) as object), slurm_job_id: null }),
      );
      const adopt = await helix(['job', 'collect', adopted, '--home', home, '--wait-ms', '60000']);
      expect(adopt.code).toBe(0);
      expect((adopt.json as CollectedArray).elements.map((e) => [e.slurm_state, e.collected?.outcome])).toEqual(
        ids.map(() => ['COMPLETED', 'unchanged']),
      );
      expect(JSON.parse(readFileSync(path.join(adopted, 'array.json'), 'utf8'))).toMatchObject({ slurm_job_id: array.slurm_job_id });

      // Into the copy of the store, a tampered element is refused with its code; the others come in.
      const tampered = path.join(root, 'tampered');
      cpSync(dir, tampered, { recursive: true });
      const resultFile = path.join(tampered, '1', 'result', 'result.json');
      const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { run: { input_sha256: string } };
      writeFileSync(path.join(tampered, '1', 'result', 'blobs', result.run.input_sha256), '{"sequences":"art_00000000000000000000000000"}');
      const partial = await helix(['job', 'collect', tampered, '--home', other]);
      expect(partial.code).toBe(1);
      expect((partial.json as CollectedArray).elements.map((e) => e.error?.code ?? e.collected?.outcome)).toEqual([
        'imported',
        'D-DATA-BUNDLE-HASH',
        'imported',
      ]);
    },
    2 * ARRAY_BOUND_MS,
  );

  it(
    'refuses, before anything is written or submitted, a pointer that is no artifact field, repeated artifacts, a tool the policy does not fan out and a directory outside its work root',
    async () => {
      const home = path.join(root, 'refusals');
      const ids = await importTexts(home);
      const submit = (dir: string, args: readonly string[], policyFile = policy): ReturnType<typeof helix> =>
        helix(['job', 'submit', 'seq.stats', '--input', '{}', '--dir', dir, '--home', home, '--policy', policyFile, ...args]);
      const refusals: Array<[string, readonly string[], string, number, string?]> = [
        ['not-artifact', ['--over', '/label', '--artifacts', ids[0]!], 'I-REQ-JOB-ARRAY', 2],
        ['repeated', ['--over', '/sequences', '--artifacts', `${ids[0]},${ids[1]},${ids[0]}`], 'I-REQ-JOB-ARRAY', 2],
        ['over-ceiling', ['--over', '/sequences', '--artifacts', ids.join(','), '--time-minutes', '11'], 'A-AUTH-SLURM-LIMIT', 1],
        ['partition', ['--over', '/sequences', '--artifacts', ids.join(','), '--partition', 'gpu'], 'A-AUTH-SLURM-PARTITION', 1],
      ];
      for (const [name, args, code, exit] of refusals) {
        const dir = path.join(root, 'jobs', name);
        const r = await submit(dir, args);
        expect([name, r.code, r.stderr.split('\n')[0]]).toEqual([name, exit, expect.stringContaining(code)]);
        expect(existsSync(dir)).toBe(false);
      }
      const outside = await submit(path.join(root, 'elsewhere'), ['--over', '/sequences', '--artifacts', ids[0]!]);
      expect(outside.code).toBe(1);
      expect(outside.stderr).toContain('A-AUTH-FANOUT-WORK-ROOT');
      expect(existsSync(path.join(root, 'elsewhere'))).toBe(false);
      const noEntry = path.join(root, 'no-entry.json');
      writeFileSync(noEntry, JSON.stringify({ ...defaultPolicyDocument(), slurm: { workRoot: path.join(root, 'jobs') } }));
      const denied = await submit(path.join(root, 'jobs', 'no-entry'), ['--over', '/sequences', '--artifacts', ids[0]!], noEntry);
      expect(denied.code).toBe(1);
      expect(denied.stderr).toContain('A-AUTH-SLURM-TOOL');
      expect(existsSync(path.join(root, 'jobs', 'no-entry'))).toBe(false);
    },
    ARRAY_BOUND_MS,
  );

  it(
    'fans a container toolpack (seqkit.stats) out the same way: each element runs its container on the node, and comes back as a local call would',
    async () => {
      const image = await upDocker();
      const containerPolicy = path.join(root, 'container-policy.json');
      const base = defaultPolicyDocument();
      writeFileSync(
        containerPolicy,
        JSON.stringify({
          ...base,
          grants: { ...base.grants, 'seqkit.stats': ['docker.run'] },
          docker: { images: [image], pins: { [SEQKIT_IMAGE_NAME]: image }, tools: { 'seqkit.stats': {} } },
          slurm: { partitions: ['debug'], workRoot: path.join(root, 'jobs'), tools: { 'seqkit.stats': {} } },
        }),
      );
      const home = path.join(root, 'container');
      const ids = await importTexts(home);
      const dir = path.join(root, 'jobs', 'container');
      const submitted = await helix([
        'job',
        'submit',
        'seqkit.stats',
        '--input',
        '{}',
        '--over',
        '/sequences',
        '--artifacts',
        ids.join(','),
        '--dir',
        dir,
        '--home',
        home,
        '--policy',
        containerPolicy,
      ]);
      expect(submitted.stderr).toBe('');
      expect(submitted.code).toBe(0);
      const array = submitted.json as ArrayFile;
      const collected = await helix(['job', 'collect', dir, '--verify', '--home', home, '--wait-ms', String(ARRAY_BOUND_MS - 60_000)]);
      expect(collected.stderr).toBe('');
      expect(collected.code).toBe(0);
      const elements = (collected.json as CollectedArray).elements;
      expect(elements.map((e) => [e.slurm_state, e.collected?.outcome, e.collected?.status])).toEqual(
        ids.map(() => ['COMPLETED', 'imported', 'succeeded']),
      );
      for (const e of array.elements) {
        const shown = await helix(['runs', 'show', e.run_id, '--home', home]);
        expect((shown.json as { outputs: Array<{ role: string }> }).outputs.map((o) => o.role).sort()).toEqual(['stderr', 'table']);
      }

      const local = path.join(root, 'container-local');
      for (const [i, id] of (await importTexts(local)).entries()) {
        const call = await helix([
          'call',
          'seqkit.stats',
          '--input',
          JSON.stringify({ sequences: id }),
          '--home',
          local,
          '--policy',
          containerPolicy,
        ]);
        expect(call.code).toBe(0);
        expect(call.json).toMatchObject({
          run_id: array.elements[i]!.run_id,
          replayed: false,
          output: elements[i]!.collected!.response.output,
        });
      }
    },
    ARRAY_BOUND_MS + UP_BOUND_MS,
  );

  it(
    'cancels an array whose elements wait for the node: they end cancelled, with no result to collect',
    async () => {
      const home = path.join(root, 'cancel');
      const ids = await importTexts(home);
      // A job holding both CPUs of the node, running before the array is submitted, keeps the array waiting.
      const exec = promisify(execFile);
      const blocker = (
        await exec(
          'sbatch',
          [
            '--parsable',
            '--cpus-per-task=2',
            '--time=10',
            '--job-name=helix-fanout-test-blocker',
            '--output=/dev/null',
            '--wrap',
            'sleep 600',
          ],
          { env },
        )
      ).stdout
        .trim()
        .split(';')[0]!;
      try {
        for (let state = ''; state !== 'RUNNING'; ) {
          state = (await exec('squeue', ['-h', '-j', blocker, '-o', '%T'], { env })).stdout.trim();
          if (state !== 'RUNNING') await new Promise((resolve) => setTimeout(resolve, 500));
        }
        const dir = path.join(root, 'jobs', 'cancelled');
        const submitted = await helix([
          'job',
          'submit',
          'seq.stats',
          '--input',
          '{}',
          '--over',
          '/sequences',
          '--artifacts',
          ids.slice(0, 2).join(','),
          '--dir',
          dir,
          '--home',
          home,
          '--policy',
          policy,
        ]);
        expect(submitted.code).toBe(0);
        const cancelled = await helix(['job', 'cancel', dir]);
        expect(cancelled.code).toBe(0);
        expect(cancelled.json).toMatchObject({ slurm_job_id: (submitted.json as ArrayFile).slurm_job_id, state: 'cancelled' });
        const collected = await helix(['job', 'collect', dir, '--home', home, '--wait-ms', '60000']);
        expect(collected.code).toBe(1);
        expect((collected.json as CollectedArray).elements.map((e) => e.error?.code)).toEqual([
          'P-PRECOND-JOB-RESULT-MISSING',
          'P-PRECOND-JOB-RESULT-MISSING',
        ]);
        expect(existsSync(path.join(dir, '0', 'result'))).toBe(false);
      } finally {
        await exec('scancel', [blocker], { env });
      }
    },
    ARRAY_BOUND_MS,
  );
});
