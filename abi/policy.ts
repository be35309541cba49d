// The operator's policy (`helix.policy.yaml`) as a zod schema, generated into
// abi/schemas/policy.json. Deny by default: a tool runs only if allowed, and a capability only if
// both manifest and policy say so.
import { z } from 'zod';
import { PolicySlurmSchema } from './policy-slurm.js';

/** A tool id pattern: an exact id, a prefix ending in `.*`, or `*` for every tool. */
export const TOOL_PATTERN = /^(?:\*|[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*(?:\.\*)?)$/;
/** A capability pattern: an exact name (`kv.get`) or a family (`kv.*`). */
export const CAPABILITY_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*(?:\.\*)?$/;

const positiveInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/**
 * How far the ceilings grow per MiB of a call's input (ABI-BUDGET-003). Optional, with its
 * defaults applied where the rules are read (host/4-calls/policy/rules.ts), so a policy that leaves it out
 * keeps its hash.
 */
export const PolicyPerInputMiBSchema = z
  .strictObject({
    fuel: z.number().min(0).max(1e12).optional().describe('Fuel the ceiling grows by per MiB of input. Default 1,000,000,000.'),
    maxCapabilityCalls: z
      .number()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe('Capability calls the ceiling grows by per MiB of input. Default 64.'),
    timeoutMs: z
      .number()
      .min(0)
      .max(86_400_000)
      .optional()
      .describe('Milliseconds the deadline ceiling grows by per MiB of input. Default 2000.'),
  })
  .describe(
    "How far the ceilings grow per MiB of a call's input artifacts, for tools whose manifests declare limits.perInputMiB. See ABI-BUDGET-* in abi/ABI.md.",
  );

/** Upper bounds on what any manifest or request may ask for. */
export const PolicyCeilingsSchema = z.strictObject({
  fuel: positiveInt.default(10_000_000_000),
  maxMemoryPages: z.number().int().min(1).max(65_536).default(1024),
  timeoutMs: positiveInt.max(86_400_000).default(120_000),
  maxInputBytes: positiveInt.default(16 * 1024 * 1024),
  maxOutputBytes: positiveInt.default(16 * 1024 * 1024),
  maxCapabilityCalls: z.number().int().min(0).max(1_000_000).default(10_000),
  /** Largest file `artifact import` accepts. */
  maxImportBytes: positiveInt.default(64 * 1024 ** 3),
  perInputMiB: PolicyPerInputMiBSchema.optional(),
});
export type PolicyCeilings = z.infer<typeof PolicyCeilingsSchema>;

/** Outbound HTTP: origins any tool may reach (a tool also needs them in its manifest). */
export const PolicyNetworkSchema = z.strictObject({
  allow: z
    .array(z.string().regex(/^(https?):\/\/(\*\.)?[a-z0-9.-]+:\d{1,5}$/, 'must be scheme://host:port, optionally *.domain'))
    .default([]),
  /** Hosts or CIDR ranges in private, loopback or link-local space that may be reached anyway. */
  allowPrivate: z.array(z.string().min(1)).default([]),
  maxResponseBytes: positiveInt.default(16 * 1024 * 1024),
  maxRedirects: z.number().int().min(0).max(20).default(5),
});

/** Where a secret's value comes from; values never enter logs, audit records, runs or journals. */
export const SecretSourceSchema = z.union([
  z.strictObject({ env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name') }),
  z.strictObject({ file: z.string().min(1) }),
]);

/** What happens to a write that carries a secret's value: refused with A-AUTH-SECRET-WRITE, or stored with `[secret:<name>]` in its place. */
export const SecretWriteActionSchema = z.enum(['refuse', 'redact']);
export type SecretWriteAction = z.infer<typeof SecretWriteActionSchema>;

/**
 * Per write path, what happens when a guest's bytes carry the value of a secret its run received
 * (ABI-SECRET-*). Every field is optional and the whole section too, so a policy that leaves it
 * out keeps its hash; the defaults (refuse for kv and artifacts, redact for log lines and the
 * output) are applied where the rules are read (host/4-calls/policy/rules.ts). The host's own records
 * (journal, audit, run record, errors) are always redacted.
 */
export const PolicySecretWritesSchema = z
  .strictObject({
    kv: SecretWriteActionSchema.optional().describe('kv.put keys and values. Default refuse.'),
    artifacts: SecretWriteActionSchema.optional().describe('artifact.write pieces and labels, and the stored preview. Default refuse.'),
    log: SecretWriteActionSchema.optional().describe(
      "log.emit lines (the run's log artifact, the audit trail, MCP log notifications). Default redact.",
    ),
    output: SecretWriteActionSchema.optional().describe("The tool's output; refuse ends the run with A-AUTH-SECRET-WRITE. Default redact."),
  })
  .describe(
    "What happens to a guest's write that carries the value of a secret its run received (raw or encoded): refuse (A-AUTH-SECRET-WRITE) or redact ([secret:<name>]). See ABI-SECRET-* in abi/ABI.md.",
  );

/** An image Docker can only resolve to one content: its id `sha256:<64 hex>` or `repository@sha256:<64 hex>`. A tag never is. */
export const DOCKER_IMAGE_REF =
  /^(?:sha256:[0-9a-f]{64}|[a-z0-9]+(?:[._-][a-z0-9]+)*(?:[.:][a-z0-9-]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*@sha256:[0-9a-f]{64})$/;
/**
 * A name for an image as a container toolpack's manifest may write it, `repository[:tag]`: stable
 * across rebuilds of one recipe, but not content, so it runs only through the policy's
 * `docker.pins` (ABI-CONTAINER-002).
 */
export const DOCKER_IMAGE_NAME = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$/;
/** An environment variable name a container may be given. */
export const DOCKER_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const EXACT_TOOL_ID = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;
const imageRef = z.string().regex(DOCKER_IMAGE_REF, 'must be an image id sha256:<64 hex> or repository@sha256:<64 hex>, never a tag');

/** What `docker.run` may do for one tool (ABI-DOCKER-002): the images, the network, the environment names. */
export const PolicyDockerToolSchema = z.strictObject({
  images: z
    .array(imageRef)
    .optional()
    .describe('The images this tool may run, each also on docker.images. Default: every image on docker.images.'),
  network: z
    .enum(['none', 'bridge'])
    .default('none')
    .describe("The most network the tool's containers may ask for. Default none; host is never granted."),
  env: z
    .array(z.string().regex(DOCKER_ENV_NAME, 'must be an environment variable name'))
    .default([])
    .describe('Environment variable names the tool may set in its containers. Default none.'),
});
export type PolicyDockerTool = z.infer<typeof PolicyDockerToolSchema>;

/** The most any container may ask for (ABI-DOCKER-003); a request that leaves a limit out gets the ceiling. */
export const PolicyDockerCeilingsSchema = z.strictObject({
  memoryBytes: z
    .number()
    .int()
    .min(8 * 1024 * 1024)
    .max(2 ** 40)
    .default(512 * 1024 * 1024)
    .describe('Memory (and memory plus swap) in bytes. Default 512 MiB.'),
  cpus: z.number().min(0.01).max(1024).default(1).describe('CPUs, fractions down to 0.01 allowed. Default 1.'),
  pids: z.number().int().min(1).max(1_000_000).default(128).describe('Processes and threads. Default 128.'),
  tmpfsBytes: z
    .number()
    .int()
    .min(1024 * 1024)
    .max(2 ** 40)
    .default(64 * 1024 * 1024)
    .describe('Size of the writable /tmp, in bytes. Default 64 MiB.'),
  timeoutMs: positiveInt
    .max(86_400_000)
    .default(60_000)
    .describe('Milliseconds before the container is killed and removed. Default 60000.'),
  // Both travel in one capability answer, which the broker caps at 1.5 MB (R-CAP-PAYLOAD).
  maxStdoutBytes: positiveInt
    .max(512 * 1024)
    .default(256 * 1024)
    .describe('Bytes of stdout kept; the rest is cut and the result says so. Default 256 KiB, at most 512 KiB.'),
  maxStderrBytes: positiveInt
    .max(512 * 1024)
    .default(256 * 1024)
    .describe('Bytes of stderr kept; the rest is cut and the result says so. Default 256 KiB, at most 512 KiB.'),
  maxLogBytes: positiveInt
    .max(1024 * 1024 * 1024)
    .default(16 * 1024 * 1024)
    .describe(
      'Bytes of stdout, and of stderr, kept in a log artifact when the call asks for one; the rest is cut and the result says so. Default 16 MiB.',
    ),
  maxWorkspaceInputBytes: positiveInt
    .max(2 ** 50)
    .default(4 * 1024 * 1024 * 1024)
    .describe("Bytes of the input artifacts a call may materialise in its workspace's in/, all together. Default 4 GiB."),
  maxOutputFileBytes: positiveInt
    .max(2 ** 50)
    .default(1024 * 1024 * 1024)
    .describe("Bytes of one declared output file read back from the workspace's out/. Default 1 GiB."),
});
export type PolicyDockerCeilings = z.infer<typeof PolicyDockerCeilingsSchema>;

/**
 * The `docker.run` section (ABI-DOCKER-*). Optional, so a policy without it keeps its hash; left
 * out, it allows nothing: no image, no tool. A tool also needs `docker.run` granted by exact name.
 */
export const PolicyDockerSchema = z
  .strictObject({
    images: z.array(imageRef).default([]).describe('The images any tool may run, by id or digest.'),
    tools: z
      .record(z.string(), PolicyDockerToolSchema)
      .default({})
      .describe('Per exact tool id (never a pattern), what its containers may use.'),
    pins: z
      .record(z.string().regex(DOCKER_IMAGE_NAME, 'must be an image name such as helix-seqkit:local'), imageRef)
      .optional()
      .describe(
        'The image names container toolpacks may write, each pinned to an id or digest on docker.images (ABI-CONTAINER-002). Default none.',
      ),
    ceilings: PolicyDockerCeilingsSchema.default(() => PolicyDockerCeilingsSchema.parse({})),
  })
  .superRefine((d, ctx) => {
    for (const [tool, grant] of Object.entries(d.tools)) {
      if (!EXACT_TOOL_ID.test(tool))
        ctx.addIssue({
          code: 'custom',
          path: ['tools', tool],
          message: `${JSON.stringify(tool)} must be an exact tool id (no wildcard: docker.run is privileged)`,
        });
      (grant.images ?? []).forEach((image, i) => {
        if (!d.images.includes(image))
          ctx.addIssue({
            code: 'custom',
            path: ['tools', tool, 'images', i],
            message: `${image} is not on docker.images; add it there first`,
          });
      });
    }
    for (const [name, image] of Object.entries(d.pins ?? {})) {
      if (!d.images.includes(image))
        ctx.addIssue({ code: 'custom', path: ['pins', name], message: `${image} is not on docker.images; add it there first` });
    }
  })
  .describe('What docker.run may do: the image allowlist, per-tool grants and the ceilings. See ABI-DOCKER-* in abi/ABI.md.');
export type PolicyDocker = z.infer<typeof PolicyDockerSchema>;
/** The docker section a policy without one gets: nothing allowed. */
export const NO_DOCKER: PolicyDocker = PolicyDockerSchema.parse({});

/** The policy document. Unknown keys are refused, so a typo cannot silently widen access. */
export const PolicySchema = z.strictObject({
  version: z.literal(1),
  tools: z.strictObject({
    allow: z.array(z.string().regex(TOOL_PATTERN, 'must be a tool id, a prefix such as seq.*, or *')).default([]),
  }),
  grants: z
    .record(
      z.string().regex(TOOL_PATTERN, 'must be a tool id, a prefix such as seq.*, or *'),
      z.array(z.string().regex(CAPABILITY_PATTERN, 'must be a capability name or family such as kv.*')),
    )
    .default({}),
  ceilings: PolicyCeilingsSchema.default(() => PolicyCeilingsSchema.parse({})),
  paths: z
    .strictObject({
      importRoots: z.array(z.string().min(1)).default([]),
      exportRoots: z.array(z.string().min(1)).default([]),
    })
    .default({ importRoots: [], exportRoots: [] }),
  network: PolicyNetworkSchema.default(() => PolicyNetworkSchema.parse({})),
  secrets: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a lowercase secret name'), SecretSourceSchema).default({}),
  secretWrites: PolicySecretWritesSchema.optional(),
  docker: PolicyDockerSchema.optional(),
  slurm: PolicySlurmSchema.optional(),
});
export type PolicyInput = z.input<typeof PolicySchema>;
export type Policy = z.infer<typeof PolicySchema>;

/** Capabilities that a wildcard grant never covers: they must be granted by exact name. */
export const PRIVILEGED_CAPABILITY_FAMILIES = ['docker', 'slurm'] as const;
