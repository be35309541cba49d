// The batch script of one Slurm job, rendered from a job spec under the policy's slurm section:
// every value checked against a strict character set and single-quoted for sh, every `#SBATCH`
// directive taken from the allowlists and bounded by the ceilings (ABI-SLURM-002..004). A refused
// spec never reaches sbatch.
import { HelixError, SLURM_NAME, SLURM_PATH, type PolicySlurm, type PolicySlurmCeilings } from '../abi/index.js';

/** A job name or comment: the characters Helix needs for run ids and tool ids, nothing a shell or sbatch reads. */
export const SLURM_LABEL = /^[A-Za-z0-9_.:=+@,-]{1,200}$/;
/** Most argv entries a job may run. */
export const MAX_JOB_ARGV = 4096;
/** Longest argv entry, in characters. */
export const MAX_JOB_ARG_CHARS = 65_536;

/** What one job runs and asks for. Left-out resources get the policy's ceiling; left-out names its first allowlisted one. */
export interface SlurmJobSpec {
  readonly jobName: string;
  readonly comment: string;
  readonly partition?: string;
  readonly account?: string;
  readonly qos?: string;
  readonly timeMinutes?: number;
  readonly cpusPerTask?: number;
  readonly memoryMiB?: number;
  /** A job array of tasks 0..arraySize-1 (each sees SLURM_ARRAY_TASK_ID). */
  readonly arraySize?: number;
  /** The directory the job runs in (--chdir), absolute. */
  readonly workDir: string;
  /** Where stdout and stderr go, absolute; Slurm's %j, %A and %a may appear. */
  readonly output: string;
  readonly error: string;
  /** The command, exec'd as it is: the script quotes every entry, no shell expands any. */
  readonly argv: readonly string[];
}

/** A spec decided: every directive's value, as it goes into the script. */
export interface SlurmDirectives {
  readonly jobName: string;
  readonly comment: string;
  readonly partition: string | undefined;
  readonly account: string | undefined;
  readonly qos: string | undefined;
  readonly timeMinutes: number;
  readonly cpusPerTask: number;
  readonly memoryMiB: number;
  readonly arraySize: number | undefined;
}

/** `value` as one single-quoted sh word: nothing inside is expanded. */
export function shQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The I-REQ-SLURM-VALUE error for `field`. */
function badValue(field: string, value: string, problem: string): HelixError {
  return new HelixError('I-REQ-SLURM-VALUE', {
    message: `Slurm ${field} ${JSON.stringify(value.slice(0, 200))} refused: ${problem}.`,
    details: { field, problem },
  });
}

