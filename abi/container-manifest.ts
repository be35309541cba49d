// The container toolpack manifest (`<name>.tool.yaml` with `kind: container`, generated into
// abi/schemas/container-manifest.json): a tool that runs a command in a pinned image through
// docker.run instead of a WebAssembly module (ABI-CONTAINER-*).
import { z } from 'zod';
import { DeclaredOutputSchema, ManifestPerInputMiBSchema, ToolManifestSchema } from './manifest.js';
import { DOCKER_IMAGE_NAME, DOCKER_IMAGE_REF } from './policy.js';

/** A file name in the workspace (as docker.run's WORKSPACE_NAME): no separator, no leading dot or dash. */
export const CONTAINER_FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * One placeholder of an argv template: `{{params.NAME}}` (a scalar of the input), `{{inputs.NAME}}`
 * (the path of the input artifact NAME in /work/in), `{{outputs.ROLE}}` (the path of a declared
 * output's file in /work/out). Global: use with matchAll.
 */
export const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
/** What is inside a valid placeholder's braces. */
export const PLACEHOLDER_BODY = /^(params|inputs|outputs)\.([a-z_][a-z0-9_]*)$/;

const shape = ToolManifestSchema.shape;

/** A declared output of a container tool: a file of /work/out (default: named as its role) or, when `logs` names its role, a log. */
export const ContainerOutputSchema = DeclaredOutputSchema.extend({
  file: z
    .string()
    .regex(CONTAINER_FILE_NAME, 'must be a plain file name (letters, digits, . _ -; no path)')
    .optional()
    .describe('The file of /work/out registered under this role; default the role. Not for a role logs names.'),
});

/** The manifest of a container toolpack. */
export const ContainerManifestSchema = z.strictObject({
  kind: z.literal('container').describe('A container toolpack: the command runs in a confined container through docker.run.'),
  id: shape.id,
  version: shape.version,
  contractVersion: shape.contractVersion,
  description: shape.description,
  image: z
    .string()
    .refine(
      (s) => DOCKER_IMAGE_REF.test(s) || DOCKER_IMAGE_NAME.test(s),
      'must be an image id, repository@sha256:<64 hex>, or a name the policy pins (docker.pins)',
    )
    .describe("The image: an id or digest, or a name such as helix-seqkit:local that the operator's policy pins to an id (docker.pins)."),
  argv: z
    .array(z.string().min(1).max(4096))
    .min(1)
    .max(256)
    .describe(
      'The command as exec(2) gets it, never through a shell; {{params.NAME}}, {{inputs.NAME}} and {{outputs.ROLE}} are replaced (ABI-CONTAINER-003).',
    ),
  deterministic: shape.deterministic,
  timeoutMs: shape.timeoutMs,
  limits: z
    .strictObject({
      maxInputBytes: shape.limits.shape.maxInputBytes,
      maxOutputBytes: shape.limits.shape.maxOutputBytes,
      memoryBytes: z
        .number()
        .int()
        .min(6 * 1024 * 1024)
        .optional()
        .describe("Container memory; default the policy's docker ceiling."),
      cpus: z.number().min(0.01).optional().describe("CPUs; default the policy's docker ceiling."),
      pids: z.number().int().positive().optional().describe("Processes and threads; default the policy's docker ceiling."),
      tmpfsBytes: z.number().int().positive().optional().describe("Size of /tmp; default the policy's docker ceiling."),
      perInputMiB: z
        .strictObject({ timeoutMs: ManifestPerInputMiBSchema.shape.timeoutMs })
        .optional()
        .describe(
          'The deadline grows with the data: milliseconds added to timeoutMs per MiB of the input artifacts (ABI-BUDGET-001), under the policy ceiling that grows too. A container has no fuel and makes one docker.run call.',
        ),
    })
    .describe("Each at most the policy's docker.ceilings (a call over them is refused with A-AUTH-DOCKER-LIMIT)."),
  stdout: z
    .strictObject({ format: z.enum(['none', 'tsv', 'json']) })
    .default({ format: 'none' })
    .describe(
      'How stdout becomes the output: tsv a table with a header line ({rows: [...]}), json an object, none nothing (ABI-CONTAINER-006).',
    ),
  inputSchema: shape.inputSchema,
  outputSchema: shape.outputSchema,
  declaredOutputs: z.array(ContainerOutputSchema).default([]),
  logs: z
    .strictObject({ stdout: z.string().optional(), stderr: z.string().optional() })
    .default({})
    .describe('Declared roles under which stdout and stderr are kept as log artifacts.'),
});

/** A container manifest as written (before defaults). */
export type ContainerManifestInput = z.input<typeof ContainerManifestSchema>;
/** A container manifest after parsing and defaults. */
export type ContainerManifest = z.infer<typeof ContainerManifestSchema>;
