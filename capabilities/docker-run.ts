// The docker.run capability: one command in one confined container on the host's Docker engine,
// with its workspace (input artifacts in, declared outputs registered as the run's artifacts), its
// stdout and stderr kept up to a cap, killed at its timeout, and always removed (ABI-DOCKER-*).
//
// Confinement is not negotiable per call: no network unless granted, a read-only root, a
// size-bounded /tmp, no Linux capabilities, no privilege gain, a non-root user, and memory, CPU
// and process limits. The labels let a later start find a container a crash left behind.
import type Docker from 'dockerode';
import { z } from 'zod';
import { DockerRunArgsSchema, planDockerRun, type DockerPlan, type DockerRunArgs } from './docker-request.js';
import { containerLabels, engineError, helixHostName, runContainer, type Outcome } from './docker-container.js';
import { checkWorkspaceRefs, defaultWorkRoot, Workspace, WORKSPACE_MOUNT } from './docker-workspace.js';
import type { ArtifactPort, CapabilityContext, CapabilityDefinition } from './types.js';

/** The user every container runs as: nobody, never root (ABI-DOCKER-005). */
export const CONTAINER_USER = '65534:65534';

/** A stream kept as a log artifact. */
const LogArtifactSchema = z.strictObject({
  role: z.string(),
  artifact_id: z.string(),
  sha256: z.string(),
  size: z.number().int(),
  truncated: z.boolean(),
});

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
  /** The declared outputs found in out/, registered as the run's artifacts (only when the process exited by itself). */
  outputs: z.array(
    z.strictObject({ file: z.string(), role: z.string(), artifact_id: z.string(), sha256: z.string(), size: z.number().int() }),
  ),
  /** The declared output files out/ did not hold (all of them after a timeout or a memory kill). */
  missing_outputs: z.array(z.string()),
  /** stdout and stderr kept as log artifacts under the roles the call named, each up to docker.ceilings.maxLogBytes. */
  stdout_log: LogArtifactSchema.nullable(),
  stderr_log: LogArtifactSchema.nullable(),
});
export type DockerRunResult = z.infer<typeof DockerRunResultSchema>;

/** Ports of the capability: the engine (default: DOCKER_HOST, else /var/run/docker.sock), the host's name for labels (default helixHostName()), the work root of the workspaces. */
export interface DockerRunOptions {
  readonly docker?: () => Docker | Promise<Docker>;
  readonly hostName?: string;
  /** Where each call's workspace is made; default defaultWorkRoot(). The engine must be able to bind-mount it. */
  readonly workRoot?: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Creates the `docker.run` capability over the given engine. */
export function createDockerRun(options: DockerRunOptions = {}): CapabilityDefinition<DockerRunArgs, DockerRunResult> {
  let engine: Promise<Docker> | undefined;
  // dockerode takes about 0.2 s to import: loaded at the first call, not at every start of helix.
  const docker = options.docker ?? (() => (engine ??= import('dockerode').then((m) => new m.default())));
  return {
    name: 'docker.run',
    description:
      'Runs argv in a confined container of an allowlisted image (by id or digest) on the host Docker engine, with a workspace: input artifacts in /work/in, declared outputs read back from /work/out; stdout and stderr capped, optionally kept as log artifacts; killed at its timeout; always removed.',
    privileged: true,
    journal: 'value',
    args: DockerRunArgsSchema,
    result: DockerRunResultSchema,
    invoke: async (args, ctx) => {
      const plan = planDockerRun(args, ctx.toolId, ctx.policy);
      checkWorkspaceRefs(plan, ctx.artifacts);
      const engine = await docker();
      let ws: Workspace | undefined;
      try {
        try {
          ws = await Workspace.create(options.workRoot ?? defaultWorkRoot());
          await ws.materialise(plan, ctx.artifacts, ctx);
        } catch (err) {
          throw engineError(err, 'preparing the workspace');
        }
        const outcome = await runContainer(engine, containerSpec(plan, ctx, options.hostName ?? helixHostName(), ws.mounts()), plan, ctx);
        // A process killed at its timeout or for its memory left out/ half written: nothing is read.
        const exited = !outcome.timedOut && !outcome.oomKilled;
        const collected = exited ? await ws.collect(plan, ctx.artifacts) : { outputs: [], missing: plan.outputs.map((o) => o.file) };
        return {
          ...toResult(outcome, plan),
          outputs: collected.outputs,
          missing_outputs: collected.missing,
          stdout_log: await keepLog(plan.logs.stdout, outcome.stdout, outcome.stdoutTotal, plan, ctx.artifacts),
          stderr_log: await keepLog(plan.logs.stderr, outcome.stderr, outcome.stderrTotal, plan, ctx.artifacts),
        };
      } finally {
        await ws?.remove();
      }
    },
  };
}

/** The `docker.run` capability on the engine DOCKER_HOST names, else the local socket. */
export const dockerRun: CapabilityDefinition<DockerRunArgs, DockerRunResult> = createDockerRun();

/** The container a plan runs as, confined (ABI-DOCKER-005), its workspace mounted at /work (ABI-DOCKER-008). */
export function containerSpec(
  plan: DockerPlan,
  ctx: Pick<CapabilityContext, 'runId' | 'toolId'>,
  host: string,
  mounts: Docker.MountSettings[],
): Docker.ContainerCreateOptions {
  const l = plan.limits;
  return {
    Image: plan.image,
    // argv[0] is the entrypoint so that exec gets argv exactly, whatever the image's own entrypoint.
    Entrypoint: [plan.argv[0]!],
    Cmd: plan.argv.slice(1),
    Env: [...plan.env],
    User: CONTAINER_USER,
    WorkingDir: WORKSPACE_MOUNT,
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
      Mounts: mounts,
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

/** Keeps a stream as a log artifact under `role`, when the call named one. */
async function keepLog(
  role: string | undefined,
  bytes: Buffer,
  total: number,
  plan: DockerPlan,
  artifacts: ArtifactPort,
): Promise<z.infer<typeof LogArtifactSchema> | null> {
  if (role === undefined) return null;
  const kept = bytes.subarray(0, plan.limits.maxLogBytes);
  // The declared type, whatever the bytes look like: a log is a log.
  const sealed = (await artifacts.write(role, kept, true, { type: artifacts.declared(role)!.type })).artifact!;
  return { role, artifact_id: sealed.id, sha256: sealed.sha256, size: sealed.size, truncated: total > kept.length };
}

function toResult(o: Outcome, plan: DockerPlan): Omit<DockerRunResult, 'outputs' | 'missing_outputs' | 'stdout_log' | 'stderr_log'> {
  const out = encode(o.stdout.subarray(0, plan.limits.maxStdoutBytes));
  const err = encode(o.stderr.subarray(0, plan.limits.maxStderrBytes));
  return {
    exit_code: o.timedOut ? null : o.exitCode,
    stdout: out.text,
    stdout_encoding: out.encoding,
    stdout_truncated: o.stdoutTotal > plan.limits.maxStdoutBytes,
    stderr: err.text,
    stderr_encoding: err.encoding,
    stderr_truncated: o.stderrTotal > plan.limits.maxStderrBytes,
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
