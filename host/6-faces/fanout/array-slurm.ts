// A fan-out's Slurm side (ABI-FANOUT-007) on the Slurm engine layer (capabilities/slurm-*.ts): the
// job array's batch script rendered under the policy's slurm section (the tool's entry, its
// allowlists and the ceilings; the array directory under slurm.workRoot), the element a node
// process runs, and the elements' states read from jobStatus while collect waits for them.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { HelixError, type Policy } from '../../../abi/index.js';
import type { SlurmJobStatus } from '../../../capabilities/slurm-commands.js';
import { renderBatchScript, type SlurmJobSpec } from '../../../capabilities/slurm-script.js';
import { packageRoot } from '../../1-base/paths.js';

/** What a fan-out may ask of Slurm for its array: each left out is the policy's first allowed name or its ceiling. */
export type ArrayResources = Pick<SlurmJobSpec, 'partition' | 'account' | 'qos' | 'timeMinutes' | 'cpusPerTask' | 'memoryMiB'>;

/** The flag of `helix job run` that takes the element's bundle from SLURM_ARRAY_TASK_ID. */
export const ARRAY_ELEMENT_FLAG = '--array-element';

/** Whether `dir` is `root` or below it. */
function isUnder(dir: string, root: string): boolean {
  const rel = path.relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The Slurm job name of the array in `dir`: the tool and a hash of the directory and the moment,
 * so a collect can find the array when `helix job submit` died between sbatch and array.json.
 */
export function arrayJobName(toolId: string, dir: string): string {
  return `helix-fanout.${toolId}.${createHash('sha256').update(`${dir}\n${Date.now()}\n${process.pid}`).digest('hex').slice(0, 16)}`;
}

/**
 * The batch script of a job array named `jobName` of `elements` elements of `toolId` in `dir`,
 * each running `helix job run <dir> --array-element`. Refused, before anything is written or
 * submitted, when the policy's slurm section has no entry for the tool (A-AUTH-SLURM-TOOL), `dir`
 * is not under its workRoot (A-AUTH-FANOUT-WORK-ROOT), or the script would break ABI-SLURM-002..004.
 */
export function arrayScript(
  policy: Policy,
  toolId: string,
  dir: string,
  jobName: string,
  elements: number,
  resources: ArrayResources = {},
): string {
  const slurm = policy.slurm;
  const entry = slurm?.tools[toolId];
  if (slurm === undefined || entry === undefined) {
    throw new HelixError('A-AUTH-SLURM-TOOL', {
      message: `The policy's slurm section has no entry for "${toolId}", so its calls are not fanned out to Slurm.`,
      details: { tool_id: toolId },
    });
  }
  if (slurm.workRoot === undefined || !isUnder(dir, slurm.workRoot)) {
    throw new HelixError('A-AUTH-FANOUT-WORK-ROOT', {
      message: `The job array's directory ${dir} is not under the policy's slurm.workRoot (${slurm.workRoot ?? 'not set'}).`,
      details: { dir, work_root: slurm.workRoot ?? null },
    });
  }
  const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
  return renderBatchScript(
    {
      jobName,
      comment: `helix-job-array:${toolId}`,
      ...resources,
      arraySize: elements,
      workDir: dir,
      output: path.join(dir, '%a', 'slurm.out'),
      error: path.join(dir, '%a', 'slurm.out'),
      argv: [process.execPath, cli, 'job', 'run', dir, ARRAY_ELEMENT_FLAG],
    },
    slurm,
    { partitions: entry.partitions ?? slurm.partitions, accounts: entry.accounts ?? slurm.accounts, qos: entry.qos ?? slurm.qos },
  );
}

/** Each element's Slurm state by index, from a status (an element not started yet is absent). */
export function elementStates(status: SlurmJobStatus | undefined): Map<number, string> {
  const states = new Map<number, string>();
  for (const task of status?.tasks ?? []) {
    const m = /_([0-9]+)$/.exec(task.id);
    if (m !== null) states.set(Number(m[1]), task.slurmState);
  }
  return states;
}

/** The bundle directory of the array element this process runs as (SLURM_ARRAY_TASK_ID under `dir`). */
export function elementBundle(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  const index = env.SLURM_ARRAY_TASK_ID;
  if (index === undefined || !/^(0|[1-9][0-9]{0,8})$/.test(index)) {
    throw new HelixError('I-REQ-JOB-ARRAY', {
      message: `${ARRAY_ELEMENT_FLAG} needs SLURM_ARRAY_TASK_ID to be an array index, and it is ${index === undefined ? 'not set' : JSON.stringify(index.slice(0, 40))}.`,
      details: { slurm_array_task_id: index ?? null },
    });
  }
  return path.join(dir, index);
}
