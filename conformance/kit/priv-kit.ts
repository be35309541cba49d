// Shared helpers of the privileged checks (Docker, Slurm, container toolpacks, fan-out): the
// script guest's toolpacks and answers, environment variables set for one check, a unix socket
// standing in for the Docker engine that counts who knew to call it, shims on PATH standing in
// for Slurm's commands that record every invocation, container toolpacks written beside the
// check's packs, the Helix CLI as a child process, and bounded waits on the real engines.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import Docker from 'dockerode';
import type { ResponseEnvelope } from '../../abi/index.js';
import { LABEL_RUN } from '../../capabilities/docker-container.js';
import { jobStatus, type SlurmJobStatus } from '../../capabilities/slurm-commands.js';
import { packageRoot } from '../../host/1-base/paths.js';
import { CheckFailure, type CheckContext, type PackSpec } from '../check.js';
import { DEFAULT_LIMITS } from './toolpack.js';

/** Limits of the script guest's toolpacks: room for many capability calls and their answers. */
export const SCRIPT_LIMITS = {
  ...DEFAULT_LIMITS,
  maxInputBytes: 200_000,
  maxOutputBytes: 2_000_000,
  fuel: 5e9,
  maxMemoryPages: 1024,
  maxCapabilityCalls: 100,
};

/** A toolpack of the script guest (conformance/assembly/script.ts) allowed `allow`. */
export function scriptPack(id: string, allow: readonly string[], manifest: Record<string, unknown> = {}): PackSpec {
  return {
    id,
    guest: 'script.ts',
    module: '',
    manifest: {
      timeoutMs: 120_000,
      limits: SCRIPT_LIMITS,
      deterministic: 'side_effectful',
      capabilities: { abiVersion: 1, allow: [...allow] },
      ...manifest,
    },
  };
}

/** A capability answer as script.ts hands it back. */
export interface Answer {
  status: 'ok' | 'error';
  // biome-ignore lint/suspicious/noExplicitAny: a capability's result is whatever that capability answers
  capability_result?: { name: string; result: any };
  // biome-ignore lint/suspicious/noExplicitAny: error details differ by code
  error?: { code: string; message: string; details: any };
}

/** The answers of a script guest's run that must have succeeded. */
export function answersOf(r: ResponseEnvelope): Answer[] {
  if (r.status !== 'success')
    throw new CheckFailure(`the script guest's run did not succeed: ${r.status} ${r.error?.code ?? ''} ${r.error?.message ?? ''}`);
  return (r.output as { answers: Answer[] }).answers;
}

/** The error code of each answer (or ok). */
export const codesOf = (answers: readonly Answer[]): string[] => answers.map((a) => a.error?.code ?? 'ok');

/** Sets an environment variable for the rest of the check; restored when it ends. */
export function setEnv(ctx: CheckContext, name: string, value: string): void {
  const saved = process.env[name];
  process.env[name] = value;
  ctx.defer(() => {
    if (saved === undefined) delete process.env[name];
    else process.env[name] = saved;
  });
}

/** A unix socket at DOCKER_HOST for the rest of the check: it counts connections and hangs up on each. */
export async function countingDockerSocket(ctx: CheckContext): Promise<{ connections: () => number }> {
  const dir = path.join(ctx.env.dir, 'sock');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'docker.sock');
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(file, resolve));
  ctx.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  setEnv(ctx, 'DOCKER_HOST', `unix://${file}`);
  return { connections: () => count };
}

/**
 * Shims for sbatch, squeue, sacct and scancel first on PATH for the rest of the check: each
 * records its arguments and stdin in a log; sbatch `sbatchExit` (stderr a line), the others answer
 * nothing (no job known).
 */
