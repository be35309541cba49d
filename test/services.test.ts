// The real engines of Docker and Slurm (README "Services for Docker and Slurm"), brought up through scripts/services.sh: dockerd answering through
// dockerode, the locally imported seqkit image confined as Helix will run it, and a single-node
// Slurm cluster whose jobs sacct reports (COMPLETED, FAILED with the job's exit code).

import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, type CommandRun } from './helpers/fresh-machine.js';

const run = promisify(execFile);
const SCRIPT = path.resolve(import.meta.dirname, '..', 'scripts', 'services.sh');
const STATE = process.env.HELIX_SERVICES_DIR ?? '/var/lib/helix-services';
// Installing docker.io, slurm-wlm and MariaDB on a fresh machine takes minutes; the bound only stops a hang.
const UP_BOUND_MS = 20 * 60_000;
// A trivial job: seconds on an idle node, far more on a shared, loaded machine.
const JOB_BOUND_MS = 3 * 60_000;

/** The flags Helix's docker.run applies to every container (ABI-DOCKER-*), as dockerode's HostConfig. */
const CONFINED: Docker.HostConfig = {
  NetworkMode: 'none',
  ReadonlyRootfs: true,
  CapDrop: ['ALL'],
  SecurityOpt: ['no-new-privileges'],
  PidsLimit: 64,
  Memory: 256 * 1024 * 1024,
  MemorySwap: 256 * 1024 * 1024,
  Tmpfs: { '/tmp': 'rw,size=16m,mode=1777' },
};

let up: CommandRun;
/** The environment `services.sh env` prints: where Slurm's commands find the cluster's config. */
let SLURM_ENV: NodeJS.ProcessEnv;
let docker: Docker;
let imageId: string;
let work: string;

