// docker.run against the real dockerd of scripts/services.sh and its local seqkit image: results,
// confinement, the output cap, the timeout and the call's deadline, and the container removed on
// every path (found by its helix.run_id label).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { beforeAll, describe, expect, it } from 'vitest';
import { HelixError, PolicySchema, type Policy } from '../abi/index.js';
import { LABEL_HOST, LABEL_PID, LABEL_RUN, sweepLeftovers } from '../capabilities/docker-container.js';
import { createDockerRun, type DockerRunResult } from '../capabilities/docker-run.js';
import type { CapabilityContext } from '../capabilities/index.js';
import { UP_BOUND_MS, upDocker, CALL_BOUND_MS } from './helpers/docker-services.js';
import { testContext } from './helpers/http-test-kit.js';

const MISSING = `sha256:${'e'.repeat(64)}`;
const HOST = `helix-test-${randomUUID()}`;

let docker: Docker;
let image: string;
let policy: Policy;
const cap = createDockerRun({ hostName: HOST });

beforeAll(async () => {
  docker = new Docker();
  image = await upDocker();
  policy = PolicySchema.parse({
    version: 1,
    tools: { allow: ['*'] },
    grants: { 'test.docker': ['docker.run'] },
    docker: {
      images: [image, MISSING],
      tools: { 'test.docker': {} },
      ceilings: { memoryBytes: 128 * 1024 * 1024, pids: 32, tmpfsBytes: 8 * 1024 * 1024, timeoutMs: CALL_BOUND_MS },
    },
  });
}, UP_BOUND_MS + 60_000);

/** A capability context for test.docker: the http test kit's, whose ports (unused by docker.run) throw if reached. */
function context(runId: string, options: { deadlineMs?: number; signal?: AbortSignal } = {}): CapabilityContext {
  return {
    ...testContext(),
    toolId: 'test.docker',
    runId,
    manifest: { allow: ['docker.run'], network: [] },
    policy,
    deadlineMs: options.deadlineMs ?? Date.now() + CALL_BOUND_MS * 2,
    signal: options.signal ?? new AbortController().signal,
  };
}

/** One docker.run call under its own run id; the result and whether any container of that run is left. */
async function call(
  args: Record<string, unknown>,
  options: { deadlineMs?: number; signal?: AbortSignal } = {},
): Promise<{ result?: DockerRunResult; error?: HelixError; left: number }> {
  const runId = `run_${randomUUID()}`;
  let result: DockerRunResult | undefined;
  let error: HelixError | undefined;
  try {
    result = await cap.invoke(cap.args.parse({ image, ...args }), context(runId, options));
  } catch (err) {
    if (!(err instanceof HelixError)) throw err;
    error = err;
  }
  const left = (await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).length;
  return { ...(result === undefined ? {} : { result }), ...(error === undefined ? {} : { error }), left };
}