export function slurmShims(ctx: CheckContext, sbatchExit = 1): { calls: () => Array<{ command: string; args: string; stdin: string }> } {
  const dir = path.join(ctx.env.dir, 'slurm-shims');
  mkdirSync(dir, { recursive: true });
  const log = path.join(dir, 'calls.log');
  for (const command of ['sbatch', 'squeue', 'sacct', 'scancel']) {
    const exit = command === 'sbatch' ? sbatchExit : 0;
    const file = path.join(dir, command);
    writeFileSync(
      file,
      [
        '#!/bin/sh',
        `stdin=$(cat | base64 -w0)`,
        `printf '%s\\t%s\\t%s\\n' ${command} "$*" "$stdin" >> '${log}'`,
        command === 'sbatch' ? `echo 'sbatch: error: the conformance shim refuses every job' >&2` : '',
        `exit ${exit}`,
        '',
      ].join('\n'),
    );
    chmodSync(file, 0o755);
  }
  setEnv(ctx, 'PATH', `${dir}:${process.env.PATH ?? ''}`);
  return {
    calls: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => {
              const [command, args, stdin] = l.split('\t');
              return { command: command!, args: args ?? '', stdin: Buffer.from(stdin ?? '', 'base64').toString('utf8') };
            })
        : [],
  };
}

/** Writes a container toolpack `id` into the check's toolpacks directory (call before the host starts). */
export async function writeContainerPack(
  ctx: CheckContext,
  id: string,
  manifest: Record<string, unknown>,
  inputSchema: unknown = { type: 'object' },
): Promise<Record<string, unknown>> {
  const dir = path.join(await ctx.toolpacksDir(), `container-${id}`);
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(packageRoot(), 'plugins', 'seqkit-stats', 'schemas'), path.join(dir, 'schemas'), { recursive: true });
  const full = {
    kind: 'container',
    id,
    version: '1.0.0',
    contractVersion: 'v1',
    description: `conformance container tool ${id}`,
    image: 'helix-seqkit:local',
    deterministic: 'pure',
    timeoutMs: 60_000,
    limits: { maxInputBytes: 4096, maxOutputBytes: 65536 },
    inputSchema,
    outputSchema: { type: 'object' },
    ...manifest,
  };
  writeFileSync(path.join(dir, `${id.replace(/\./g, '_')}.tool.yaml`), JSON.stringify(full, null, 2));
  ctx.show({ label: `${id} (container manifest)`, lang: 'json', text: JSON.stringify(full, null, 2) });
  return full;
}

/** What a run of the Helix CLI printed and how it ended. */
export interface CliRun {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node dist/cli/main.js ...args` from the package root; killed after `boundMs`. */
export function helixCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; boundMs?: number; cwd?: string } = {},
): Promise<CliRun> {
  const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
  const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd ?? packageRoot(), env: options.env ?? process.env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.boundMs ?? 60_000);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? 'unknown', stdout, stderr });
    }),
  );
}

/** The containers of run `runId` the engine still has. */
export async function containersLeft(runId: string): Promise<number> {
  return (await new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).length;
}

/** The moment to count a run's containers from (seconds, fractional). */
export const eventsSince = (): number => (Date.now() - 50) / 1000;

/** How many containers the engine created for `runId` since `since`, from its event log. */
export async function containersCreated(runId: string, since: number): Promise<number> {
  const until = Math.floor(Date.now() / 1000) + 1;
  const stream = (await new Docker().getEvents({
    since,
    until,
    filters: { type: ['container'], event: ['create'], label: [`${LABEL_RUN}=${runId}`] },
  })) as unknown as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text.split('\n').filter((l) => l.trim() !== '').length;
}

/** Polls job `jobId` until it has ended and accounting has its exit code, at most `boundMs`. */
export async function waitForJobEnd(jobId: string, boundMs = 90_000): Promise<SlurmJobStatus> {
  const bound = Date.now() + boundMs;
  for (;;) {
    const status = await jobStatus(jobId);
    if (status?.state.terminal && status.tasks.every((t) => t.exitCode !== null)) return status;
    if (Date.now() > bound) throw new CheckFailure(`Slurm job ${jobId} did not end within ${boundMs / 1000} s: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Polls job `jobId` until `done` holds, at most `boundMs`. */
export async function waitForJob(
  jobId: string,
  done: (s: SlurmJobStatus) => boolean,
  what: string,
  boundMs = 90_000,
): Promise<SlurmJobStatus> {
  const bound = Date.now() + boundMs;
  for (;;) {
    const status = await jobStatus(jobId);
    if (status !== undefined && done(status)) return status;
    if (Date.now() > bound)
      throw new CheckFailure(`Slurm job ${jobId} did not reach ${what} within ${boundMs / 1000} s: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
