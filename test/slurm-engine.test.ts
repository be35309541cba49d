// The low-level Slurm layer against the real single-node cluster of scripts/services.sh: a
// rendered script submitted through sbatch runs its argv exactly, its directives reach Slurm,
// states and exit codes come back mapped, jobs are found by name, and scancel cancels.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicySlurmSchema, type PolicySlurm } from '../abi/index.js';
import { cancelJob, findJobs, jobStatus, runSlurmCommand, submitBatch } from '../capabilities/slurm-commands.js';
import { renderBatchScript, type SlurmJobSpec } from '../capabilities/slurm-script.js';
import { JOB_BOUND_MS, SLURM_UP_BOUND_MS, slurmUp, waitForEnd, waitForJob } from './helpers/slurm-kit.js';

let work: string;
let policy: PolicySlurm;

beforeAll(async () => {
  await slurmUp();
  work = await mkdtemp(path.join(tmpdir(), 'helix-slurm-engine-'));
  policy = PolicySlurmSchema.parse({ partitions: ['debug'], workRoot: work, ceilings: { timeMinutes: 5, memoryMiB: 256 } });
}, SLURM_UP_BOUND_MS + 60_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** The fields of job `jobId` in accounting, once slurmdbd has its record (before, it shows a placeholder named `allocation`). */
async function accounted(jobId: string, fields: string): Promise<string> {
  const bound = Date.now() + JOB_BOUND_MS;
  for (;;) {
    const line = (await runSlurmCommand('sacct', ['-n', '-P', '-X', '-j', jobId, '-o', `${fields},Partition`])).trim();
    if (!line.endsWith('|') || Date.now() > bound) return line.slice(0, line.lastIndexOf('|'));
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A spec running `argv` in `work`, under a name of its own. */
function spec(argv: string[], extra: Partial<SlurmJobSpec> = {}): SlurmJobSpec {
  const tag = randomUUID().slice(0, 8);
  return {
    jobName: `helix.test.${tag}`,
    comment: `helix:test:${tag}`,
    workDir: work,
    output: path.join(work, `${tag}.out`),
    error: path.join(work, `${tag}.err`),
    argv,
    ...extra,
  };
}

describe('the Slurm layer on a real cluster', () => {
  it(
    'runs the argv exactly as given (nothing expanded), with the directives Slurm was given',
    async () => {
      const s = spec(['/bin/echo', "it's $(id) `id` $HOME *", 'two'], { cpusPerTask: 1, timeMinutes: 2 });
      const jobId = await submitBatch(renderBatchScript(s, policy));
      const status = await waitForEnd(jobId);
      expect(status).toMatchObject({
        jobId,
        state: { name: 'completed', terminal: true },
        tasks: [{ id: jobId, slurmState: 'COMPLETED', exitCode: 0, signal: 0 }],
      });
      expect(await readFile(s.output, 'utf8')).toBe("it's $(id) `id` $HOME * two\n");
      expect(await accounted(jobId, 'JobName,Partition,Timelimit,ReqMem,ReqCPUS')).toBe(`${s.jobName}|debug|00:02:00|256M|1`);
    },
    JOB_BOUND_MS,
  );

  it(
    'reports a failing job as failed with its exit code',
    async () => {
      const jobId = await submitBatch(renderBatchScript(spec(['/bin/sh', '-c', 'echo nope >&2; exit 3']), policy));
      expect(await waitForEnd(jobId)).toMatchObject({
        state: { name: 'failed', terminal: true },
        tasks: [{ slurmState: 'FAILED', exitCode: 3 }],
      });
    },
    JOB_BOUND_MS,
  );

  it(
    'finds jobs by their exact name, and cancels a running one',
    async () => {
      const s = spec(['/bin/sleep', '300']);
      const jobId = await submitBatch(renderBatchScript(s, policy));
      expect((await findJobs({ name: s.jobName })).map((j) => j.jobId)).toEqual([jobId]);
      expect(await findJobs({ name: `${s.jobName}.other` })).toEqual([]);
      // The controller holds the comment of a live job; accounting only where the cluster stores comments.
      expect((await findJobs({ comment: s.comment })).map((j) => j.jobId)).toEqual([jobId]);
      await waitForJob(jobId, (st) => st.state.name === 'running', 'running');
      await cancelJob(jobId);
      expect(await waitForEnd(jobId)).toMatchObject({ state: { name: 'cancelled', terminal: true } });
    },
    JOB_BOUND_MS,
  );

  it(
    'reports an array job task by task and combined',
    async () => {
      const s = spec(['/bin/sh', '-c', 'exit $SLURM_ARRAY_TASK_ID'], {
        arraySize: 2,
        output: path.join(work, 'arr-%A_%a.out'),
        error: path.join(work, 'arr-%A_%a.err'),
      });
      const jobId = await submitBatch(renderBatchScript(s, policy));
      const status = await waitForJob(
        jobId,
        (st) => st.state.terminal && st.tasks.length === 2 && st.tasks.every((t) => t.exitCode !== null),
        'both tasks ended',
      );
      expect(status.state.name).toBe('failed');
      expect(status.tasks.map((t) => [t.id, t.state.name, t.exitCode])).toEqual([
        [`${jobId}_0`, 'completed', 0],
        [`${jobId}_1`, 'failed', 1],
      ]);
    },
    JOB_BOUND_MS,
  );

  it(
    'knows no job that was never submitted, and says R-UPSTREAM-SLURM when sbatch refuses',
    async () => {
      expect(await jobStatus('999999999')).toBeUndefined();
      await expect(submitBatch('#!/bin/sh\n#SBATCH --partition=nosuchpartition\nexec /bin/true\n')).rejects.toMatchObject({
        code: 'R-UPSTREAM-SLURM',
        details: { command: 'sbatch', exit_code: 1 },
      });
    },
    JOB_BOUND_MS,
  );
});
