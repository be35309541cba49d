// The built-ins helix.slurm_job_get and helix.slurm_job_collect (MCP's slurm_job_get and
// slurm_job_collect) on the real cluster: a call waiting on a job reports progress and each state
// while it polls, cancelling the call cancels the job, and the built-in collect and the tool's
// own slurm.collect make the same artifacts once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import type { CallOptions } from '../host/index.js';
import { CALL_BOUND_MS, onJob, startSlurmHost, type SlurmHost } from './helpers/slurm-host.js';
import { JOB_BOUND_MS, SLURM_UP_BOUND_MS, slurmUp, waitForEnd, waitForJob } from './helpers/slurm-kit.js';

let h: SlurmHost;

beforeAll(async () => {
  await slurmUp();
  h = await startSlurmHost({ timeMinutes: 5, cpusPerTask: 1, memoryMiB: 256 });
}, SLURM_UP_BOUND_MS + 120_000);

afterAll(async () => {
  await h?.close();
});

async function builtin(name: string, input: Record<string, unknown>, options: CallOptions = {}): Promise<ResponseEnvelope> {
  return ResponseEnvelopeSchema.parse(await h.host.call({ tool_id: `helix.${name}`, input }, options));
}

describe('the slurm built-ins', () => {
  it(
    'waits for a job, reporting progress and each state as it polls, and answers its end',
    async () => {
      const jobId = await h.submitted({
        argv: ['/bin/sh', '-c', 'sleep 3; echo done > out/r.txt'],
        outputs: [{ name: 'r.txt' }],
        key: 'waited',
      });
      const progress: number[] = [];
      const states: string[] = [];
      const r = await builtin(
        'slurm_job_get',
        { job_id: jobId, wait: true, poll_ms: 250 },
        { onProgress: (p) => progress.push(p.elapsed_ms), onLog: (l) => states.push(String(l.fields.state)) },
      );
      expect(r).toMatchObject({ status: 'success', output: { job_id: jobId, tool_id: 's.granted', state: 'completed', terminal: true } });
      expect(progress.length).toBeGreaterThan(0);
      expect(states.at(-1)).toBe('completed');
      expect(states).toContain('running');
    },
    CALL_BOUND_MS,
  );

  it(
    'collects through the built-in and through the tool into the same artifacts, once',
    async () => {
      const jobId = await h.submitted({
        argv: ['/bin/sh', '-c', 'echo hello > out/r.txt'],
        outputs: [{ name: 'r.txt' }],
        key: 'collected',
      });
      await waitForEnd(jobId);
      const first = await builtin('slurm_job_collect', { job_id: jobId });
      expect(first).toMatchObject({
        status: 'success',
        output: { job_id: jobId, tool_id: 's.granted', outputs: [{ name: 'r.txt', artifact_id: expect.stringMatching(/^art_/), size: 6 }] },
      });
      const {
        answers: [viaTool],
      } = await h.answers('s.granted', [onJob('slurm.collect', jobId)], 'after the built-in');
      const { tool_id: _tool, ...collected } = first.output as Record<string, unknown>;
      expect(viaTool!.capability_result!.result).toEqual(collected);
      expect(
        (await h.host.artifacts.readBytes((collected.outputs as Array<{ artifact_id: string }>)[0]!.artifact_id, 100)).toString(),
      ).toBe('hello\n');
    },
    JOB_BOUND_MS,
  );

  it(
    'cancels the job when a waiting call is cancelled',
    async () => {
      const jobId = await h.submitted({ argv: ['/bin/sleep', '300'], key: 'abandoned' });
      await waitForJob(jobId, (s) => s.state.name === 'running', 'running');
      const caller = new AbortController();
      const r = await builtin(
        'slurm_job_get',
        { job_id: jobId, wait: true, poll_ms: 250 },
        { signal: caller.signal, onLog: () => caller.abort() },
      );
      expect(r).toMatchObject({ status: 'terminal_error', error: { code: 'R-TIMEOUT-CANCELLED' } });
      expect((await waitForEnd(jobId)).state.name).toBe('cancelled');
    },
    JOB_BOUND_MS,
  );

  it(
    'knows only jobs a tool of this store submitted',
    async () => {
      expect(await builtin('slurm_job_get', { job_id: '999999999' })).toMatchObject({
        status: 'terminal_error',
        error: { code: 'P-PRECOND-SLURM-JOB-UNKNOWN' },
      });
      expect(await builtin('slurm_job_collect', { job_id: '999999999' })).toMatchObject({
        status: 'terminal_error',
        error: { code: 'P-PRECOND-SLURM-JOB-UNKNOWN' },
      });
    },
    CALL_BOUND_MS,
  );
});
