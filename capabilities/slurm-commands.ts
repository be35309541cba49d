// Slurm's own commands, run for Helix: `sbatch --parsable` with the script on stdin, `squeue`,
// `sacct` and `scancel`, each through execFile (never a shell) with a bounded wait, in the host's
// environment (so SLURM_CONF, when set, names the cluster). Failures are R-UPSTREAM-SLURM.
import { execFile } from 'node:child_process';
import { HelixError } from '../abi/index.js';
import { combineStates, mapSlurmState, type JobState } from './slurm-states.js';

/** How long one Slurm command may take before it is killed (the controller answers in milliseconds when well). */
export const SLURM_COMMAND_BOUND_MS = 60_000;
/** A job id as sbatch returns it. */
export const SLURM_JOB_ID = /^[1-9][0-9]{0,15}$/;
// Where sacct looks for jobs by name or comment: far enough back for any run a store still holds.
const SACCT_SINCE = '2000-01-01T00:00:00';
const MAX_STDOUT = 16 * 1024 * 1024;
const MAX_STDERR_KEPT = 2000;

/** How a command runs: its environment (default process.env), its bound, a signal that kills it. */
export interface SlurmCommandOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** One array task or plain job as Slurm reports it. */
export interface SlurmTask {
  /** `123`, `123_4`, or `123_[5-9]` for array tasks not yet started. */
  readonly id: string;
  readonly slurmState: string;
  readonly state: JobState;
  /** The exit code, once accounting has it for an ended task; null before. */
  readonly exitCode: number | null;
  /** The signal that ended it, 0 for none; null while unknown. */
  readonly signal: number | null;
  /** Why it waits or ended, as Slurm says (`Resources`, `JobHeldUser`, `None`). */
  readonly reason: string;
}

/** A job's state: its tasks and the state they make together. */
export interface SlurmJobStatus {
  readonly jobId: string;
  readonly state: JobState;
  readonly tasks: readonly SlurmTask[];
}

/** A job found by name or comment. */
export interface SlurmJobFound {
  readonly jobId: string;
  readonly name: string;
  readonly comment: string;
  readonly slurmState: string;
}

/** Runs `command` with `args` (and `input` on stdin); its stdout, or R-UPSTREAM-SLURM. */
export function runSlurmCommand(
  command: string,
  args: readonly string[],
  options: SlurmCommandOptions & { input?: string } = {},
): Promise<string> {
  const bound = options.timeoutMs ?? SLURM_COMMAND_BOUND_MS;
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      {
        env: options.env ?? process.env,
        timeout: bound,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_STDOUT,
        encoding: 'utf8',
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      },
      (err, stdout, stderr) => {
        if (err === null) return resolve(stdout);
        const e = err as NodeJS.ErrnoException & { code?: string | number; killed?: boolean };
        if (options.signal?.aborted) return reject(options.signal.reason);
        const timedOut = e.killed === true && typeof e.code !== 'number';
        const why = timedOut
          ? `did not answer within ${bound} ms`
          : typeof e.code === 'number'
            ? `exited ${e.code}`
            : `could not run (${e.code ?? e.message})`;
        reject(
          new HelixError('R-UPSTREAM-SLURM', {
            message: `Slurm: ${command} ${why}${stderr.trim() === '' ? '' : `: ${stderr.trim().slice(0, 300)}`}`,
            details: {
              command,
              args: [...args],
              ...(typeof e.code === 'number' ? { exit_code: e.code } : {}),
              ...(typeof e.code === 'string' ? { errno: e.code } : {}),
              timed_out: timedOut,
              stderr: stderr.slice(0, MAX_STDERR_KEPT),
            },
          }),
        );
      },
    );
    // A command that exits without reading its stdin (all but sbatch) closes the pipe: EPIPE here
    // is no failure of its own, and its exit status says whether the command did its work.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** Submits `script` (`sbatch --parsable`, the script on stdin); the new job's id. */
export async function submitBatch(script: string, options: SlurmCommandOptions = {}): Promise<string> {
  const out = await runSlurmCommand('sbatch', ['--parsable'], { ...options, input: script });
  const jobId = out.trim().split(';')[0]!;
  if (!SLURM_JOB_ID.test(jobId))
    throw new HelixError('R-UPSTREAM-SLURM', {
      message: `Slurm: sbatch answered ${JSON.stringify(out.slice(0, 200))}, not a job id.`,
      details: { command: 'sbatch', stdout: out.slice(0, MAX_STDERR_KEPT) },
    });
  return jobId;
}