/** Refuses a value with a newline, NUL or `#SBATCH`, then one outside `charset`. */
function checkValue(field: string, value: string, charset: RegExp | undefined, what: string): void {
  if (/[\r\n]/.test(value)) throw badValue(field, value, 'it contains a line break');
  if (value.includes('\0')) throw badValue(field, value, 'it contains a NUL');
  if (/#\s*SBATCH/i.test(value)) throw badValue(field, value, 'it contains #SBATCH');
  if (charset !== undefined && !charset.test(value)) throw badValue(field, value, `it is not ${what}`);
}

function checkPath(field: string, value: string, patterns: boolean): void {
  checkValue(field, value, undefined, '');
  // %j, %A and %a are the only patterns a log path may carry: Slurm expands them, nothing else does.
  const plain = patterns ? value.replaceAll(/%[jAa]/g, 'x') : value;
  if (!SLURM_PATH.test(plain))
    throw badValue(field, value, `it is not an absolute path of letters, digits and _ . / -${patterns ? ' (with %j, %A, %a)' : ''}`);
  if (value.split('/').includes('..')) throw badValue(field, value, 'it contains a .. segment');
}

/** A name from `allowed` (the policy's list, narrowed for the tool): `asked`, or the first when left out. */
export function pickAllowed(
  kind: 'partition' | 'account' | 'qos',
  asked: string | undefined,
  allowed: readonly string[],
  who: string,
): string | undefined {
  if (asked === undefined) return allowed[0];
  checkValue(kind, asked, SLURM_NAME, 'a Slurm name (letters, digits, _ . -)');
  if (allowed.includes(asked)) return asked;
  const code = kind === 'partition' ? 'A-AUTH-SLURM-PARTITION' : kind === 'account' ? 'A-AUTH-SLURM-ACCOUNT' : 'A-AUTH-SLURM-QOS';
  const list = kind === 'qos' ? 'QOS' : `${kind}s`;
  throw new HelixError(code, {
    message: `Slurm ${kind} ${JSON.stringify(asked)} refused: it is not among the ${list} the policy's slurm section allows ${who}.`,
    details: { field: kind, asked, allowed: [...allowed] },
  });
}

// Each spec limit against the ceiling it is bounded by.
const LIMITS = [
  ['timeMinutes', 'timeMinutes'],
  ['cpusPerTask', 'cpusPerTask'],
  ['memoryMiB', 'memoryMiB'],
  ['arraySize', 'arraySize'],
] as const satisfies ReadonlyArray<readonly [keyof SlurmJobSpec, keyof PolicySlurmCeilings]>;

/** The limits of `spec` within `ceilings`: left out, the ceiling; over it, A-AUTH-SLURM-LIMIT. */
export function boundLimits(
  spec: Pick<SlurmJobSpec, 'timeMinutes' | 'cpusPerTask' | 'memoryMiB' | 'arraySize'>,
  ceilings: PolicySlurmCeilings,
): Pick<SlurmDirectives, 'timeMinutes' | 'cpusPerTask' | 'memoryMiB' | 'arraySize'> {
  for (const [asked, ceiling] of LIMITS) {
    const value = spec[asked];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw badValue(asked, String(value), 'it is not a positive integer');
    if (value > ceilings[ceiling]) {
      throw new HelixError('A-AUTH-SLURM-LIMIT', {
        message: `Slurm ${asked} ${value} refused: the policy's slurm.ceilings.${ceiling} is ${ceilings[ceiling]}.`,
        details: { field: asked, asked: value, ceiling: ceilings[ceiling], policy_field: `slurm.ceilings.${ceiling}` },
      });
    }
  }
  return {
    timeMinutes: spec.timeMinutes ?? ceilings.timeMinutes,
    cpusPerTask: spec.cpusPerTask ?? ceilings.cpusPerTask,
    memoryMiB: spec.memoryMiB ?? ceilings.memoryMiB,
    arraySize: spec.arraySize,
  };
}

/** Checks every value of `spec` and decides its directives under `slurm`, with the allowlists given (default: the section's own) for `who`. */
export function decideDirectives(
  spec: SlurmJobSpec,
  slurm: PolicySlurm,
  allowed: Pick<PolicySlurm, 'partitions' | 'accounts' | 'qos'> = slurm,
  who = 'any job',
): SlurmDirectives {
  checkValue('jobName', spec.jobName, SLURM_LABEL, 'made of letters, digits and _ . : = + @ , - (1 to 200)');
  checkValue('comment', spec.comment, SLURM_LABEL, 'made of letters, digits and _ . : = + @ , - (1 to 200)');
  checkPath('workDir', spec.workDir, false);
  checkPath('output', spec.output, true);
  checkPath('error', spec.error, true);
  if (spec.argv.length === 0 || spec.argv.length > MAX_JOB_ARGV)
    throw badValue('argv', String(spec.argv.length), `it must hold 1 to ${MAX_JOB_ARGV} entries`);
  spec.argv.forEach((arg, i) => {
    checkValue(`argv/${i}`, arg, undefined, '');
    if (arg.length > MAX_JOB_ARG_CHARS) throw badValue(`argv/${i}`, arg, `it is longer than ${MAX_JOB_ARG_CHARS} characters`);
  });
  if (spec.argv[0] === '') throw badValue('argv/0', '', 'it must name the program to run');
  return {
    jobName: spec.jobName,
    comment: spec.comment,
    partition: pickAllowed('partition', spec.partition, allowed.partitions, who),
    account: pickAllowed('account', spec.account, allowed.accounts, who),
    qos: pickAllowed('qos', spec.qos, allowed.qos, who),
    ...boundLimits(spec, slurm.ceilings),
  };
}

/**
 * The batch script of `spec` under the policy's `slurm` section: `#SBATCH` directives, each value
 * single-quoted, and one `exec` of the quoted argv (ABI-SLURM-004). Throws the HelixError that
 * refuses it (I-REQ-SLURM-VALUE, A-AUTH-SLURM-PARTITION, -ACCOUNT, -QOS, -LIMIT).
 */
export function renderBatchScript(
  spec: SlurmJobSpec,
  policySlurm: PolicySlurm,
  allowed?: Pick<PolicySlurm, 'partitions' | 'accounts' | 'qos'>,
): string {
  const d = decideDirectives(spec, policySlurm, allowed);
  const lines = ['#!/bin/sh', '# Generated by Helix: every value is quoted; nothing here is read by a shell before exec.'];
  const directive = (flag: string, value: string | number | undefined): void => {
    if (value !== undefined) lines.push(`#SBATCH --${flag}=${typeof value === 'number' ? String(value) : shQuote(value)}`);
  };
  directive('job-name', d.jobName);
  directive('comment', d.comment);
  directive('partition', d.partition);
  directive('account', d.account);
  directive('qos', d.qos);
  directive('time', d.timeMinutes);
  // The job gets the user's login environment, never Helix's (which may hold secrets' sources).
  lines.push('#SBATCH --export=NONE');
  directive('nodes', 1);
  directive('ntasks', 1);
  directive('cpus-per-task', d.cpusPerTask);
  directive('mem', `${d.memoryMiB}M`);
  directive('chdir', spec.workDir);
  directive('output', spec.output);
  directive('error', spec.error);
  if (d.arraySize !== undefined) directive('array', `0-${d.arraySize - 1}`);
  lines.push(`exec ${spec.argv.map(shQuote).join(' ')}`, '');
  return lines.join('\n');
}