beforeAll(async () => {
  up = await runCommand('bash', [SCRIPT, 'up'], { cwd: tmpdir(), env: process.env, killAfterMs: UP_BOUND_MS });
  if (up.code !== 0) throw new Error(`scripts/services.sh up exited ${up.code}:\n${up.stdout}\n${up.stderr}`);
  const exports = (await run('bash', [SCRIPT, 'env'])).stdout.matchAll(/^export (\w+)=(.*)$/gm);
  SLURM_ENV = { ...process.env, ...Object.fromEntries([...exports].map((m) => [m[1]!, m[2]!])) };
  expect(SLURM_ENV.SLURM_CONF).toBe(path.join(STATE, 'slurm', 'slurm.conf'));
  docker = new Docker({ socketPath: process.env.HELIX_DOCKER_SOCKET ?? '/var/run/docker.sock' });
  const images = JSON.parse(await readFile(path.join(STATE, 'images.json'), 'utf8')) as { images: { name: string; id: string }[] };
  imageId = images.images.find((i) => i.name === 'helix-seqkit:local')!.id;
  work = await mkdtemp(path.join(tmpdir(), 'helix-services-'));
}, UP_BOUND_MS + 60_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Runs `cmd` in the local image under CONFINED as uid 65534; stdout, stderr and the exit code. */
async function confined(cmd: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const container = await docker.createContainer({ Image: imageId, Cmd: cmd, User: '65534:65534', HostConfig: CONFINED });
  try {
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const logs = await container.logs({ stdout: true, stderr: true, follow: false });
    return { code: StatusCode, ...demux(logs) };
  } finally {
    await container.remove({ force: true });
  }
}

/** Splits Docker's multiplexed log stream (8-byte frame headers: stream, 0, 0, 0, length). */
function demux(buf: Buffer): { stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  for (let at = 0; at + 8 <= buf.length; ) {
    const len = buf.readUInt32BE(at + 4);
    (buf[at] === 2 ? err : out).push(buf.subarray(at + 8, at + 8 + len));
    at += 8 + len;
  }
  return { stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

/** Polls sacct until job `id` reaches a final state; its State and ExitCode fields. */
async function finished(id: string): Promise<{ state: string; exit: string }> {
  const bound = Date.now() + JOB_BOUND_MS;
  for (;;) {
    const { stdout } = await run('sacct', ['-j', id, '-X', '-n', '-P', '-o', 'State,ExitCode'], { env: SLURM_ENV });
    const [state = '', exit = ''] = stdout.trim().split('|');
    if (/^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL)/.test(state)) return { state, exit };
    if (Date.now() > bound) throw new Error(`job ${id} still '${state}' after ${JOB_BOUND_MS / 1000}s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function sbatch(wrap: string): Promise<string> {
  const { stdout } = await run('sbatch', ['--parsable', '--chdir', work, '--output', path.join(work, 'slurm-%j.out'), '--wrap', wrap], {
    env: SLURM_ENV,
  });
  return stdout.trim().split(';')[0]!;
}

describe('scripts/services.sh', () => {
  it('reports both services up, and a second up only checks', async () => {
    const status = await run('bash', [SCRIPT, 'status']);
    expect(status.stdout).toMatch(/^docker: up \(dockerd .*helix-seqkit:local sha256:[0-9a-f]{64}\)$/m);
    expect(status.stdout).toMatch(/^slurm: up \(node \S+ (idle|mixed|allocated|completing), sacct answers/m);
    const before = await readFile(path.join(STATE, 'images.json'), 'utf8');
    const again = await runCommand('bash', [SCRIPT, 'up'], { cwd: tmpdir(), env: process.env, killAfterMs: UP_BOUND_MS });
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/installing|starting|built/);
    expect(await readFile(path.join(STATE, 'images.json'), 'utf8')).toBe(before);
  });

  it('status exits non-zero and names each service down when nothing answers', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'helix-services-empty-'));
    try {
      const env = { ...process.env, HELIX_SERVICES_DIR: empty, HELIX_DOCKER_SOCKET: path.join(empty, 'docker.sock') };
      const status = await runCommand('bash', [SCRIPT, 'status'], { cwd: tmpdir(), env, killAfterMs: 60_000 });
      expect(status.code).toBe(1);
      expect(status.stdout).toMatch(/^docker: down \(nothing answers at .*docker\.sock: .+\)$/m);
      expect(status.stdout).toMatch(/^slurm: down /m);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('a daemon that cannot come up stops up with the tail of its log; down stops what that up started', async () => {
    // A second state directory whose database would take the port the running MariaDB holds.
    const other = await mkdtemp(path.join(tmpdir(), 'helix-services-clash-'));
    const env = { ...process.env, HELIX_SERVICES_DIR: other };
    try {
      const clash = await runCommand('bash', [SCRIPT, 'up', 'slurm'], { cwd: tmpdir(), env, killAfterMs: 5 * 60_000 });
      expect(clash.code).toBe(1);
      expect(clash.stderr).toContain(`services: mariadbd exited while starting; the last lines of ${other}/logs/mariadbd.log:\n`);
      expect(clash.stderr).toMatch(/Address already in use/);
    } finally {
      // Stops the munged that up started there, also when an expectation above failed.
      const down = await runCommand('bash', [SCRIPT, 'down', 'slurm'], { cwd: tmpdir(), env, killAfterMs: 2 * 60_000 });
      await rm(other, { recursive: true, force: true });
      expect(down.code).toBe(0);
      expect(down.stdout).toMatch(/^services: stopped munged \(pid \d+\)$/m);
    }
  });

  it('up as a user other than root stops with one message saying to run it as root', async () => {
    // A copy uid 65534 can read: a clone under /root could not be.
    const copy = await mkdtemp(path.join(tmpdir(), 'helix-services-user-'));
    try {
      await chmod(copy, 0o755);
      for (const f of ['services.sh', 'services-lib.sh', 'services-docker.sh', 'services-slurm.sh'])
        await copyFile(path.join(path.dirname(SCRIPT), f), path.join(copy, f));
      const { stdout, stderr, code } = await new Promise<CommandRun>((resolve) => {
        execFile('bash', [path.join(copy, 'services.sh'), 'up'], { uid: 65534, gid: 65534, cwd: copy }, (error, out, err) =>
          resolve({ code: error ? (error.code as number) : 0, stdout: out, stderr: err }),
        );
      });
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toBe('services: up starts the daemons as root: run it as root (sudo scripts/services.sh up)\n');
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});

describe('docker', () => {
  it('dockerd answers through dockerode and holds the image by the id images.json records', async () => {
    expect((await docker.ping()).toString()).toBe('OK');
    expect(imageId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await docker.getImage(imageId).inspect()).Id).toBe(imageId);
  });

  it('runs seqkit confined, with the same version as the host seqkit', async () => {
    const host = (await run('seqkit', ['version'])).stdout.trim();
    const inside = await confined(['seqkit', 'version']);
    expect(inside).toEqual({ code: 0, stdout: `${host}\n`, stderr: '' });
  });

  it('inside, there is no network but lo, / is read-only, the user is not root and holds no capabilities', async () => {
    const probe = await confined([
      'sh',
      '-c',
      'ls /sys/class/net; id -u; touch /probe; echo "touch=$?"; echo x > /tmp/ok && echo tmp=ok; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status',
    ]);
    expect(probe.code).toBe(0);
    expect(probe.stdout.split('\n')).toEqual([
      'lo',
      '65534',
      'touch=1',
      'tmp=ok',
      'CapEff:\t0000000000000000',
      'CapBnd:\t0000000000000000',
      'NoNewPrivs:\t1',
      '',
    ]);
    // EROFS, not EACCES: uid 65534 may not write to / anyway, so only this text proves the read-only root.
    expect(probe.stderr).toBe('touch: /probe: Read-only file system\n');
  });
});

describe('slurm', () => {
  it('runs a job that writes a file; sacct reports it COMPLETED', async () => {
    const target = path.join(work, 'hello.txt');
    const id = await sbatch(`echo hello from slurm > ${target}`);
    expect(id).toMatch(/^\d+$/);
    expect(await finished(id)).toEqual({ state: 'COMPLETED', exit: '0:0' });
    expect(await readFile(target, 'utf8')).toBe('hello from slurm\n');
  });

  it('a job that exits 3 shows FAILED with exit code 3', async () => {
    const id = await sbatch('exit 3');
    expect(await finished(id)).toEqual({ state: 'FAILED', exit: '3:0' });
  });
});