function checkJobId(jobId: string): void {
  if (!SLURM_JOB_ID.test(jobId))
    throw new HelixError('I-REQ-SLURM-VALUE', {
      message: `Slurm job id ${JSON.stringify(jobId.slice(0, 40))} refused: it is not a job id.`,
      details: { field: 'job_id', problem: 'it is not a number' },
    });
}

// The uid of this process: Helix sees and adopts only its own user's jobs.
function ownUser(): string {
  return String(process.getuid?.() ?? '');
}

/**
 * The state of job `jobId` (and of each of its array tasks), or undefined when neither the
 * controller nor accounting knows it. The controller's state wins while it still holds the job;
 * the exit code comes from accounting.
 */
export async function jobStatus(jobId: string, options: SlurmCommandOptions = {}): Promise<SlurmJobStatus | undefined> {
  checkJobId(jobId);
  const live = new Map<string, { state: string; reason: string }>();
  try {
    const out = await runSlurmCommand('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', '%i|%T|%r'], options);
    for (const line of lines(out)) {
      const [id = '', state = '', reason = ''] = line.split('|');
      live.set(id, { state, reason });
    }
  } catch (err) {
    // squeue refuses a job id the controller no longer holds; accounting still knows it.
    if (!(err instanceof HelixError && /Invalid job id/i.test(String(err.details.stderr)))) throw err;
  }
  const acct = new Map<string, { state: string; exit: string; reason: string }>();
  const out = await runSlurmCommand('sacct', ['-n', '-P', '-X', '-j', jobId, '-o', 'JobID,State,ExitCode,Reason,Partition'], options);
  for (const line of lines(out)) {
    const [id = '', state = '', exit = '', reason = '', partition = ''] = line.split('|');
    // Until slurmdbd has the job's record it may show a placeholder (named allocation, no partition).
    if (partition !== '') acct.set(id, { state, exit, reason });
  }
  const ids = [...new Set([...live.keys(), ...acct.keys()])].filter((id) => id === jobId || id.startsWith(`${jobId}_`));
  if (ids.length === 0) return undefined;
  const tasks = ids.sort().map((id): SlurmTask => {
    const a = acct.get(id);
    const slurmState = live.get(id)?.state ?? a!.state;
    const state = mapSlurmState(slurmState);
    const ended = a !== undefined && mapSlurmState(a.state).terminal;
    const [code, signal] = ended ? a.exit.split(':').map(Number) : [];
    return {
      id,
      slurmState,
      state,
      exitCode: Number.isInteger(code) ? code! : null,
      signal: Number.isInteger(signal) ? signal! : null,
      reason: live.get(id)?.reason ?? a?.reason ?? '',
    };
  });
  return { jobId, state: combineStates(tasks.map((t) => t.state)), tasks };
}

/**
 * This user's jobs whose name (exact) or comment (exact) is the one given, in the controller
 * and in accounting, each job once. A comment is found in accounting only where the cluster
 * stores comments (AccountingStoreFlags=job_comment); the name always is.
 */
export async function findJobs(
  by: { readonly name: string } | { readonly comment: string },
  options: SlurmCommandOptions = {},
): Promise<SlurmJobFound[]> {
  const found = new Map<string, SlurmJobFound>();
  const keep = (id: string, name: string, comment: string, slurmState: string): void => {
    const jobId = id.split('_')[0]!;
    const matches = 'name' in by ? name === by.name : comment === by.comment;
    if (matches && SLURM_JOB_ID.test(jobId) && !found.has(jobId)) found.set(jobId, { jobId, name, comment, slurmState });
  };
  const user = ownUser();
  const squeueArgs = ['-h', '-t', 'all', '-u', user, '-o', '%i|%j|%k|%T', ...('name' in by ? ['--name', by.name] : [])];
  for (const line of lines(await runSlurmCommand('squeue', squeueArgs, options))) {
    const [id = '', name = '', comment = '', state = ''] = line.split('|');
    keep(id, name, comment, state);
  }
  const sacctArgs = [
    '-n',
    '-P',
    '-X',
    '-u',
    user,
    '-S',
    SACCT_SINCE,
    '-E',
    'now',
    '-o',
    'JobID,JobName,Comment,State',
    ...('name' in by ? ['--name', by.name] : []),
  ];
  for (const line of lines(await runSlurmCommand('sacct', sacctArgs, options))) {
    const [id = '', name = '', comment = '', state = ''] = line.split('|');
    keep(id, name, comment, state);
  }
  return [...found.values()].sort((a, b) => Number(a.jobId) - Number(b.jobId));
}

/** Cancels job `jobId` (all its array tasks); a job already ended is left as it is. */
export async function cancelJob(jobId: string, options: SlurmCommandOptions = {}): Promise<void> {
  checkJobId(jobId);
  await runSlurmCommand('scancel', [jobId], options);
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '');
}
