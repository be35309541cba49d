// Submitting a fan-out as one Slurm job array and waiting for its elements (ABI-FANOUT-007).
// TO UNIFY: this is fan-out's own minimal use of `sbatch --parsable --array` and `sacct`, written
// while the Slurm engine layer (host/slurm/: renderBatchScript, submitBatch, jobStatus, with the
// policy's slurm directives, allowlists and state mapping) was being built on another branch. Once
// that layer is on main, render and submit through it and delete this file.
import { execFile } from 'node:child_process';
import { HelixError } from '../../abi/index.js';

/** One job array: `elements` runs of `argv` with `{index}` replaced by SLURM_ARRAY_TASK_ID. */
export interface ArraySpec {
  /** The job name Slurm shows (`--job-name`); letters, digits, `.`, `_`, `-` only. */
  readonly name: string;
  readonly elements: number;
  /** Directory the elements run in; each element's Slurm output goes to `<dir>/<index>/slurm.out`. */
  readonly dir: string;
  /** The command, exec'd by the batch script without a shell reading its words. */
  readonly argv: readonly string[];
}

/** Bound on one Slurm command: it answers in well under a second on an idle cluster. */
const COMMAND_BOUND_MS = 60_000;
/** Slurm's states after which an array element runs no more. */
const ENDED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'OUT_OF_MEMORY', 'NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL', 'DEADLINE']);

/** A word quoted for sh: inside single quotes, each `'` written as `'\''`. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Refuses a value Slurm or sh could read as more than one plain word (I-REQ-JOB-ARRAY). */
function plain(value: string, what: string): string {
  if (/[\0\n\r]/.test(value)) throw new HelixError('I-REQ-JOB-ARRAY', { message: `The ${what} holds a NUL or line break, which no Slurm directive or batch script line may carry.`, details: { field: what } });
  return value;
}

/** The batch script: `exec` of the argv, each word quoted, `{index}` becoming the array task id. */
export function arrayScript(spec: ArraySpec): string {
  const words = spec.argv.map((w) => plain(w, 'command').split('{index}').map(shellQuote).join('"${SLURM_ARRAY_TASK_ID}"'));
  return `#!/bin/sh\n# Written by helix job submit: one Helix job bundle per array element.\nexec ${words.join(' ')}\n`;
}

function run(command: string, args: readonly string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, [...args], { timeout: COMMAND_BOUND_MS, env: process.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) return resolve(stdout);
      reject(new HelixError('R-UPSTREAM-FANOUT-SLURM', { message: `${command} failed: ${stderr.trim() || err.message}`, details: { command: [command, ...args], stderr: stderr.trim(), code: (err as NodeJS.ErrnoException).code ?? null } }));
    });
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}

/** Submits the array; returns Slurm's job id. */
export async function submitArray(spec: ArraySpec): Promise<string> {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(spec.name)) throw new HelixError('I-REQ-JOB-ARRAY', { message: `The job name "${spec.name}" is not letters, digits, '.', '_' and '-'.`, details: { field: 'name' } });
  const dir = plain(spec.dir, 'job directory');
  const args = ['--parsable', `--array=0-${spec.elements - 1}`, `--job-name=${spec.name}`, `--chdir=${dir}`, `--output=${dir}/%a/slurm.out`];
  const out = (await run('sbatch', args, arrayScript(spec))).trim();
  const id = out.split(';')[0]!;
  if (!/^[0-9]+$/.test(id)) throw new HelixError('R-UPSTREAM-FANOUT-SLURM', { message: `sbatch answered "${out}", not a job id.`, details: { command: ['sbatch', ...args], stdout: out } });
  return id;
}

/** Each element's Slurm state by index, as sacct reports it now (an element not yet listed is absent). */
export async function arrayStates(jobId: string): Promise<Map<number, string>> {
  const out = await run('sacct', ['-j', jobId, '--noheader', '--parsable2', '--allocations', '--format=JobID,State']);
  const states = new Map<number, string>();
  for (const line of out.split('\n')) {
    const m = /^[0-9]+_([0-9]+)\|([A-Z_]+)/.exec(line.trim());
    if (m !== null) states.set(Number(m[1]), m[2]!);
  }
  return states;
}

/** Whether a Slurm state is one an element ends in. */
export function hasEnded(state: string | undefined): boolean {
  return state !== undefined && ENDED.has(state);
}
