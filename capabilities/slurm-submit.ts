// The slurm.submit capability: a job submitted at most once per run and call. Its id is
// checkpointed (committed at once, not at the run's end) before the call answers; a call that
// finds the checkpoint answers from it, and one that finds no checkpoint but a job of the same
// name (sbatch answered, then the host died) adopts that job instead of submitting another
// (ABI-SLURM-008). A replay or a verification answers from the journal and never gets here.
import path from 'node:path';
import { z } from 'zod';
import { HelixError } from '../abi/index.js';
import { findJobs, submitBatch } from './slurm-commands.js';
import { planSlurmSubmit, SlurmSubmitArgsSchema, type SlurmSubmitArgs, type SubmitPlan } from './slurm-request.js';
import { checkWorkRoot, prepareJobDir } from './slurm-workspace.js';
import type { CapabilityContext, CapabilityDefinition } from './types.js';

/** What the checkpoints keep of a job: enough to find, own and collect it later. */
export const SlurmJobRecordSchema = z.strictObject({
  job_id: z.string(),
  job_name: z.string(),
  run_id: z.string(),
  call: z.string(),
  dir: z.string(),
  outputs: z.array(z.strictObject({ name: z.string(), type: z.string().optional() })),
  /** How the job came to be this call's: submitted by it, or adopted after a crash. */
  how: z.enum(['submitted', 'adopted']),
  at: z.number().int(),
});
export type SlurmJobRecord = z.infer<typeof SlurmJobRecordSchema>;

/** The checkpoint key of a run's call, and of a job by its id. */
export const callKey = (runId: string, call: string): string => `slurm.call/${runId}/${call}`;
export const jobKey = (jobId: string): string => `slurm.job/${jobId}`;

/** Result of `slurm.submit`. */
export const SlurmSubmitResultSchema = z.strictObject({
  job_id: z.string(),
  job_name: z.string(),
  /** `submitted` now; `checkpoint`: this run's call had submitted it before; `adopted`: found in Slurm by name after a crash. */
  source: z.enum(['submitted', 'checkpoint', 'adopted']),
});
export type SlurmSubmitResult = z.infer<typeof SlurmSubmitResultSchema>;

/** The job record under `key`, checked; undefined when there is none. */
export function readJobRecord(ctx: Pick<CapabilityContext, 'checkpoints'>, key: string): SlurmJobRecord | undefined {
  const raw = ctx.checkpoints.get(key);
  if (raw === undefined) return undefined;
  const parsed = SlurmJobRecordSchema.safeParse(raw);
  if (!parsed.success) {
    throw new HelixError('D-DATA-RECORD-INVALID', {
      message: `The checkpoint ${key} in the store's checkpoints database is damaged: it is not a Slurm job record.`,
      details: {
        database: 'checkpoints',
        key,
        problem: 'it is not a Slurm job record',
        violations: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
      },
    });
  }
  return parsed.data;
}

async function checkpoint(ctx: CapabilityContext, plan: SubmitPlan, jobId: string, how: SlurmJobRecord['how']): Promise<SlurmJobRecord> {
  const record: SlurmJobRecord = {
    job_id: jobId,
    job_name: plan.jobName,
    run_id: ctx.runId,
    call: plan.call,
    dir: plan.dir,
    outputs: [...plan.outputs],
    how,
    at: ctx.clock.nowUnixMs(),
  };
  await ctx.checkpoints.put({ [callKey(ctx.runId, plan.call)]: record, [jobKey(jobId)]: record });
  return record;
}

/** The `slurm.submit` capability. */
export const slurmSubmit: CapabilityDefinition<SlurmSubmitArgs, SlurmSubmitResult> = {
  name: 'slurm.submit',
  description:
    "Submits argv as a Slurm batch job (inputs copied into its directory, directives from the policy's allowlists and ceilings); at most once per run and call: the job id is checkpointed before it answers.",
  privileged: true,
  journal: 'value',
  args: SlurmSubmitArgsSchema,
  result: SlurmSubmitResultSchema,
  async invoke(args, ctx) {
    // Every refusal comes first: nothing is looked up, written or run for a refused call.
    const plan = planSlurmSubmit(args, ctx);
    for (const input of plan.inputs) ctx.artifacts.stat(input.artifactId);
    const done = readJobRecord(ctx, callKey(ctx.runId, plan.call));
    if (done !== undefined) return { job_id: done.job_id, job_name: done.job_name, source: 'checkpoint' };
    // The work root is refused before any Slurm command runs (ABI-SLURM-007), not only when the directory is made.
    await checkWorkRoot(path.dirname(plan.dir));
    const found = await findJobs({ name: plan.jobName });
    if (found.length > 0) {
      const adopted = await checkpoint(ctx, plan, found[0]!.jobId, 'adopted');
      ctx.log.emit('warn', 'slurm.adopted', { job_id: adopted.job_id, job_name: plan.jobName, found: found.map((j) => j.jobId) });
      return { job_id: adopted.job_id, job_name: plan.jobName, source: 'adopted' };
    }
    await prepareJobDir(plan, ctx);
    const jobId = await submitBatch(plan.script);
    await checkpoint(ctx, plan, jobId, 'submitted');
    return { job_id: jobId, job_name: plan.jobName, source: 'submitted' };
  },
};
