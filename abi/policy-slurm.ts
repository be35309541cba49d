// The policy's `slurm` section (ABI-SLURM-*): which partitions, accounts and QOS a job may name,
// per exact tool id; the ceilings every job is bounded by; the work root its directories live in.
// Every value that reaches a `#SBATCH` directive comes from here or is checked against it.
import { z } from 'zod';

/** A partition, account or QOS name as it may appear in a job script: no quoting ever needed. */
export const SLURM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
/** An absolute path a job script may name: plain characters only, no `..` segment (checked apart). */
// biome-ignore lint/complexity/noUselessEscapeInRegex: abi/schemas/policy.json is generated from this pattern and stays byte for byte as published
export const SLURM_PATH = /^\/[A-Za-z0-9_.\/-]{0,1023}$/;
const EXACT_TOOL_ID = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;
const name = z.string().regex(SLURM_NAME, 'must be a Slurm name: letters, digits, _ . - (at most 64, not starting with . or -)');
const positiveInt = z.number().int().positive();

/** What one tool's jobs may name (ABI-SLURM-002); each list a subset of the section's own, default all of it. */
export const PolicySlurmToolSchema = z.strictObject({
  partitions: z
    .array(name)
    .optional()
    .describe('Partitions this tool may submit to, each also on slurm.partitions. Default: all of slurm.partitions.'),
  accounts: z
    .array(name)
    .optional()
    .describe('Accounts this tool may charge, each also on slurm.accounts. Default: all of slurm.accounts.'),
  qos: z.array(name).optional().describe('QOS this tool may ask for, each also on slurm.qos. Default: all of slurm.qos.'),
});
export type PolicySlurmTool = z.infer<typeof PolicySlurmToolSchema>;

/** The most any job may ask for (ABI-SLURM-003); a request that leaves a limit out gets the ceiling. */
export const PolicySlurmCeilingsSchema = z.strictObject({
  timeMinutes: positiveInt.max(525_600).default(60).describe('Wall time in minutes (--time). Default 60.'),
  cpusPerTask: positiveInt.max(4096).default(1).describe('CPUs per task (--cpus-per-task). Default 1.'),
  memoryMiB: positiveInt
    .max(16 * 1024 * 1024)
    .default(1024)
    .describe('Memory per node in MiB (--mem). Default 1024.'),
  arraySize: positiveInt.max(1_000_000).default(1000).describe('Tasks of one job array (--array=0-N). Default 1000.'),
  outputBytes: positiveInt
    .max(2 ** 40)
    .default(64 * 1024 * 1024)
    .describe('Bytes of one collected file (a declared output, stdout or stderr). Default 64 MiB.'),
});
export type PolicySlurmCeilings = z.infer<typeof PolicySlurmCeilingsSchema>;

/**
 * The `slurm` section (ABI-SLURM-*). Optional, so a policy without it keeps its hash; left out, it
 * allows nothing: no tool may submit. A tool also needs the slurm capabilities granted by exact name.
 */
export const PolicySlurmSchema = z
  .strictObject({
    partitions: z
      .array(name)
      .default([])
      .describe(
        "Partitions any job may name; the first is used when a job names none. Empty: the cluster's default partition, and a job may name none.",
      ),
    accounts: z
      .array(name)
      .default([])
      .describe(
        "Accounts any job may charge; the first is used when a job names none. Empty: the submitting user's default account, and a job may name none.",
      ),
    qos: z
      .array(name)
      .default([])
      .describe(
        "QOS any job may ask for; the first is used when a job names none. Empty: the cluster's default QOS, and a job may name none.",
      ),
    workRoot: z
      .string()
      .regex(SLURM_PATH, 'must be an absolute path of letters, digits, _ . / -')
      .refine((p) => !p.split('/').includes('..'), 'must not contain a .. segment')
      .optional()
      .describe(
        'The directory under which each job gets its own directory (in/, out/, meta/); it must be visible at the same path on the compute nodes. Without it no job can be submitted.',
      ),
    tools: z.record(z.string(), PolicySlurmToolSchema).default({}).describe('Per exact tool id (never a pattern), what its jobs may name.'),
    ceilings: PolicySlurmCeilingsSchema.default(() => PolicySlurmCeilingsSchema.parse({})),
  })
  .superRefine((s, ctx) => {
    for (const [tool, grant] of Object.entries(s.tools)) {
      if (!EXACT_TOOL_ID.test(tool))
        ctx.addIssue({
          code: 'custom',
          path: ['tools', tool],
          message: `${JSON.stringify(tool)} must be an exact tool id (no wildcard: the slurm capabilities are privileged)`,
        });
      for (const field of ['partitions', 'accounts', 'qos'] as const) {
        (grant[field] ?? []).forEach((value, i) => {
          if (!s[field].includes(value))
            ctx.addIssue({
              code: 'custom',
              path: ['tools', tool, field, i],
              message: `${value} is not on slurm.${field}; add it there first`,
            });
        });
      }
    }
  })
  .describe(
    'What the slurm capabilities may do: the partition, account and QOS allowlists, per-tool grants, the ceilings and the work root. See ABI-SLURM-* in abi/ABI.md.',
  );
export type PolicySlurm = z.infer<typeof PolicySlurmSchema>;
/** The slurm section a policy without one gets: nothing allowed. */
export const NO_SLURM: PolicySlurm = PolicySlurmSchema.parse({});