describe('docker.run on a real engine', () => {
  it(
    'runs seqkit version and removes the container',
    async () => {
      const { result, left } = await call({ argv: ['seqkit', 'version'] });
      expect(result).toMatchObject({ exit_code: 0, stdout_encoding: 'utf8', stdout_truncated: false, timed_out: false, oom_killed: false });
      expect(result!.stdout).toMatch(/^seqkit v2\.\d+\.\d+\n$/);
      expect(left).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    'returns a non-zero exit with its stderr as a result, not an error',
    async () => {
      const { result, left } = await call({ argv: ['/bin/busybox', 'sh', '-c', 'echo out; echo oops >&2; exit 3'] });
      expect(result).toMatchObject({ exit_code: 3, stdout: 'out\n', stderr: 'oops\n', timed_out: false });
      expect(left).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    'confines: only lo, read-only root, writable /tmp, uid 65534, no capabilities, no new privileges',
    async () => {
      const probe =
        'ls /sys/class/net; id -u; touch /probe; echo "touch=$?"; echo x > /tmp/ok && echo tmp=ok; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status';
      const { result } = await call({ argv: ['/bin/busybox', 'sh', '-c', probe] });
      expect(result!.stdout.split('\n')).toEqual([
        'lo',
        '65534',
        'touch=1',
        'tmp=ok',
        'CapEff:\t0000000000000000',
        'CapBnd:\t0000000000000000',
        'NoNewPrivs:\t1',
        '',
      ]);
    },
    CALL_BOUND_MS,
  );

  it(
    'kills a container that passes memory_bytes and says so',
    async () => {
      const { result, left } = await call({
        argv: ['/bin/busybox', 'sh', '-c', 'x=$(head -c 200m /dev/zero | tr "\\0" a); echo survived'],
        limits: { memory_bytes: 32 * 1024 * 1024 },
      });
      expect(result).toMatchObject({ oom_killed: true, timed_out: false });
      expect(result!.stdout).not.toContain('survived');
      expect(left).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    'refuses processes past pids',
    async () => {
      const { result } = await call({
        argv: ['/bin/busybox', 'sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; echo started'],
        limits: { pids: 6, timeout_ms: 20_000 },
      });
      expect(result!.stderr).toMatch(/can't fork|Resource temporarily unavailable/);
    },
    CALL_BOUND_MS,
  );

  it(
    'keeps stdout up to max_stdout_bytes and says it cut the rest',
    async () => {
      const { result } = await call({
        argv: ['/bin/busybox', 'sh', '-c', 'yes helix | head -c 100000'],
        limits: { max_stdout_bytes: 1000 },
      });
      expect(result).toMatchObject({ exit_code: 0, stdout_truncated: true });
      expect(result!.stdout).toBe('helix\n'.repeat(200).slice(0, 1000));
    },
    CALL_BOUND_MS,
  );

  it(
    'kills a container at its timeout, reports timed_out, and removes it',
    async () => {
      const { result, left } = await call({ argv: ['/bin/busybox', 'sleep', '600'], limits: { timeout_ms: 1000 } });
      expect(result).toMatchObject({ exit_code: null, timed_out: true });
      expect(left).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    "fails with R-TIMEOUT-001 at the call's deadline, and with the broker's reason when cancelled; removed both times",
    async () => {
      const late = await call({ argv: ['/bin/busybox', 'sleep', '600'] }, { deadlineMs: Date.now() + 1500 });
      expect(late.error).toMatchObject({ code: 'R-TIMEOUT-001', details: { cancelled: false } });
      expect(late.left).toBe(0);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new HelixError('R-TIMEOUT-CANCELLED')), 1500);
      const cancelled = await call({ argv: ['/bin/busybox', 'sleep', '600'] }, { signal: controller.signal });
      expect(cancelled.error?.code).toBe('R-TIMEOUT-CANCELLED');
      expect(cancelled.left).toBe(0);
    },
    CALL_BOUND_MS * 2,
  );

  it(
    'stops a call cancelled while its container is being created, instead of waiting out the command',
    async () => {
      const controller = new AbortController();
      const real = new Docker();
      // The real engine; the call is cancelled the moment its container exists, before it starts.
      const engine = Object.assign(Object.create(real) as Docker, {
        createContainer: async (spec: Docker.ContainerCreateOptions) => {
          const created = await real.createContainer(spec);
          controller.abort();
          return created;
        },
      });
      const hooked = createDockerRun({ docker: () => engine, hostName: HOST });
      const runId = `run_${randomUUID()}`;
      const err = await Promise.resolve(
        hooked.invoke(hooked.args.parse({ image, argv: ['/bin/busybox', 'sleep', '600'] }), context(runId, { signal: controller.signal })),
      ).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'R-TIMEOUT-001', details: { cancelled: true } });
      expect(await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).toEqual([]);
    },
    CALL_BOUND_MS / 2,
  );

  it(
    'names an allowlisted image the engine does not have, and an engine that does not answer',
    async () => {
      const { error } = await call({ image: MISSING, argv: ['x'] });
      expect(error).toMatchObject({ code: 'P-PRECOND-DOCKER-IMAGE-MISSING', details: { phase: 'creating the container' } });
      const nowhere = createDockerRun({ docker: () => new Docker({ socketPath: path.join(tmpdir(), `no-docker-${randomUUID()}.sock`) }) });
      const err = await Promise.resolve(nowhere.invoke(nowhere.args.parse({ image, argv: ['x'] }), context('run_nowhere'))).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'R-UPSTREAM-DOCKER', details: { phase: 'creating the container', errno: 'ENOENT' } });
    },
    CALL_BOUND_MS,
  );

  it(
    'reaches the engine DOCKER_HOST names, as an operator points Helix at their own',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'helix-docker-host-'));
      const saved = process.env.DOCKER_HOST;
      try {
        // The local engine under another socket path: only DOCKER_HOST can lead there.
        symlinkSync('/var/run/docker.sock', path.join(dir, 'engine.sock'));
        process.env.DOCKER_HOST = `unix://${path.join(dir, 'engine.sock')}`;
        const there = createDockerRun({ hostName: HOST });
        const ran = await there.invoke(there.args.parse({ image, argv: ['seqkit', 'version'] }), context(`run_${randomUUID()}`));
        expect(ran).toMatchObject({ exit_code: 0, stdout: expect.stringMatching(/^seqkit v2\./) });
        process.env.DOCKER_HOST = `unix://${path.join(dir, 'none.sock')}`;
        const gone = createDockerRun({ hostName: HOST });
        const err = await Promise.resolve(gone.invoke(gone.args.parse({ image, argv: ['seqkit', 'version'] }), context('run_gone'))).catch(
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: 'R-UPSTREAM-DOCKER', details: { errno: 'ENOENT' } });
      } finally {
        if (saved === undefined) delete process.env.DOCKER_HOST;
        else process.env.DOCKER_HOST = saved;
        rmSync(dir, { recursive: true, force: true });
      }
    },
    CALL_BOUND_MS,
  );

  it(
    "sweeps the containers of this host whose process is gone, and neither a live process's nor another host's",
    async () => {
      const labels = (host: string, pid: number) => ({ [LABEL_HOST]: host, [LABEL_PID]: String(pid), [LABEL_RUN]: `run_${randomUUID()}` });
      const dead = 2 ** 22 + 1; // above Linux's pid_max: no process has it
      const leftover = await docker.createContainer({ Image: image, Cmd: ['seqkit', 'version'], Labels: labels(HOST, dead) });
      const live = await docker.createContainer({ Image: image, Cmd: ['seqkit', 'version'], Labels: labels(HOST, process.pid) });
      const other = await docker.createContainer({ Image: image, Cmd: ['seqkit', 'version'], Labels: labels(`${HOST}-other`, dead) });
      try {
        expect(await sweepLeftovers(docker, HOST)).toEqual([leftover.id]);
        await expect(leftover.inspect()).rejects.toMatchObject({ statusCode: 404 });
        expect((await live.inspect()).Id).toBe(live.id);
        expect((await other.inspect()).Id).toBe(other.id);
      } finally {
        await Promise.all([live, other].map((c) => c.remove({ force: true })));
      }
    },
    CALL_BOUND_MS,
  );

  it(
    'labels each container with its run, tool, host and process',
    async () => {
      const runId = `run_${randomUUID()}`;
      const controller = new AbortController();
      const running = Promise.resolve(
        cap.invoke(cap.args.parse({ image, argv: ['/bin/busybox', 'sleep', '600'] }), context(runId, { signal: controller.signal })),
      ).catch((e: unknown) => e);
      let labels: Record<string, string> | undefined;
      for (
        const bound = Date.now() + CALL_BOUND_MS / 2;
        labels === undefined && Date.now() < bound;
        await new Promise((r) => setTimeout(r, 100))
      ) {
        labels = (await docker.listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } }))[0]?.Labels;
      }
      controller.abort();
      expect(await running).toMatchObject({ code: 'R-TIMEOUT-001', details: { cancelled: true } });
      expect(labels).toMatchObject({
        'helix.run_id': runId,
        'helix.tool': 'test.docker',
        'helix.host': HOST,
        'helix.pid': String(process.pid),
      });
    },
    CALL_BOUND_MS,
  );
});
