// What the fan-out checks share: the echo toolpacks of a job, the policy (and its file for the CLI),
// what the submitting store holds, the code a promise is refused with, a bundle written from the
// check's host (host.jobs), and a copy of one to damage.
import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isHelixError } from '../../../abi/index.js';
import type { Host } from '../../../host/5-host/host.js';
import type { CheckContext, CheckEnv, PolicyDocument } from '../../check.js';
import { echoModule } from '../../kit/guest-wat.js';
import { jobsDir, SLURM_CEILINGS } from './slurm-shared.js';
import { policyWith } from './shared.js';

/** The input schema of the echo toolpacks of a job: a FASTA artifact. */
export const FAN_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['sequences'],
  properties: { sequences: { type: 'string', 'x-helix-artifact': true }, label: { type: 'string' } },
};

/** The toolpacks of the fan-out checks: echoes, one the cluster may not run, one wanting a secret, one wanting what the policy does not grant. */
export const fanPacks = () => [
  { id: 'f.echo', module: echoModule(), inputSchema: FAN_INPUT },
  { id: 'f.noslurm', module: echoModule(), inputSchema: FAN_INPUT },
  {
    id: 'f.secret',
    module: echoModule(),
    inputSchema: FAN_INPUT,
    manifest: { capabilities: { abiVersion: 1, allow: ['secrets.get.db_password'] } },
  },
  {
    id: 'f.ungranted',
    module: echoModule(),
    inputSchema: FAN_INPUT,
    manifest: { capabilities: { abiVersion: 1, allow: ['http.request'], network: ['https://api.example.org:443'] } },
  },
];

/** The policy of the fan-out checks: f.secret granted its secret, a Slurm work root and f.echo allowed to run on the cluster. */
export function fanPolicy(env: CheckEnv): PolicyDocument {
  return policyWith(env, {
    grants: { 'f.secret': ['secrets.get.db_password'] },
    slurm: { partitions: ['debug'], workRoot: jobsDir(env), tools: { 'f.echo': {} }, ceilings: { ...SLURM_CEILINGS, arraySize: 2 } },
  });
}

/** The check's policy as a file the CLI reads. */
export function fanPolicyFile(env: CheckEnv): string {
  const file = path.join(env.dir, 'fanout-policy.json');
  writeFileSync(file, JSON.stringify(fanPolicy(env)));
  return file;
}

/** What the submitting store holds: a refused or repeated collect must leave it as it was. */
export function snapshot(host: Host, runId: string): string {
  return JSON.stringify({
    run: host.runs.get(runId) ?? null,
    artifacts: host.artifacts.list({ limit: 10_000 }).length,
    audit: host.audit.list().length,
  });
}

/** The code a promise is refused with, or `done`. */
export async function refusedWith(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'done',
    (e: unknown) => (isHelixError(e) ? e.code : `not a HelixError: ${e instanceof Error ? e.message : String(e)}`),
  );
}

/** A bundle of f.echo over a new artifact, written from the check's host. */
export async function bundle(
  ctx: CheckContext,
  name: string,
  text = '>a\nACGTACGT\n',
): Promise<{ host: Host; dir: string; runId: string; artifact: string }> {
  const host = await ctx.host();
  const artifact = (await host.artifacts.importInline(text, { label: name, type: 'fasta' })).id;
  const dir = path.join(ctx.env.dir, name);
  const job = await host.jobs.bundle({ tool_id: 'f.echo', input: { sequences: artifact } }, dir);
  return { host, dir, runId: job.run_id, artifact };
}

/** A copy of a bundle directory to damage. */
export function copyOf(ctx: CheckContext, dir: string, name: string): string {
  const copy = path.join(ctx.env.dir, name);
  cpSync(dir, copy, { recursive: true });
  return copy;
}
