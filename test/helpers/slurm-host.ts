// A real host whose script guest (conformance/assembly/script.ts) reaches the slurm capabilities:
// tools s.granted and s.other granted them by exact name, s.wildcard only by a wildcard, a policy
// whose slurm section allows the debug partition and the normal QOS under a fresh work root.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { ResponseEnvelopeSchema, type PolicySlurmCeilings, type ResponseEnvelope } from '../../abi/index.js';
import { runSlurmCommand } from '../../capabilities/slurm-commands.js';
import { createHost, type Host } from '../../host/index.js';
import { compileGuest } from './as-guest.js';
import type { Answer } from './secret-kit.js';
import { toolpacksDir, tempDir } from './toolpack.js';

/** Most a call of the script guest waits (sbatch, squeue, sacct answer in well under a second when idle). */
export const CALL_BOUND_MS = 120_000;
const SLURM = ['slurm.submit', 'slurm.status', 'slurm.cancel', 'slurm.collect'];

export type { Answer } from './secret-kit.js';

/** A capability call of the script guest. */
export interface GuestCall {
  readonly name: string;
  readonly args: unknown;
}

/** The host, its work root, and the script guest's calls; closing it cancels every job its calls submitted. */
export interface SlurmHost {
  readonly host: Host;
  readonly work: string;
  /** One call of `tool` making `calls`; `extra` joins the input (`echo` makes it, and so the run, new). */
  call(tool: string, calls: readonly GuestCall[], extra?: Record<string, unknown>): Promise<ResponseEnvelope>;
  /** The same, which must succeed: its run id and the capability answers. */
  answers(tool: string, calls: readonly GuestCall[], echo?: string): Promise<{ runId: string; answers: Answer[] }>;
  /** slurm.submit by s.granted, which must succeed: the job's id. */
  submitted(args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** Starts the host with the slurm section's `ceilings`. */
export async function startSlurmHost(ceilings: Partial<PolicySlurmCeilings>): Promise<SlurmHost> {
  const home = tempDir('helix-home-');
  const work = realpathSync(mkdtempSync(path.join(tmpdir(), 'helix-slurm-jobs-')));
  const script = await compileGuest('script.ts');
  const limits = { maxInputBytes: 100_000, maxOutputBytes: 1_000_000, fuel: 5e9, maxMemoryPages: 1024, maxCapabilityCalls: 50 };
  const manifest = {
    timeoutMs: CALL_BOUND_MS,
    limits,
    deterministic: 'side_effectful',
    capabilities: { abiVersion: 1, allow: [...SLURM, 'log.emit'] },
  };
  const plugins = await toolpacksDir(['s.granted', 's.other', 's.wildcard'].map((id) => ({ id, module: script, manifest })));
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  const policy = {
    version: 1,
    tools: { allow: ['*'] },
    grants: { '*': ['slurm.*', 'log.*'], 's.granted': SLURM, 's.other': SLURM },
    slurm: {
      partitions: ['debug'],
      qos: ['normal'],
      workRoot: work,
      tools: { 's.granted': {}, 's.other': {}, 's.wildcard': {} },
      ceilings,
    },
  };
  writeFileSync(policyFile, JSON.stringify(policy));
  const host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
  // Every job a call submitted, cancelled at close whatever happened: a failed test must not hold the node.
  const jobs = new Set<string>();
  const call = async (tool: string, calls: readonly GuestCall[], extra: Record<string, unknown> = {}): Promise<ResponseEnvelope> => {
    const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: tool, input: { calls, ...extra } }));
    for (const a of (r.output as { answers?: Answer[] } | undefined)?.answers ?? []) {
      if (a.capability_result?.name === 'slurm.submit') jobs.add(a.capability_result.result.job_id as string);
    }
    return r;
  };
  const answers = async (tool: string, calls: readonly GuestCall[], echo?: string): Promise<{ runId: string; answers: Answer[] }> => {
    const r = await call(tool, calls, echo === undefined ? {} : { echo });
    expect(r.status).toBe('success');
    return { runId: r.run_id!, answers: (r.output as { answers: Answer[] }).answers };
  };
  return {
    host,
    work,
    call,
    answers,
    async submitted(args) {
      const {
        answers: [a],
      } = await answers('s.granted', [submit(args)]);
      expect(a).toMatchObject({ status: 'ok' });
      return a!.capability_result!.result.job_id as string;
    },
    async close() {
      if (jobs.size > 0) await runSlurmCommand('scancel', [...jobs]);
      await host.close();
      plugins.cleanup();
      home.cleanup();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** A `slurm.submit` call. */
export const submit = (args: Record<string, unknown>): GuestCall => ({ name: 'slurm.submit', args });
/** A call of `name` (status, cancel, collect) on job `jobId`. */
export const onJob = (name: string, jobId: string): GuestCall => ({ name, args: { job_id: jobId } });
