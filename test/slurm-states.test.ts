// slurm.status through every state the single-node cluster of scripts/services.sh can produce
// for a job a tool submitted: running, pending (held by the operator with scontrol while the
// node is full), cancelled through slurm.cancel, completed once released, failed with its exit
// code, timeout past a one-minute limit, and killed past its --mem. Each answer comes through a real guest and broker.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSlurmCommand } from '../capabilities/slurm-commands.js';
import { onJob, startSlurmHost, type SlurmHost } from './helpers/slurm-host.js';
import { JOB_BOUND_MS, SLURM_UP_BOUND_MS, slurmUp, waitForEnd, waitForJob } from './helpers/slurm-kit.js';

let h: SlurmHost;
let polls = 0;

beforeAll(async () => {
  await slurmUp();
  // Two CPUs per task fill the node, so a second such job must wait.
  h = await startSlurmHost({ timeMinutes: 5, cpusPerTask: 2, memoryMiB: 256 });
}, SLURM_UP_BOUND_MS + 120_000);

afterAll(async () => {
  await h?.close();
});

/** slurm.status (or slurm.cancel) of `jobId` through the guest, as a new run each time. */
async function status(jobId: string, name = 'slurm.status'): Promise<Record<string, unknown>> {
  polls += 1;
  const {
    answers: [a],
  } = await h.answers('s.granted', [onJob(name, jobId)], `poll ${polls}`);
  expect(a).toMatchObject({ status: 'ok' });
  return a!.capability_result!.result as Record<string, unknown>;
}

describe('slurm.status on a real cluster', () => {
  it(
    'reports running, pending while held, cancelled, and completed once released',
    async () => {
      const filler = await h.submitted({ argv: ['/bin/sleep', '300'], limits: { cpus_per_task: 2 }, key: 'filler' });
      await waitForJob(filler, (s) => s.state.name === 'running', 'running');
      expect(await status(filler)).toMatchObject({ state: 'running', terminal: false, slurm_state: 'RUNNING', exit_code: null });

      const waiting = await h.submitted({ argv: ['/bin/true'], limits: { cpus_per_task: 2 }, key: 'waiting' });
      // Held by the operator (root here: JobHeldAdmin; another user: JobHeldUser).
      await runSlurmCommand('scontrol', ['hold', waiting]);
      const held = expect.stringMatching(/^JobHeld(Admin|User)$/);
      expect(await status(waiting)).toMatchObject({ state: 'pending', terminal: false, slurm_state: 'PENDING', reason: held });

      expect(await status(filler, 'slurm.cancel')).toMatchObject({ job_id: filler });
      await waitForEnd(filler);
      expect(await status(filler)).toMatchObject({ state: 'cancelled', terminal: true, slurm_state: expect.stringMatching(/^CANCELLED/) });
      expect(await status(waiting)).toMatchObject({ state: 'pending', reason: held });

      await runSlurmCommand('scontrol', ['release', waiting]);
      await waitForEnd(waiting);
      expect(await status(waiting)).toMatchObject({
        state: 'completed',
        terminal: true,
        slurm_state: 'COMPLETED',
        exit_code: 0,
        signal: 0,
      });
    },
    JOB_BOUND_MS * 2,
  );

  it(
    'reports a failed job with its exit code',
    async () => {
      const jobId = await h.submitted({ argv: ['/bin/sh', '-c', 'exit 7'], key: 'fails' });
      await waitForEnd(jobId);
      expect(await status(jobId)).toMatchObject({ state: 'failed', terminal: true, slurm_state: 'FAILED', exit_code: 7 });
    },
    JOB_BOUND_MS,
  );

  it(
    'reports timeout for a job past its one-minute limit',
    async () => {
      const jobId = await h.submitted({ argv: ['/bin/sleep', '600'], limits: { time_minutes: 1 }, key: 'overtime' });
      await waitForEnd(jobId);
      expect(await status(jobId)).toMatchObject({ state: 'timeout', terminal: true, slurm_state: 'TIMEOUT' });
    },
    JOB_BOUND_MS,
  );

  it(
    'kills a job past its memory limit and reports it failed by signal 9, the step killed for its memory',
    async () => {
      // 512 MiB held against a 64 MiB limit: the node's sampling (OverMemoryKill) kills the step
      // within a second. Slurm reports OUT_OF_MEMORY only where cgroups count an OOM kill; here the
      // job ends FAILED with signal 9 and the step's stderr says why.
      const hog = 'const a = []; for (let i = 0; i < 32; i++) a.push(Buffer.alloc(1 << 24, 1)); setTimeout(() => a.length, 120000);';
      const jobId = await h.submitted({ argv: [process.execPath, '-e', hog], limits: { memory_mib: 64 }, key: 'hog' });
      await waitForEnd(jobId);
      expect(await status(jobId)).toMatchObject({ state: 'failed', terminal: true, slurm_state: 'FAILED', signal: 9 });
      const dir = readdirSync(h.work).find((d) => d.endsWith('.k-hog'))!;
      expect(readFileSync(path.join(h.work, dir, 'meta', 'stderr'), 'utf8')).toMatch(/exceeded memory limit/);
    },
    JOB_BOUND_MS,
  );
});
