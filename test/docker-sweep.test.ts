// The sweep of Docker leftovers at a host's start (ABI-DOCKER-007): against the real dockerd, a
// container and a workspace a dead process left are removed and a live process's kept; a policy
// that grants docker.run to no tool never reaches the engine (a socket standing in for
// DOCKER_HOST counts the connections); an engine that does not answer costs a warning, not the start.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import Docker from 'dockerode';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { helixHostName, LABEL_HOST, LABEL_PID, LABEL_RUN } from '../capabilities/docker-container.js';
import { createHost, type HostOptions } from '../host/index.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { UP_BOUND_MS, upDocker, CALL_BOUND_MS } from './helpers/docker-services.js';
import { tempDir } from './helpers/toolpack.js';

const DEAD_PID = 2 ** 22 + 1; // above Linux's pid_max: no process has it
const cleanups: Array<() => void | Promise<void>> = [];
let image: string;

beforeAll(async () => {
  image = await upDocker();
}, UP_BOUND_MS + 60_000);
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Sets an environment variable for the rest of the test. */
function setEnv(name: string, value: string): void {
  const saved = process.env[name];
  process.env[name] = value;
  cleanups.push(() => {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  });
}

/** A policy file granting docker.run to one tool, or nothing of Docker. */
function policyFile(grantDocker: boolean): string {
  const dir = tempDir('helix-policy-');
  cleanups.push(dir.cleanup);
  const file = path.join(dir.dir, 'policy.yaml');
  const docker = grantDocker ? ['grants: { d.tool: ["docker.run"] }', 'docker:', `  images: ["${image}"]`, '  tools: { d.tool: {} }'] : [];
  writeFileSync(file, ['version: 1', 'tools: { allow: ["*"] }', ...docker, ''].join('\n'));
  return file;
}

/** Starts a host on the bundled toolpacks with a fresh home, closed after the test. */
async function start(options: HostOptions) {
  const home = tempDir('helix-home-');
  const host = await createHost({ home: home.dir, ...options });
  cleanups.push(() => home.cleanup());
  cleanups.push(() => host.close());
  return host;
}

/** A unix socket standing where DOCKER_HOST points: it counts connections and hangs up on each. */
async function countingSocket(): Promise<{ connections: () => number }> {
  const dir = tempDir('helix-sock-');
  const file = path.join(dir.dir, 'docker.sock');
  let count = 0;
  const server: Server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(file, resolve));
  cleanups.push(dir.cleanup);
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  setEnv('DOCKER_HOST', `unix://${file}`);
  return { connections: () => count };
}

describe('the sweep of Docker leftovers at start', () => {
  it(
    "removes the containers and workspaces of this host's dead processes, and keeps a live process's",
    async () => {
      const work = tempDir('helix-work-');
      cleanups.push(work.cleanup);
      setEnv('HELIX_DOCKER_WORK', work.dir);
      // A name of this test's own: a host started meanwhile by another test file sweeps only its own host name's.
      setEnv('HELIX_HOST_NAME', `helix-sweep-test-${randomUUID()}`);
      const docker = new Docker();
      const labels = (pid: number) => ({ [LABEL_HOST]: helixHostName(), [LABEL_PID]: String(pid), [LABEL_RUN]: 'run_sweep_test' });
      const leftover = await docker.createContainer({ Image: image, Cmd: ['seqkit', 'version'], Labels: labels(DEAD_PID) });
      const live = await docker.createContainer({ Image: image, Cmd: ['seqkit', 'version'], Labels: labels(process.pid) });
      cleanups.push(() => live.remove({ force: true }));
      mkdirSync(path.join(work.dir, `${DEAD_PID}-crashed`, 'out'), { recursive: true });
      mkdirSync(path.join(work.dir, `${process.pid}-running`));
      const warnings: string[] = [];
      const host = await start({ policyFile: policyFile(true), warn: (l) => warnings.push(l) });
      const swept = await host.dockerSweep;
      expect(swept).toEqual({ containers: [leftover.id], workspaces: [`${DEAD_PID}-crashed`] });
      await expect(leftover.inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect((await live.inspect()).Id).toBe(live.id);
      expect(existsSync(path.join(work.dir, `${process.pid}-running`))).toBe(true);
      expect(warnings).toEqual(['helix: removed 1 container a stopped Helix process left behind']);
    },
    CALL_BOUND_MS,
  );

  it(
    'never reaches the engine when the policy grants docker.run to no tool',
    async () => {
      const socket = await countingSocket();
      const host = await start({ policyFile: policyFile(false) });
      expect(host.dockerSweep).toBeUndefined();
      const defaults = await start({ policy: loadPolicy(undefined) });
      expect(defaults.dockerSweep).toBeUndefined();
      expect(socket.connections()).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    'starts, with a warning, when the engine does not answer',
    async () => {
      const socket = await countingSocket();
      const warnings: string[] = [];
      const host = await start({ policyFile: policyFile(true), warn: (l) => warnings.push(l) });
      const swept = await host.dockerSweep;
      expect(socket.connections()).toBeGreaterThan(0);
      expect(swept).toMatchObject({ containers: [], error: expect.any(String) });
      expect(warnings).toEqual([expect.stringMatching(/^helix: could not sweep leftover containers on the Docker engine: /)]);
      expect(host.tools().length).toBeGreaterThan(0);
    },
    CALL_BOUND_MS,
  );
});
