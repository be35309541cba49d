// slurm.status, slurm.cancel and slurm.collect: each reaches only a job its own tool submitted
// (found in the tool's checkpoints, ABI-SLURM-009). collect makes artifacts of the job's declared
// outputs and logs once, checkpoints what it made, and answers a second collect from that record
// with the same artifact ids (ABI-SLURM-010).
import { z } from 'zod';
import { HelixError, NO_SLURM } from '../abi/index.js';
import { cancelJob, jobStatus, SLURM_JOB_ID, type SlurmJobStatus } from './slurm-commands.js';
import { JOB_STATE_NAMES } from './slurm-states.js';
import { jobKey, readJobRecord, type SlurmJobRecord } from './slurm-submit.js';
import { collectFile, type CollectedFile } from './slurm-workspace.js';
import type { CapabilityContext, CapabilityDefinition } from './types.js';

const JobArgs = z.strictObject({ job_id: z.string().regex(SLURM_JOB_ID, 'must be a Slurm job id') });
type JobArgs = z.infer<typeof JobArgs>;

/** A job's state as the slurm capabilities answer it (ABI-SLURM-006). */
export const SlurmStatusResultSchema = z.strictObject({
  job_id: z.string(),
  state: z.enum(JOB_STATE_NAMES as [string, ...string[]]),
  terminal: z.boolean(),
  /** Slurm's own word for it (`PENDING`, `CANCELLED by 0`); empty when Slurm no longer knows the job. */
  slurm_state: z.string(),
  exit_code: z.number().int().nullable(),
  signal: z.number().int().nullable(),
  /** Why it waits or ended, as Slurm says (`Resources`, `JobHeldUser`, `None`). */
  reason: z.string(),
});
export type SlurmStatusResult = z.infer<typeof SlurmStatusResultSchema>;

/** The record of job `jobId` in the tool's checkpoints, or P-PRECOND-SLURM-JOB-UNKNOWN. */
function ownJob(name: string, jobId: string, ctx: CapabilityContext): SlurmJobRecord {
  const record = readJobRecord(ctx, jobKey(jobId));
  if (record === undefined) {
    throw new HelixError('P-PRECOND-SLURM-JOB-UNKNOWN', {
      message: `${name} refused: ${ctx.toolId} submitted no job ${jobId}.`,
      details: { job_id: jobId, tool: ctx.toolId },
    });
  }
  return record;
}

function toResult(jobId: string, status: SlurmJobStatus | undefined): SlurmStatusResult {
  const task = status?.tasks.length === 1 ? status.tasks[0] : undefined;
  if (status === undefined)
    return {
      job_id: jobId,
      state: 'unknown',
      terminal: false,
      slurm_state: '',
      exit_code: null,
      signal: null,
      reason: 'Slurm knows no such job',
    };
  return {
    job_id: jobId,
    state: status.state.name,
    terminal: status.state.terminal,
    slurm_state: task?.slurmState ?? '',
    exit_code: task?.exitCode ?? null,
    signal: task?.signal ?? null,
    reason: task?.reason ?? '',
  };
}

/** A capability that answers the state of one of the tool's jobs, after `act` (if any) on it. */
function stateCapability(
  name: string,
  description: string,
  act?: (jobId: string) => Promise<void>,
): CapabilityDefinition<JobArgs, SlurmStatusResult> {
  return {
    name,
    description,
    privileged: true,
    journal: 'value',
    args: JobArgs,
    result: SlurmStatusResultSchema,
    async invoke(args, ctx) {
      ownJob(name, args.job_id, ctx);
      await act?.(args.job_id);
      return toResult(args.job_id, await jobStatus(args.job_id, { signal: ctx.signal }));
    },
  };
}

/** The `slurm.status` capability. */
export const slurmStatus = stateCapability(
  'slurm.status',
  "The state of a job this tool submitted, mapped to Helix's job states (pending, running, completed, failed, cancelled, timeout, out_of_memory, node_fail, ...), with its exit code once it ended.",
);

/** The `slurm.cancel` capability. */
export const slurmCancel = stateCapability(
  'slurm.cancel',
  'Cancels a job this tool submitted (scancel); a job already ended stays as it is. Answers with its state after the request.',
  (jobId) => cancelJob(jobId),
);

const CollectedSchema = z.strictObject({ artifact_id: z.string().nullable(), size: z.number().int().nullable(), truncated: z.boolean() });

/** Result of `slurm.collect`: an artifact per declared output (null when the job did not write it) and per log. */
export const SlurmCollectResultSchema = z.strictObject({
  job_id: z.string(),
  state: z.string(),
  exit_code: z.number().int().nullable(),
  outputs: z.array(CollectedSchema.extend({ name: z.string() })),
  stdout: CollectedSchema,
  stderr: CollectedSchema,
});
export type SlurmCollectResult = z.infer<typeof SlurmCollectResultSchema>;

const collectedKey = (jobId: string): string => `slurm.collected/${jobId}`;

function summary(c: CollectedFile): z.infer<typeof CollectedSchema> {
  return { artifact_id: c.artifact?.id ?? null, size: c.artifact?.size ?? null, truncated: c.truncated };
}

/** The `slurm.collect` capability. */
export const slurmCollect: CapabilityDefinition<JobArgs, SlurmCollectResult> = {
  name: 'slurm.collect',
  description:
    "Makes artifacts of an ended job's declared outputs (regular files in out/, within the policy's outputBytes) and of its stdout and stderr (cut at outputBytes); a second collect answers with the same artifacts.",
  privileged: true,
  journal: 'value',
  args: JobArgs,
  result: SlurmCollectResultSchema,
  async invoke(args, ctx) {
    const job = ownJob('slurm.collect', args.job_id, ctx);
    const before = ctx.checkpoints.get(collectedKey(args.job_id));
    if (before !== undefined) return SlurmCollectResultSchema.parse(before);
    const status = toResult(args.job_id, await jobStatus(args.job_id, { signal: ctx.signal }));
    if (!status.terminal) {
      throw new HelixError('P-PRECOND-SLURM-JOB-ACTIVE', {
        message: `slurm.collect refused: job ${args.job_id} is ${status.state}, not ended.`,
        details: { job_id: args.job_id, state: status.state },
      });
    }
    const maxBytes = (ctx.policy.slurm ?? NO_SLURM).ceilings.outputBytes;
    const label = (what: string): string => `slurm job ${args.job_id} ${what}`;
    const outputs: SlurmCollectResult['outputs'] = [];
    for (const o of job.outputs) {
      const file = await collectFile(
        job.dir,
        'out',
        o.name,
        { maxBytes, truncate: false, label: label(`out/${o.name}`), ...(o.type === undefined ? {} : { type: o.type }) },
        ctx,
      );
      outputs.push({ name: o.name, ...summary(file) });
    }
    const log = (name: 'stdout' | 'stderr'): Promise<CollectedFile> =>
      collectFile(job.dir, 'meta', name, { maxBytes, truncate: true, label: label(name), type: 'text' }, ctx);
    const result: SlurmCollectResult = {
      job_id: args.job_id,
      state: status.state,
      exit_code: status.exit_code,
      outputs,
      stdout: summary(await log('stdout')),
      stderr: summary(await log('stderr')),
    };
    await ctx.checkpoints.put({ [collectedKey(args.job_id)]: result });
    return result;
  },
};
