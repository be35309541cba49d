// docker.run's arguments and the policy's decision on them: every refusal is made here, before a
// container exists, so a refused call leaves nothing behind on the engine (ABI-DOCKER-001..004).
import { z } from 'zod';
import { DOCKER_ENV_NAME, DOCKER_IMAGE_REF, HelixError, NO_DOCKER, type Policy, type PolicyDockerCeilings } from '../abi/index.js';

/** Most argv entries a call may pass. */
export const MAX_ARGV_ENTRIES = 4096;
/** Longest argv entry or environment value, in characters. */
export const MAX_ARG_CHARS = 65_536;

// A NUL cannot cross exec(2): Docker would refuse the container after it was created.
const plain = z.string().max(MAX_ARG_CHARS).refine((s) => !s.includes('\0'), 'must not contain NUL');

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
  limits: z
    .strictObject({
      // Docker's own floors: 6 MiB of memory, 0.01 CPU; below them the engine refuses the container.
      memory_bytes: z.number().int().min(6 * 1024 * 1024).optional(),
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
    throw new HelixError('I-REQ-DOCKER-IMAGE-REF', { message: `docker.run image ${JSON.stringify(args.image)} is not an image id or digest.`, details: { pointer: '/image', image: args.image } });
  }
  const grant = Object.hasOwn(docker.tools, toolId) ? docker.tools[toolId] : undefined;
  const images = grant === undefined ? [] : (grant.images ?? docker.images).filter((i) => docker.images.includes(i));
  if (!images.includes(args.image)) {
    const why = grant === undefined ? `the policy's docker.tools has no entry for ${toolId}` : `${args.image} is not among the images the policy lets ${toolId} run`;
    throw new HelixError('A-AUTH-DOCKER-IMAGE', { message: `docker.run refused: ${why}.`, details: { pointer: '/image', image: args.image, tool: toolId } });
  }
  const network = args.network;
  if (network === 'host' || (network === 'bridge' && grant!.network !== 'bridge')) {
    const why = network === 'host' ? 'host network is never granted' : `the policy grants ${toolId} network ${grant!.network} only`;
    throw new HelixError('A-AUTH-DOCKER-NETWORK', { message: `docker.run refused network ${network}: ${why}.`, details: { pointer: '/network', network, granted: grant!.network } });
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
  return { image: args.image, argv: args.argv, env, network, limits: limits as PolicyDockerCeilings };
}
