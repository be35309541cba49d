// slurm.submit's arguments and the policy's decision on them: the job's spec, its directory and
// its files, all decided before anything is written or any Slurm command runs (ABI-SLURM-001..004,
// ABI-SLURM-007). The job's name and comment carry the run and the call, so that a job submitted
// just before a crash is found again and adopted (ABI-SLURM-008).
import path from 'node:path';
import { z } from 'zod';
import { ARTIFACT_ID_PATTERN, HelixError, NO_SLURM, type Policy, type PolicySlurm } from '../abi/index.js';
import { decideDirectives, MAX_JOB_ARG_CHARS, MAX_JOB_ARGV, renderBatchScript, type SlurmJobSpec } from './slurm-script.js';

/** A file name in a job's in/ or out/: plain, no directory, not hidden. */
export const JOB_FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** Most inputs or declared outputs of one job. */
export const MAX_JOB_FILES = 256;
/** A caller's key for a submission, in place of the call's number (ABI-SLURM-008). */
export const SUBMIT_KEY = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Arguments of `slurm.submit`. The command is an argv; no field takes a script, a shell or a directive. */
export const SlurmSubmitArgsSchema = z.strictObject({
  argv: z.array(z.string().max(MAX_JOB_ARG_CHARS)).min(1).max(MAX_JOB_ARGV),
  inputs: z
    .array(
      z.strictObject({
        artifact_id: z.string().regex(ARTIFACT_ID_PATTERN),
        name: z.string().min(1).max(256),
        decompress: z.boolean().default(false),
      }),
    )
    .max(MAX_JOB_FILES)
    .default([]),
  outputs: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(256),
        type: z
          .string()
          .regex(/^[a-z][a-z0-9_]{0,31}$/)
          .optional(),
      }),
    )
    .max(MAX_JOB_FILES)
    .default([]),
  partition: z.string().max(256).optional(),
  account: z.string().max(256).optional(),
  qos: z.string().max(256).optional(),
  limits: z
    .strictObject({
      time_minutes: z.number().int().positive().optional(),
      cpus_per_task: z.number().int().positive().optional(),
      memory_mib: z.number().int().positive().optional(),
    })
    .optional(),
  /** Names the submission instead of the call's number, for a guest whose calls before it vary. */
  key: z.string().regex(SUBMIT_KEY).optional(),
});
export type SlurmSubmitArgs = z.output<typeof SlurmSubmitArgsSchema>;

/** A submission decided: where its job lives, what it is called, and its script. */
export interface SubmitPlan {
  /** The call within its run: `c<number>` or `k-<key>`. */
  readonly call: string;
  readonly jobName: string;
  readonly comment: string;
  /** The job's directory: `<workRoot>/<run id>.<call>`. */
  readonly dir: string;
  readonly inputs: readonly { readonly artifactId: string; readonly name: string; readonly decompress: boolean }[];
  readonly outputs: readonly { readonly name: string; readonly type?: string }[];
  readonly script: string;
  readonly slurm: PolicySlurm;
}

/** The I-REQ-SLURM-FILE-NAME error for the file `name` at `pointer`. */
function badName(pointer: string, name: string, problem: string): HelixError {
  return new HelixError('I-REQ-SLURM-FILE-NAME', {
    message: `slurm.submit refused the file name ${JSON.stringify(name.slice(0, 200))} at ${pointer}: ${problem}.`,
    details: { pointer, name: name.slice(0, 200), problem },
  });
}

/** Checks each name of `files` (in/ or out/) and that no two are the same. */
function checkNames(files: readonly { readonly name: string }[], field: 'inputs' | 'outputs'): void {
  const seen = new Set<string>();
  files.forEach((f, i) => {
    if (!JOB_FILE_NAME.test(f.name))
      throw badName(
        `/${field}/${i}/name`,
        f.name,
        'it is not a plain file name (letters, digits, _ . -, not starting with . or -, at most 128)',
      );
    // Names differing only in case are the same file on a case-insensitive filesystem.
    if (seen.has(f.name.toLowerCase()))
      throw badName(`/${field}/${i}/name`, f.name, `another of the ${field} has the same name (ignoring case)`);
    seen.add(f.name.toLowerCase());
  });
}

