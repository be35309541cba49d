// What the privileged checks share: image ids no engine has, the grants every tool gets, the
// checks' image once the Docker probe answered, a policy with grants and docker and slurm
// sections, the docker.run work root, the script guest's runs, and the codes its answers carry.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Host } from '../../../host/5-host/host.js';
import { CheckFailure, expect, type CheckContext, type CheckEnv, type PolicyDocument } from '../../check.js';
import { serviceState } from '../../outside-engines.js';
import { codesOf, countingDockerSocket, scriptPack, setEnv, type Answer } from '../../kit/priv-kit.js';
import { checkDefaultPolicy } from '../../runner.js';

/** An allowlisted image id no engine has. */
export const ABSENT = `sha256:${'e'.repeat(64)}`;
/** Another allowlisted image id no engine has. */
export const ABSENT2 = `sha256:${'d'.repeat(64)}`;
/** The grants every tool of the privileged checks gets. */
export const DEFAULT_GRANTS = ['clock.*', 'log.*', 'kv.*', 'artifact.*'];

/** The id of the checks' image, known once the docker probe answered (the runner awaits it before a check runs). */
let imageId = '';

/** The checks' image id as the Docker probe answered it (empty before the probe). */
export const currentImage = (): string => imageId;

/** The checks' image id, once the Docker probe answered; a CheckFailure when Docker is not usable. */
export async function image(): Promise<string> {
  const s = await serviceState('docker');
  if (!s.ok || s.imageId === undefined) throw new CheckFailure(`Docker is not usable: ${s.problem ?? 'no image id'}`);
  imageId = s.imageId;
  return imageId;
}

/** A policy: the check's default one with these grants, docker and slurm sections. */
export function policyWith(env: CheckEnv, extra: { grants?: Record<string, string[]>; docker?: unknown; slurm?: unknown }): PolicyDocument {
  const base = checkDefaultPolicy(env);
  return {
    ...base,
    grants: { '*': DEFAULT_GRANTS, ...extra.grants },
    ...(extra.docker === undefined ? {} : { docker: extra.docker }),
    ...(extra.slurm === undefined ? {} : { slurm: extra.slurm }),
  };
}

/** The work root of the check's docker.run workspaces, set in HELIX_DOCKER_WORK. */
export function dockerWork(ctx: CheckContext): string {
  const work = path.join(ctx.env.dir, 'docker-work');
  mkdirSync(work, { recursive: true });
  setEnv(ctx, 'HELIX_DOCKER_WORK', work);
  return work;
}

/** The script guest's run of `tool` making `calls` of `name`. */
export async function script(ctx: CheckContext, tool: string, name: string, calls: readonly unknown[], echo?: string) {
  // A fresh copy of each call: the host refuses a request in which one object appears twice (I-REQ-JSON-VALUE).
  const input = JSON.parse(
    JSON.stringify({ calls: calls.map((args) => ({ name, args })), ...(echo === undefined ? {} : { echo }) }),
  ) as Record<string, unknown>;
  return ctx.call(tool, input);
}

/** Checks each answer's code against `want`, in order; the answers. */
export function expectCodes(answers: readonly Answer[], want: readonly string[], what: string): void {
  const got = codesOf(answers);
  expect(
    JSON.stringify(got) === JSON.stringify(want),
    `${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)} (${answers
      .map((a) => a.error?.message ?? '')
      .filter((m) => m !== '')
      .join(' | ')
      .slice(0, 1500)})`,
  );
}

/** The policy of the docker.run refusal checks: docker.run granted to d.tool and d.noentry, images no engine has, low ceilings. */
export const dockerRefusalPolicy = (env: CheckEnv): PolicyDocument =>
  policyWith(env, {
    grants: { '*': [...DEFAULT_GRANTS, 'docker.*'], 'd.tool': ['docker.run'], 'd.noentry': ['docker.run'] },
    docker: {
      images: [ABSENT, ABSENT2],
      tools: { 'd.tool': { images: [ABSENT], env: ['ALLOWED'] }, 'd.wild': {} },
      ceilings: { memoryBytes: 64 * 1024 * 1024, pids: 16, timeoutMs: 10_000, maxStdoutBytes: 4096, maxWorkspaceInputBytes: 100 },
    },
  });

/** The script guests of the docker.run refusal checks. */
export const dockerRefusalPacks = () => [
  scriptPack('d.tool', ['docker.run']),
  scriptPack('d.noentry', ['docker.run']),
  scriptPack('d.wild', ['docker.run']),
];

/** Starts the check's host with DOCKER_HOST at a counting socket and its own work root; waits for the start's sweep. */
export async function refusalHost(ctx: CheckContext): Promise<{ host: Host; work: string; engineCalls: () => number }> {
  const socket = await countingDockerSocket(ctx);
  const work = dockerWork(ctx);
  const host = await ctx.host();
  await host.dockerSweep;
  const afterSweep = socket.connections();
  ctx.observe('engine_connections_at_start', afterSweep);
  return { host, work, engineCalls: () => socket.connections() - afterSweep };
}

/** Fails unless nothing reached the engine and no workspace was made. */
export function expectNothingRan(ctx: CheckContext, work: string, engineCalls: () => number): void {
  ctx.observe('engine_connections_during_calls', engineCalls());
  ctx.observe('workspaces_made', readdirSync(work).length);
  expect(engineCalls() === 0, `the refused calls reached the Docker engine ${engineCalls()} times`);
  expect(readdirSync(work).length === 0, `the refused calls left workspaces: ${readdirSync(work).join(', ')}`);
}

/** A shell command's argv in the checks' busybox image. */
export const sh = (command: string) => ['/bin/busybox', 'sh', '-c', command];

/** Makes a FIFO at `file`. */
export function execMkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}
