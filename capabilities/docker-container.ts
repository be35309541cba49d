// One container's life for docker.run: create, attach (output kept up to a cap), start, wait under
// the timeout and the call's deadline, kill, and remove whatever happened; and the sweep that
// removes containers a crashed host left behind.
import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { HelixError, isHelixError } from '../abi/index.js';
import type { DockerPlan } from './docker-request.js';
import type { CapabilityContext } from './types.js';

/** How a container ended: the bytes kept of each stream (enough for the inline text and a log artifact) and how many it wrote. */
export interface Outcome {
  readonly exitCode: number;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly stdoutTotal: number;
  readonly stderrTotal: number;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
}

// After the process exits, the engine closes the attached stream at once; the bound only stops a hang.
const STREAM_END_BOUND_MS = 10_000;

/** Keeps the first `cap` bytes written and counts the rest, draining it so the container never blocks on a full pipe. */
class Capped extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly cap: number) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.total += chunk.length;
    if (this.kept < this.cap) {
      const part = chunk.subarray(0, this.cap - this.kept);
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
    done();
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Runs the created-to-removed life of one container; the container is removed on every path. */
export async function runContainer(
  docker: Docker,
  spec: Docker.ContainerCreateOptions,
  plan: DockerPlan,
  ctx: Pick<CapabilityContext, 'signal' | 'deadlineMs'>,
): Promise<Outcome> {
  if (ctx.signal.aborted || Date.now() >= ctx.deadlineMs) throw stopped(ctx);
  let phase = 'creating the container';
  let container: Docker.Container;
  try {
    container = await docker.createContainer(spec);
  } catch (err) {
    throw engineError(err, phase);
  }
  try {
    phase = 'attaching to the container';
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    // A stream kept as a log artifact is kept up to the log's ceiling, else up to the inline text's.
    const l = plan.limits;
    const out = new Capped(plan.logs.stdout === undefined ? l.maxStdoutBytes : Math.max(l.maxStdoutBytes, l.maxLogBytes));
    const err = new Capped(plan.logs.stderr === undefined ? l.maxStderrBytes : Math.max(l.maxStderrBytes, l.maxLogBytes));
    const ended = new Promise<void>((resolve) => {
      for (const event of ['end', 'close', 'error']) stream.once(event, () => resolve());
    });
    docker.modem.demuxStream(stream, out, err);
    phase = 'starting the container';
    await container.start();
    phase = 'waiting for the container';
    const waited = container.wait() as Promise<{ StatusCode: number }>;
    const how = await until(waited, plan.limits.timeoutMs, ctx);
    if (how === 'stopped') throw stopped(ctx);
    if (how === 'timeout') {
      phase = 'killing the container at its timeout';
      await container.kill().catch((e: unknown) => {
        if ((e as { statusCode?: number }).statusCode !== 409) throw e;
      });
    }
    const { StatusCode } = await waited;
    await bounded(ended, STREAM_END_BOUND_MS);
    phase = 'inspecting the container';
    const state = (await container.inspect()).State;
    return {
      exitCode: StatusCode,
      stdout: out.bytes,
      stderr: err.bytes,
      stdoutTotal: out.total,
      stderrTotal: err.total,
      timedOut: how === 'timeout',
      oomKilled: state.OOMKilled === true,
    };
  } catch (err) {
    throw engineError(err, phase);
  } finally {
    // force kills a container still running (deadline, cancellation, an engine error midway).
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/** Waits for the container to exit, its timeout, or the call's deadline or cancellation, whichever is first. */
function until(
  waited: Promise<unknown>,
  timeoutMs: number,
  ctx: Pick<CapabilityContext, 'signal' | 'deadlineMs'>,
): Promise<'exited' | 'timeout' | 'stopped'> {
  return new Promise((resolve, reject) => {
    const stopAt = Math.max(0, ctx.deadlineMs - Date.now());
    const cleanup = (): void => {
      clearTimeout(timeout);
      clearTimeout(deadline);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    const finish = (how: 'exited' | 'timeout' | 'stopped'): void => {
      cleanup();
      resolve(how);
    };
    const onAbort = (): void => finish('stopped');
    // At equal times the call's deadline wins: the call is over, not just the container.
    const timeout = setTimeout(() => finish('timeout'), timeoutMs);
    const deadline = setTimeout(() => finish('stopped'), stopAt);
    // A call cancelled while the container was being created or started: its abort event has passed.
    if (ctx.signal.aborted) finish('stopped');
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    waited.then(
      () => finish('exited'),
      (err: unknown) => {
        cleanup();
        reject(err);
      },
    );
  });
}

async function bounded(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** The error of a call whose deadline passed or that was cancelled while its container ran. */
function stopped(ctx: Pick<CapabilityContext, 'signal' | 'deadlineMs'>): HelixError {
  const reason: unknown = ctx.signal.reason;
  if (ctx.signal.aborted && isHelixError(reason)) return reason;
  const cancelled = ctx.signal.aborted;
  return new HelixError('R-TIMEOUT-001', {
    message: `docker.run ${cancelled ? 'was cancelled' : "did not finish before the call's deadline"}; its container was killed and removed.`,
    details: { deadline_ms: ctx.deadlineMs, cancelled },
  });
}

/** The HelixError for a failure of the engine: the image missing (P-PRECOND-DOCKER-IMAGE-MISSING) or anything else (R-UPSTREAM-DOCKER). */
export function engineError(err: unknown, phase: string): HelixError {
  if (isHelixError(err)) return err;
  const e = err as { statusCode?: number; code?: string; message?: string; json?: { message?: string } };
  const detail = e.json?.message ?? e.message ?? String(err);
  if (e.statusCode === 404 && /no such image/i.test(detail)) {
    return new HelixError('P-PRECOND-DOCKER-IMAGE-MISSING', {
      message: `docker.run: the Docker engine does not have the image (${detail}).`,
      details: { phase },
    });
  }
  return new HelixError('R-UPSTREAM-DOCKER', {
    message: `docker.run: the Docker engine failed while ${phase}: ${detail}`,
    details: { phase, ...(e.statusCode === undefined ? {} : { status: e.statusCode }), ...(e.code === undefined ? {} : { errno: e.code }) },
  });
}

/** The labels on every container: which run, tool, host and process made it, for the sweep of leftovers (ABI-DOCKER-007). */
export const LABEL_RUN = 'helix.run_id';
export const LABEL_HOST = 'helix.host';
export const LABEL_PID = 'helix.pid';
export const LABEL_TOOL = 'helix.tool';

/**
 * The name a host's containers are labelled with (helix.host): HELIX_HOST_NAME, else the machine's
 * host name. Set it where the host name changes between starts (Helix itself in a container), so
 * the next start still finds what a crash left.
 */
export function helixHostName(): string {
  return process.env.HELIX_HOST_NAME || hostname();
}

/** The labels of a container made now by this process for `runId` of `toolId` on `host`. */
export function containerLabels(runId: string, toolId: string, host: string): Record<string, string> {
  return { [LABEL_RUN]: runId, [LABEL_TOOL]: toolId, [LABEL_HOST]: host, [LABEL_PID]: String(process.pid) };
}

/**
 * Removes the containers labelled as made on `host` by a process that is gone (a crash's
 * leftovers); their ids. A container whose process still lives is another host process's running
 * call (`helix serve` and `helix call` side by side) and is kept.
 */
export async function sweepLeftovers(docker: Docker, host: string, alive: (pid: number) => boolean = pidAlive): Promise<string[]> {
  const found = await docker.listContainers({ all: true, filters: { label: [`${LABEL_HOST}=${host}`] } });
  const orphans = found.filter((c) => {
    const pid = Number(c.Labels[LABEL_PID]);
    return !(Number.isSafeInteger(pid) && pid > 0 && alive(pid));
  });
  await Promise.all(
    orphans.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  return orphans.map((c) => c.Id);
}

/** Whether process `pid` exists. Signal 0 checks that the process exists; EPERM means it exists under another user. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
