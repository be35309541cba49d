// What the Slurm tests share: the cluster of scripts/services.sh brought up (its SLURM_CONF put
// into this process's environment, as an operator's shell would have it), and polling a job's
// state with a bound that only stops a hang.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findJobs, jobStatus, type SlurmJobStatus } from '../../capabilities/slurm-commands.js';
import { runCommand } from './fresh-machine.js';

const SCRIPT = path.resolve(import.meta.dirname, '..', '..', 'scripts', 'services.sh');
/** Installing slurm-wlm and MariaDB on a fresh machine takes minutes; the bound only stops a hang. */
export const SLURM_UP_BOUND_MS = 20 * 60_000;
/** A short job: seconds on an idle node, far more on a shared, loaded machine (a timeout job needs over a minute). */
export const JOB_BOUND_MS = 4 * 60_000;

/** Brings the cluster up and sets SLURM_CONF (and the rest `services.sh env slurm` prints) in process.env. */
export async function slurmUp(): Promise<void> {
  const up = await runCommand('bash', [SCRIPT, 'up', 'slurm'], { cwd: tmpdir(), env: process.env, killAfterMs: SLURM_UP_BOUND_MS });
  if (up.code !== 0) throw new Error(`scripts/services.sh up slurm exited ${up.code}:\n${up.stdout}\n${up.stderr}`);
  const { stdout } = await promisify(execFile)('bash', [SCRIPT, 'env', 'slurm']);
  for (const m of stdout.matchAll(/^export (\w+)=(.*)$/gm)) process.env[m[1]!] = m[2]!;
}

/** Polls job `jobId` until `done` holds of its status; the status. */
export async function waitForJob(jobId: string, done: (s: SlurmJobStatus) => boolean, what = 'the awaited state'): Promise<SlurmJobStatus> {
  const bound = Date.now() + JOB_BOUND_MS;
  for (;;) {
    const status = await jobStatus(jobId);
    if (status !== undefined && done(status)) return status;
    if (Date.now() > bound) throw new Error(`job ${jobId} did not reach ${what} within ${JOB_BOUND_MS / 1000}s: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Polls job `jobId` until it has ended and accounting has its exit code. */
export function waitForEnd(jobId: string): Promise<SlurmJobStatus> {
  return waitForJob(jobId, (s) => s.state.terminal && s.tasks.every((t) => t.exitCode !== null), 'its end');
}

/** How many jobs of this user Slurm (controller and accounting) knows by the exact name. */
export async function jobsNamed(name: string): Promise<number> {
  return (await findJobs({ name })).length;
}
