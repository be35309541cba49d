// docker.run's arguments and the policy's decision on them: every refusal is made here, before a
// container exists, so a refused call leaves nothing behind on the engine (ABI-DOCKER-001..004).
import { z } from 'zod';
import { DOCKER_ENV_NAME, DOCKER_IMAGE_REF, HelixError, NO_DOCKER, type Policy, type PolicyDockerCeilings } from '../abi/index.js';

/** Most inputs, and most outputs, one call's workspace may hold. */
export const MAX_WORKSPACE_ENTRIES = 256;
/** A name in the workspace: a plain file name, never a path, a hidden file or an option (ABI-DOCKER-008). */
export const WORKSPACE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** Most argv entries a call may pass. */
export const MAX_ARGV_ENTRIES = 4096;
/** Longest argv entry or environment value, in characters. */
export const MAX_ARG_CHARS = 65_536;

// A NUL cannot cross exec(2): Docker would refuse the container after it was created.
const plain = z
  .string()
  .max(MAX_ARG_CHARS)
  .refine((s) => !s.includes('\0'), 'must not contain NUL');

/** Arguments of `docker.run`. There is no field for privilege, capabilities, devices, mounts or user: none can be asked for. */
export const DockerRunArgsSchema = z.strictObject({
  /** `sha256:<64 hex>` or `repository@sha256:<64 hex>` (ABI-DOCKER-001); checked in planDockerRun for a precise code. */
  image: z.string().min(1).max(512),
  /** The command, as exec(2) gets it: no shell reads it. */
  argv: z
    .array(plain)
    .min(1)
    .max(MAX_ARGV_ENTRIES)
    .refine((argv) => argv[0] !== '', { message: 'argv[0] must name the program to run', path: [0] }),
  env: z.record(z.string(), plain).optional(),
  network: z.enum(['none', 'bridge', 'host']).default('none'),
  /** Artifacts materialised read-only in the workspace's in/ under these names (ABI-DOCKER-008). */
  inputs: z
    .array(z.strictObject({ name: z.string().max(256), artifact_id: z.string().min(1).max(128) }))
    .max(MAX_WORKSPACE_ENTRIES)
    .default([]),
  /** Files of the workspace's out/ registered, once the container is gone, as the run's outputs under declared roles (ABI-DOCKER-009). */
  outputs: z
    .array(
      z.strictObject({
        file: z.string().max(256),
        role: z.string().min(1).max(64),
        type: z.string().min(1).max(64).optional(),
        label: z.string().min(1).max(256).optional(),
      }),
    )
    .max(MAX_WORKSPACE_ENTRIES)
    .default([]),
  /** Declared roles under which stdout and stderr are kept as log artifacts, up to docker.ceilings.maxLogBytes each. */
  logs: z.strictObject({ stdout: z.string().min(1).max(64).optional(), stderr: z.string().min(1).max(64).optional() }).default({}),
  limits: z
    .strictObject({
      // Docker's own floors: 6 MiB of memory, 0.01 CPU; below them the engine refuses the container.
      memory_bytes: z
        .number()
        .int()
        .min(6 * 1024 * 1024)
        .optional(),
      cpus: z.number().min(0.01).optional(),
      pids: z.number().int().positive().optional(),
      tmpfs_bytes: z.number().int().positive().optional(),
      timeout_ms: z.number().int().positive().optional(),
      max_stdout_bytes: z.number().int().positive().optional(),
      max_stderr_bytes: z.number().int().positive().optional(),
    })
    .optional(),
});
export type DockerRunArgs = z.output<typeof DockerRunArgsSchema>;

/** What a call may run, decided: every limit filled in and within the policy's ceilings. */
export interface DockerPlan {
  readonly image: string;
  readonly argv: readonly string[];
  readonly env: readonly string[];
  readonly network: 'none' | 'bridge';
  readonly limits: PolicyDockerCeilings;
  /** What the workspace holds: inputs by name, outputs by file, the log roles. */
  readonly inputs: DockerRunArgs['inputs'];
  readonly outputs: DockerRunArgs['outputs'];
  readonly logs: DockerRunArgs['logs'];
}

// Each request limit against the ceiling it is bounded by.
const LIMITS = [
  ['memory_bytes', 'memoryBytes'],
  ['cpus', 'cpus'],
  ['pids', 'pids'],
  ['tmpfs_bytes', 'tmpfsBytes'],
  ['timeout_ms', 'timeoutMs'],
  ['max_stdout_bytes', 'maxStdoutBytes'],
  ['max_stderr_bytes', 'maxStderrBytes'],
] as const satisfies ReadonlyArray<readonly [keyof NonNullable<DockerRunArgs['limits']>, keyof PolicyDockerCeilings]>;

/**
 * Decides a `docker.run` call of `toolId` under `policy`: the plan to run, or the HelixError that
 * refuses it (I-REQ-DOCKER-IMAGE-REF, A-AUTH-DOCKER-IMAGE, -NETWORK, -ENV, -LIMIT).
 */
