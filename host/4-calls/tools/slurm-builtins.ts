// The Slurm jobs' built-in tools, for agents and operators: slurm_job_get (a job's state; with
// `wait`, polled until it ends, each change a log line while the call reports progress, and the
// job cancelled when the call is) and slurm_job_collect (the job's outputs and logs as artifacts,
// through slurm.collect acting for the tool that submitted the job). They reach any job a tool of
// this store submitted, and no other (ABI-SLURM-011).
import { z } from 'zod';
import { HelixError, isHelixError } from '../../../abi/index.js';
import { cancelJob, SLURM_JOB_ID } from '../../../capabilities/slurm-commands.js';
import {
  slurmCollect,
  SlurmCollectResultSchema,
  slurmStatus,
  SlurmStatusResultSchema,
  type SlurmStatusResult,
} from '../../../capabilities/slurm-jobs.js';
import { jobKey } from '../../../capabilities/slurm-submit.js';
import type { CapabilityContext } from '../../../capabilities/index.js';
import { hostCapabilityContext } from '../broker/ports.js';
import type { JsonSchema } from '../loader/schema-bundle.js';
import { checkpointTools } from '../../3-store/checkpoints.js';
import type { BuiltinSpec } from './builtin-spec.js';
import type { ToolRunContext } from './tool.js';

/** How often a waiting slurm_job_get asks Slurm, unless the call says otherwise. */
export const DEFAULT_POLL_MS = 2000;
const JOB_ID = { type: 'string', pattern: SLURM_JOB_ID.source, description: 'A Slurm job id, as slurm.submit returned it.' };
const withTool = { tool_id: z.string() };
const jsonSchemaOf = (schema: z.ZodType): JsonSchema => z.toJSONSchema(schema, { io: 'output' }) as JsonSchema;

/** The tool that submitted job `jobId` in this store, or P-PRECOND-SLURM-JOB-UNKNOWN. */
function ownerOf(ctx: ToolRunContext, jobId: string, name: string): string {
  const [tool] = checkpointTools(ctx.store, jobKey(jobId));
  if (tool === undefined)
    throw new HelixError('P-PRECOND-SLURM-JOB-UNKNOWN', {
      message: `${name} refused: no tool of this store submitted job ${jobId}.`,
      details: { job_id: jobId },
    });
  return tool;
}

/** The capability context of the job's own tool; Slurm's commands bound themselves, so no signal stops them halfway. */
function actingFor(ctx: ToolRunContext, toolId: string): CapabilityContext {
  return hostCapabilityContext(ctx.store, ctx.policy.policy, {
    toolId,
    runId: ctx.runId,
    deadlineMs: ctx.deadlineMs,
    signal: new AbortController().signal,
    callSeq: () => 0,
    canImport: true,
  });
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Polls job `jobId` until it ends or the call's deadline passes (the last state), or the caller cancels (the job is cancelled too). */
async function waitForJob(ctx: ToolRunContext, cap: CapabilityContext, jobId: string, pollMs: number): Promise<SlurmStatusResult> {
  let last = await slurmStatus.invoke({ job_id: jobId }, cap);
  const report = (s: SlurmStatusResult): void =>
    ctx.onLog?.({
      level: 'info',
      event: 'slurm.job.state',
      fields: { job_id: jobId, state: s.state, slurm_state: s.slurm_state, reason: s.reason },
    });
  report(last);
  while (!last.terminal) {
    await pause(pollMs, ctx.signal);
    if (ctx.cancel?.aborted) {
      await cancelJob(jobId);
      ctx.onLog?.({ level: 'warn', event: 'slurm.job.cancelled', fields: { job_id: jobId } });
      throw new HelixError('R-TIMEOUT-CANCELLED', {
        message: `slurm_job_get was cancelled while it waited; job ${jobId} was cancelled with it.`,
        details: { job_id: jobId },
      });
    }
    if (ctx.signal.aborted) return last;
    const now = await slurmStatus.invoke({ job_id: jobId }, cap);
    if (now.state !== last.state || now.reason !== last.reason) report(now);
    last = now;
  }
  return last;
}

/** slurm_job_get and slurm_job_collect. */
export const SLURM_BUILTINS: readonly BuiltinSpec[] = [
  {
    name: 'slurm_job_get',
    description:
      "A Slurm job's state, mapped to Helix's job states, with its exit code once it ended. With wait, polls until the job ends or the call's deadline passes (progress is reported meanwhile, each change logged); cancelling the call cancels the job.",
    inputSchema: {
      type: 'object',
      required: ['job_id'],
      additionalProperties: false,
      properties: {
        job_id: JOB_ID,
        wait: { type: 'boolean', default: false, description: "Poll until the job ends or the call's deadline passes." },
        poll_ms: { type: 'integer', minimum: 200, maximum: 60_000, default: DEFAULT_POLL_MS },
      },
    },
    outputSchema: jsonSchemaOf(SlurmStatusResultSchema.extend(withTool)),
    deterministic: 'side_effectful',
    // A job's state changes: every call is a run of its own, never a replay of an earlier answer.
    boundary: () => ({ observed_at: Date.now() }),
    run: async (input, ctx) => {
      const jobId = String(input.job_id);
      const toolId = ownerOf(ctx, jobId, 'slurm_job_get');
      const cap = actingFor(ctx, toolId);
      try {
        const state =
          input.wait === true
            ? await waitForJob(ctx, cap, jobId, (input.poll_ms as number | undefined) ?? DEFAULT_POLL_MS)
            : await slurmStatus.invoke({ job_id: jobId }, cap);
        return { ...state, tool_id: toolId };
      } catch (err) {
        if (isHelixError(err)) throw err;
        throw new HelixError('R-UPSTREAM-SLURM', {
          message: `slurm_job_get: ${err instanceof Error ? err.message : String(err)}`,
          details: { job_id: jobId },
        });
      }
    },
  },
  {
    name: 'slurm_job_collect',
    description:
      "Makes artifacts of an ended Slurm job's declared outputs and its stdout and stderr, as slurm.collect does for the tool that submitted it; a second collect answers with the same artifacts.",
    inputSchema: { type: 'object', required: ['job_id'], additionalProperties: false, properties: { job_id: JOB_ID } },
    outputSchema: jsonSchemaOf(SlurmCollectResultSchema.extend(withTool)),
    deterministic: 'idempotent',
    run: async (input, ctx) => {
      const jobId = String(input.job_id);
      const toolId = ownerOf(ctx, jobId, 'slurm_job_collect');
      return { ...(await slurmCollect.invoke({ job_id: jobId }, actingFor(ctx, toolId))), tool_id: toolId };
    },
  },
];
