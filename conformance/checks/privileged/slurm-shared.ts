// What the Slurm checks share: the slurm.* capabilities, the policy's ceilings and work root, the
// policies of the shimmed and the real cluster, the script guests, jobs cancelled when a check
// ends, and the answer a run's first journaled call got.
import { mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { runSlurmCommand } from '../../../capabilities/slurm-commands.js';
import type { Host } from '../../../host/5-host/host.js';
import { CheckFailure, type CheckContext, type CheckEnv, type PolicyDocument } from '../../check.js';
import { scriptPack, type Answer } from '../../kit/priv-kit.js';
import { DEFAULT_GRANTS, policyWith } from './shared.js';

/** The slurm.* capabilities. */
export const SLURM = ['slurm.submit', 'slurm.status', 'slurm.cancel', 'slurm.collect'];
/** The policy's Slurm ceilings in the Slurm checks. */
export const SLURM_CEILINGS = { timeMinutes: 5, cpusPerTask: 1, memoryMiB: 256, outputBytes: 4096, arraySize: 2 };

/** The check's Slurm work root (made now, its real path). */
export function jobsDir(env: CheckEnv, name = 'jobs'): string {
  const dir = path.join(env.dir, name);
  mkdirSync(dir, { recursive: true });
  return realpathSync(dir);
}

/** The policy of a Slurm check: the slurm.* grants, partitions, accounts and QOS, a work root, the tools allowed on the cluster and `slurm` fields over them. */
export function slurmPolicy(env: CheckEnv, workRoot: string = jobsDir(env), slurm: Record<string, unknown> = {}): PolicyDocument {
  return policyWith(env, {
    grants: { '*': [...DEFAULT_GRANTS, 'slurm.*'], 's.tool': SLURM, 's.other': SLURM, 's.noentry': SLURM },
    slurm: {
      partitions: ['debug'],
      accounts: ['lab1', 'lab2'],
      qos: ['normal'],
      workRoot,
      tools: { 's.tool': { accounts: ['lab1'] }, 's.other': {}, 's.wild': {} },
      ceilings: SLURM_CEILINGS,
      ...slurm,
    },
  });
}

/** The real cluster's policy: its one partition and QOS, no account list. */
export function realSlurmPolicy(env: CheckEnv): PolicyDocument {
  return slurmPolicy(env, jobsDir(env), { accounts: [], tools: { 's.tool': {}, 's.other': {} } });
}

/** The script guests of the Slurm checks, each allowlisting the slurm.* capabilities. */
export const slurmPacks = () => ['s.tool', 's.other', 's.noentry', 's.wild'].map((id) => scriptPack(id, [...SLURM, 'log.emit']));

/** Cancels, when the check ends, every job the check's calls submitted. */
export function cancelAtEnd(ctx: CheckContext): (jobId: string) => string {
  const jobs = new Set<string>();
  ctx.defer(async () => {
    if (jobs.size > 0) await runSlurmCommand('scancel', [...jobs]).catch(() => undefined);
  });
  return (jobId) => {
    jobs.add(jobId);
    return jobId;
  };
}

/** The arguments of a slurm.submit call. */
export const submit = (args: Record<string, unknown>) => args;

/** The answer the run's first journaled capability call got (a failed run's output is not returned). */
export function firstJournalAnswer(host: Host, runId: string): Answer {
  const entry = host.runs.journal(runId)[0] as { result?: unknown; error?: unknown } | undefined;
  if (entry === undefined) throw new CheckFailure(`run ${runId} journaled no call`);
  return (
    entry.error !== undefined && entry.error !== null
      ? { status: 'error', error: entry.error }
      : { status: 'ok', capability_result: { name: 'slurm.submit', result: entry.result } }
  ) as Answer;
}