/**
 * The command the job runs. Today the argv itself; this is the seam where a job running a
 * container (an image on the policy's docker allowlist, through the docker path on the node) will
 * build its argv instead.
 */
function jobCommand(args: SlurmSubmitArgs): readonly string[] {
  return args.argv;
}

/**
 * Decides a `slurm.submit` call of `toolId` in run `runId` as its `callSeq`th capability call:
 * the plan, or the HelixError that refuses it (A-AUTH-SLURM-TOOL, -PARTITION, -ACCOUNT, -QOS,
 * -LIMIT, I-REQ-SLURM-VALUE, I-REQ-SLURM-FILE-NAME, P-PRECOND-SLURM-WORK-ROOT).
 */
export function planSlurmSubmit(
  args: SlurmSubmitArgs,
  ctx: { readonly toolId: string; readonly runId: string; readonly callSeq: number; readonly policy: Policy },
): SubmitPlan {
  const slurm = ctx.policy.slurm ?? NO_SLURM;
  const grant = Object.hasOwn(slurm.tools, ctx.toolId) ? slurm.tools[ctx.toolId] : undefined;
  if (grant === undefined) {
    throw new HelixError('A-AUTH-SLURM-TOOL', {
      message: `slurm.submit refused: the policy's slurm.tools has no entry for ${ctx.toolId}.`,
      details: { tool: ctx.toolId },
    });
  }
  checkNames(args.inputs, 'inputs');
  checkNames(args.outputs, 'outputs');
  const call = args.key === undefined ? `c${ctx.callSeq}` : `k-${args.key}`;
  const jobName = `helix.${ctx.runId}.${call}`;
  const comment = `helix:${ctx.toolId}:${ctx.runId}:${call}`;
  const workRoot = slurm.workRoot;
  // Decided before the work root is looked at, so a refused job leaves no trace anywhere.
  const allowed = {
    partitions: (grant.partitions ?? slurm.partitions).filter((p) => slurm.partitions.includes(p)),
    accounts: (grant.accounts ?? slurm.accounts).filter((a) => slurm.accounts.includes(a)),
    qos: (grant.qos ?? slurm.qos).filter((q) => slurm.qos.includes(q)),
  };
  const dir = path.posix.join(workRoot ?? '/', `${ctx.runId}.${call}`);
  const spec: SlurmJobSpec = {
    jobName,
    comment,
    ...(args.partition === undefined ? {} : { partition: args.partition }),
    ...(args.account === undefined ? {} : { account: args.account }),
    ...(args.qos === undefined ? {} : { qos: args.qos }),
    ...(args.limits?.time_minutes === undefined ? {} : { timeMinutes: args.limits.time_minutes }),
    ...(args.limits?.cpus_per_task === undefined ? {} : { cpusPerTask: args.limits.cpus_per_task }),
    ...(args.limits?.memory_mib === undefined ? {} : { memoryMiB: args.limits.memory_mib }),
    workDir: dir,
    output: `${dir}/meta/stdout`,
    error: `${dir}/meta/stderr`,
    argv: jobCommand(args),
  };
  decideDirectives(spec, slurm, allowed, ctx.toolId);
  if (workRoot === undefined) {
    throw new HelixError('P-PRECOND-SLURM-WORK-ROOT', {
      message: "slurm.submit cannot place the job: the policy's slurm section has no workRoot.",
      details: { work_root: null },
    });
  }
  return {
    call,
    jobName,
    comment,
    dir,
    inputs: args.inputs.map((i) => ({ artifactId: i.artifact_id, name: i.name, decompress: i.decompress })),
    outputs: args.outputs.map((o) => ({ name: o.name, ...(o.type === undefined ? {} : { type: o.type }) })),
    script: renderBatchScript(spec, slurm, allowed),
    slurm,
  };
}
