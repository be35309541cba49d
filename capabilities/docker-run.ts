// The docker.run capability: one command in one confined container on the host's Docker engine,
// its stdout and stderr kept up to a cap, killed at its timeout, and always removed (ABI-DOCKER-*).
//
// Confinement is not negotiable per call: no network unless granted, a read-only root, a
// size-bounded /tmp, no Linux capabilities, no privilege gain, a non-root user, and memory, CPU
// and process limits. The labels let a later start find a container a crash left behind.
import { hostname } from 'node:os';
import type Docker from 'dockerode';
import { z } from 'zod';
import { DockerRunArgsSchema, planDockerRun, type DockerPlan, type DockerRunArgs } from './docker-request.js';
import { containerLabels, runContainer, type Outcome } from './docker-container.js';
import type { CapabilityContext, CapabilityDefinition } from './types.js';

/** The user every container runs as: nobody, never root (ABI-DOCKER-005). */
export const CONTAINER_USER = '65534:65534';

/** Result of `docker.run`: a non-zero exit is a result for the tool to judge, not an error. */
export const DockerRunResultSchema = z.strictObject({
  /** The process's exit code; null when it was killed at its timeout. */
  exit_code: z.number().int().nullable(),
  stdout: z.string(),
  stdout_encoding: z.enum(['utf8', 'base64']),
  /** Whether stdout was longer than limits.max_stdout_bytes and cut there. */
  stdout_truncated: z.boolean(),
  stderr: z.string(),
  stderr_encoding: z.enum(['utf8', 'base64']),
  stderr_truncated: z.boolean(),
  /** Killed at limits.timeout_ms. */
  timed_out: z.boolean(),
  /** Killed by the kernel for passing limits.memory_bytes. */
  oom_killed: z.boolean(),
});
export type DockerRunResult = z.infer<typeof DockerRunResultSchema>;

/** Ports of the capability: the engine (default: DOCKER_HOST, else /var/run/docker.sock) and the host's name for labels. */
export interface DockerRunOptions {
  readonly docker?: () => Docker | Promise<Docker>;
  readonly hostName?: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Creates the `docker.run` capability over the given engine. */
export function createDockerRun(options: DockerRunOptions = {}): CapabilityDefinition<DockerRunArgs, DockerRunResult> {
  let engine: Promise<Docker> | undefined;
  // dockerode takes about 0.2 s to import: loaded at the first call, not at every start of helix.
  const docker = options.docker ?? (() => (engine ??= import('dockerode').then((m) => new m.default())));
  const host = options.hostName ?? hostname();
  return {
    name: 'docker.run',
    description: 'Runs argv in a confined container of an allowlisted image (by id or digest) on the host Docker engine; stdout and stderr capped; killed at its timeout; always removed.',
    privileged: true,
    journal: 'value',
    args: DockerRunArgsSchema,
    result: DockerRunResultSchema,
    invoke: async (args, ctx) => {
      const plan = planDockerRun(args, ctx.toolId, ctx.policy);
      return toResult(await runContainer(await docker(), containerSpec(plan, ctx, host), plan, ctx));
    },
  };
}

/** The `docker.run` capability on the engine DOCKER_HOST names, else the local socket. */
export const dockerRun: CapabilityDefinition<DockerRunArgs, DockerRunResult> = createDockerRun();

/** The container a plan runs as, confined (ABI-DOCKER-005). */
export function containerSpec(plan: DockerPlan, ctx: Pick<CapabilityContext, 'runId' | 'toolId'>, host: string): Docker.ContainerCreateOptions {
  const l = plan.limits;
  return {
    Image: plan.image,
    // argv[0] is the entrypoint so that exec gets argv exactly, whatever the image's own entrypoint.
    Entrypoint: [plan.argv[0]!],
    Cmd: plan.argv.slice(1),
    Env: [...plan.env],
    User: CONTAINER_USER,
    WorkingDir: '/tmp',
    Labels: containerLabels(ctx.runId, ctx.toolId, host),
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    NetworkDisabled: plan.network === 'none',
    HostConfig: {
      NetworkMode: plan.network,
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      PidsLimit: l.pids,
      Memory: l.memoryBytes,
      MemorySwap: l.memoryBytes,
      NanoCpus: Math.round(l.cpus * 1e9),
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${l.tmpfsBytes},mode=1777` },
      // The output is taken from the attached streams, capped; a log driver would keep all of it on disk.
      LogConfig: { Type: 'none', Config: {} },
    },
  };
}

function toResult(o: Outcome): DockerRunResult {
  const out = encode(o.stdout);
  const err = encode(o.stderr);
  return {
    exit_code: o.timedOut ? null : o.exitCode,
    stdout: out.text,
    stdout_encoding: out.encoding,
    stdout_truncated: o.stdoutTruncated,
    stderr: err.text,
    stderr_encoding: err.encoding,
    stderr_truncated: o.stderrTruncated,
    timed_out: o.timedOut,
    oom_killed: o.oomKilled,
  };
}

// UTF-8 text as is, anything else (or text cut inside a character) as base64, as http.request does.
function encode(bytes: Buffer): { text: string; encoding: 'utf8' | 'base64' } {
  try {
    return { text: utf8.decode(bytes), encoding: 'utf8' };
  } catch {
    return { text: bytes.toString('base64'), encoding: 'base64' };
  }
}