export function planDockerRun(args: DockerRunArgs, toolId: string, policy: Policy): DockerPlan {
  const docker = policy.docker ?? NO_DOCKER;
  if (!DOCKER_IMAGE_REF.test(args.image)) {
    throw new HelixError('I-REQ-DOCKER-IMAGE-REF', {
      message: `docker.run image ${JSON.stringify(args.image)} is not an image id or digest.`,
      details: { pointer: '/image', image: args.image },
    });
  }
  const grant = Object.hasOwn(docker.tools, toolId) ? docker.tools[toolId] : undefined;
  const images = grant === undefined ? [] : (grant.images ?? docker.images).filter((i) => docker.images.includes(i));
  if (!images.includes(args.image)) {
    const why =
      grant === undefined
        ? `the policy's docker.tools has no entry for ${toolId}`
        : `${args.image} is not among the images the policy lets ${toolId} run`;
    throw new HelixError('A-AUTH-DOCKER-IMAGE', {
      message: `docker.run refused: ${why}.`,
      details: { pointer: '/image', image: args.image, tool: toolId },
    });
  }
  const network = args.network;
  if (network === 'host' || (network === 'bridge' && grant!.network !== 'bridge')) {
    const why = network === 'host' ? 'host network is never granted' : `the policy grants ${toolId} network ${grant!.network} only`;
    throw new HelixError('A-AUTH-DOCKER-NETWORK', {
      message: `docker.run refused network ${network}: ${why}.`,
      details: { pointer: '/network', network, granted: grant!.network },
    });
  }
  const env: string[] = [];
  for (const [name, value] of Object.entries(args.env ?? {})) {
    if (!DOCKER_ENV_NAME.test(name) || !grant!.env.includes(name)) {
      throw new HelixError('A-AUTH-DOCKER-ENV', {
        message: `docker.run refused environment variable ${JSON.stringify(name)}: it is not on the policy's docker.tools.${toolId}.env.`,
        details: { pointer: `/env/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, name, allowed: grant!.env },
      });
    }
    env.push(`${name}=${value}`);
  }
  const limits: Record<string, number> = { ...docker.ceilings };
  for (const [asked, ceiling] of LIMITS) {
    const value = args.limits?.[asked];
    if (value === undefined) continue;
    if (value > docker.ceilings[ceiling]) {
      throw new HelixError('A-AUTH-DOCKER-LIMIT', {
        message: `docker.run refused limits.${asked} ${value}: the policy's docker.ceilings.${ceiling} is ${docker.ceilings[ceiling]}.`,
        details: { pointer: `/limits/${asked}`, asked: value, ceiling: docker.ceilings[ceiling], field: `docker.ceilings.${ceiling}` },
      });
    }
    limits[ceiling] = value;
  }
  checkWorkspace(args);
  return {
    image: args.image,
    argv: args.argv,
    env,
    network,
    limits: limits as PolicyDockerCeilings,
    inputs: args.inputs,
    outputs: args.outputs,
    logs: args.logs,
  };
}

/** Refuses a workspace name that is not a plain file name, and two entries that would be one file or one role (ABI-DOCKER-008). */
function checkWorkspace(args: DockerRunArgs): void {
  const entries = [
    ...args.inputs.map((e, i) => ({ dir: 'in', name: e.name, pointer: `/inputs/${i}/name` })),
    ...args.outputs.map((e, i) => ({ dir: 'out', name: e.file, pointer: `/outputs/${i}/file` })),
  ];
  const seen = new Map<string, string>();
  for (const e of entries) {
    if (!WORKSPACE_NAME.test(e.name)) {
      throw new HelixError('I-REQ-DOCKER-WORKSPACE-NAME', {
        message: `docker.run workspace name ${JSON.stringify(e.name)} at ${e.pointer} is not a plain file name.`,
        details: { pointer: e.pointer, name: e.name },
      });
    }
    // Case folded: on a case-insensitive file system the two would be one file.
    const key = `${e.dir}/${e.name.toLowerCase()}`;
    const first = seen.get(key);
    if (first !== undefined) throw collision(`${e.dir}/${e.name}`, first, e.pointer);
    seen.set(key, e.pointer);
  }
  const roles = new Map<string, string>();
  const named = [
    ...args.outputs.map((o, i) => [o.role, `/outputs/${i}/role`] as const),
    ...(['stdout', 'stderr'] as const).flatMap((s) => (args.logs[s] === undefined ? [] : [[args.logs[s]!, `/logs/${s}`] as const])),
  ];
  for (const [role, pointer] of named) {
    const first = roles.get(role);
    if (first !== undefined) throw collision(`role ${role}`, first, pointer);
    roles.set(role, pointer);
  }
}

function collision(what: string, first: string, pointer: string): HelixError {
  return new HelixError('I-REQ-DOCKER-WORKSPACE-COLLISION', {
    message: `docker.run workspace: ${what} at ${pointer} is already taken by ${first}.`,
    details: { pointer, first },
  });
}
