// The slurm capabilities reached the way a tool reaches them, on the real single-node cluster of
// scripts/services.sh: a real guest in a real worker asks the broker, which grants them only by
// exact name. A job runs with its input materialised, is collected twice into the same
// artifacts, is submitted once however often its run is replayed or re-executed, a job that a
// crash left without its checkpoint is adopted, and injection attempts are refused up front.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import type { SlurmCollectResult } from '../capabilities/slurm-jobs.js';
import type { SlurmSubmitResult } from '../capabilities/slurm-submit.js';
import { importInline } from '../host/4-calls/artifacts/index.js';
import { hostStore } from '../host/5-host/host.js';
import { readJournal } from '../host/3-store/journal.js';
import { rawDatabases } from '../host/3-store/raw-access.js';
import { CALL_BOUND_MS, onJob as on, startSlurmHost, submit, type Answer, type SlurmHost } from './helpers/slurm-host.js';
import { JOB_BOUND_MS, jobsNamed, SLURM_UP_BOUND_MS, slurmUp, waitForEnd } from './helpers/slurm-kit.js';

let h: SlurmHost;
let work: string;

beforeAll(async () => {
  await slurmUp();
  h = await startSlurmHost({ timeMinutes: 5, cpusPerTask: 1, memoryMiB: 256, outputBytes: 4096 });
  work = h.work;
}, SLURM_UP_BOUND_MS + 120_000);

afterAll(async () => {
  await h?.close();
});

const call = (tool: string, calls: Parameters<SlurmHost['call']>[1]) => h.call(tool, calls);
const answers = (tool: string, calls: Parameters<SlurmHost['call']>[1], echo?: string) => h.answers(tool, calls, echo);

describe('the slurm capabilities through the broker', () => {
  let jobId: string;
  const collected: Answer[] = [];

  it(
    'submits a job with its input materialised under in/, and reports it through status once it ended',
    async () => {
      const reads = await importInline(hostStore(h.host), '>a\nACGT\n>b\nGG\n');
      const argv = ['/bin/sh', '-c', 'grep -c ">" in/reads.fa > out/count.txt; echo "ran in $PWD"; echo to-stderr >&2'];
      const {
        runId,
        answers: [a],
      } = await answers('s.granted', [
        submit({ argv, inputs: [{ artifact_id: reads.id, name: 'reads.fa' }], outputs: [{ name: 'count.txt', type: 'text' }] }),
      ]);
      expect(a).toMatchObject({ status: 'ok', capability_result: { result: { source: 'submitted', job_name: `helix.${runId}.c1` } } });
      jobId = (a!.capability_result!.result as SlurmSubmitResult).job_id;
      await waitForEnd(jobId);
      const {
        answers: [s],
      } = await answers('s.granted', [on('slurm.status', jobId)], 'after the end');
      expect(s).toMatchObject({
        status: 'ok',
        capability_result: { result: { job_id: jobId, state: 'completed', terminal: true, slurm_state: 'COMPLETED', exit_code: 0 } },
      });
      expect((await readdir(path.join(work, `${runId}.c1`))).sort()).toEqual(['in', 'meta', 'out']);
    },
    JOB_BOUND_MS,
  );

  it(
    'collects the declared output and both logs as artifacts, and a second collect answers with the same ones',
    async () => {
      for (const echo of ['first collect', 'second collect'])
        collected.push((await answers('s.granted', [on('slurm.collect', jobId)], echo)).answers[0]!);
      const [first, second] = collected.map((c) => c.capability_result?.result) as [SlurmCollectResult, SlurmCollectResult];
      expect(first).toMatchObject({
        job_id: jobId,
        state: 'completed',
        exit_code: 0,
        outputs: [{ name: 'count.txt', artifact_id: expect.stringMatching(/^art_/), size: 2, truncated: false }],
      });
      expect(second).toEqual(first);
      const text = async (id: string) => (await h.host.artifacts.readBytes(id, 4096)).toString('utf8');
      expect(await text(first.outputs[0]!.artifact_id!)).toBe('2\n');
      expect(await text(first.stdout.artifact_id!)).toMatch(/^ran in \/.+\.c1\n$/);
      expect(await text(first.stderr.artifact_id!)).toBe('to-stderr\n');
      expect(h.host.artifacts.get(first.outputs[0]!.artifact_id!)).toMatchObject({
        type: 'text',
        source: { kind: 'import', path: expect.stringMatching(/\.c1\/out\/count\.txt$/) },
      });
    },
    CALL_BOUND_MS,
  );

  it(
    'submits once: a replayed run answers from its record, a verification from its journal, and sacct counts one job of the name',
    async () => {
      const calls = [submit({ argv: ['/bin/true'], key: 'replayed' })];
      const first = await call('s.granted', calls);
      const again = await call('s.granted', calls);
      expect(again.run_id).toBe(first.run_id);
      expect((again.output as { answers: Answer[] }).answers[0]).toEqual((first.output as { answers: Answer[] }).answers[0]);
      const jobId = (first.output as { answers: Answer[] }).answers[0]!.capability_result!.result.job_id as string;
      await waitForEnd(jobId);
      // Verification re-executes the guest against the journal: the same answer, and still no second job.
      const verified = ResponseEnvelopeSchema.parse(await h.host.call({ tool_id: 'helix.run_verify', input: { run_id: first.run_id } }));
      expect(verified).toMatchObject({ status: 'success', output: { run_id: first.run_id, match: true } });
      expect(await jobsNamed(`helix.${first.run_id}.k-replayed`)).toBe(1);
    },
    JOB_BOUND_MS,
  );

  it(
    're-executes a failed run without submitting again (checkpoint), and adopts the job a crash left without checkpoint',
    async () => {
      // The run fails after its submit (its guest makes calls past its limit), so a second call executes it again.
      const failing = { calls: [submit({ argv: ['/bin/sleep', '1'] })], storm: 'log.emit' };
      const attempt = async (): Promise<{ runId: string; result: SlurmSubmitResult }> => {
        const r = ResponseEnvelopeSchema.parse(await h.host.call({ tool_id: 's.granted', input: failing }));
        expect(r).toMatchObject({ status: 'terminal_error', error: { code: 'R-CAP-CALL-LIMIT' } });
        return { runId: r.run_id!, result: readJournal(hostStore(h.host), r.run_id!)[0]!.result as SlurmSubmitResult };
      };
      const one = await attempt();
      expect(one.result).toMatchObject({ source: 'submitted' });
      const two = await attempt();
      expect(two).toEqual({ runId: one.runId, result: { ...one.result, source: 'checkpoint' } });
      // A crash between sbatch and the checkpoint: the job is in Slurm, the store has no record of it.
      const db = rawDatabases(hostStore(h.host)).checkpoints;
      await db.remove(['s.granted', `slurm.call/${one.runId}/c1`]);
      await db.remove(['s.granted', `slurm.job/${one.result.job_id}`]);
      const three = await attempt();
      expect(three).toEqual({ runId: one.runId, result: { ...one.result, source: 'adopted' } });
      expect(await jobsNamed(one.result.job_name)).toBe(1);
      // Adopted, the job is this tool's again.
      const {
        answers: [s],
      } = await answers('s.granted', [on('slurm.status', one.result.job_id)], 'adopted status');
      expect(s).toMatchObject({ status: 'ok', capability_result: { result: { job_id: one.result.job_id } } });
    },
    JOB_BOUND_MS,
  );

  it(
    'refuses injection attempts, names and limits outside the policy, and file name collisions before anything runs',
    async () => {
      const before = (await readdir(work)).length;
      const { runId, answers: got } = await answers('s.granted', [
        submit({ argv: ['/bin/true'], key: 'x', partition: 'debug\n#SBATCH --uid=0' }),
        submit({ argv: ['/bin/true'], partition: 'gpu' }),
        submit({ argv: ['/bin/true'], account: 'root' }),
        submit({ argv: ['/bin/true'], qos: 'high' }),
        submit({ argv: ['/bin/true'], limits: { time_minutes: 6 } }),
        submit({ argv: ['/bin/true'], limits: { memory_mib: 257 } }),
        submit({ argv: ['/bin/true'], limits: { cpus_per_task: 2 } }),
        submit({ argv: ['/bin/echo', 'a\n#SBATCH --partition=gpu'] }),
        submit({ argv: ['/bin/true'], inputs: [{ artifact_id: 'art_00000000000000000000000000', name: '../escape' }] }),
        submit({ argv: ['/bin/true'], outputs: [{ name: 'same' }, { name: 'same' }] }),
        submit({ argv: ['/bin/true'], script: '#!/bin/sh\n#SBATCH --uid=0\n' }),
      ]);
      expect(got.map((a) => a.error?.code)).toEqual([
        'I-REQ-SLURM-VALUE',
        'A-AUTH-SLURM-PARTITION',
        'A-AUTH-SLURM-ACCOUNT',
        'A-AUTH-SLURM-QOS',
        'A-AUTH-SLURM-LIMIT',
        'A-AUTH-SLURM-LIMIT',
        'A-AUTH-SLURM-LIMIT',
        'I-REQ-SLURM-VALUE',
        'I-REQ-SLURM-FILE-NAME',
        'I-REQ-SLURM-FILE-NAME',
        'I-REQ-CAPABILITY-ARGS',
      ]);
      expect(got[0]!.error!.details).toMatchObject({ field: 'partition', problem: 'it contains a line break' });
      expect(got[4]!.error!.details).toMatchObject({ field: 'timeMinutes', asked: 6, ceiling: 5 });
      expect((await readdir(work)).length).toBe(before);
      for (const key of ['x', undefined]) expect(await jobsNamed(`helix.${runId}.${key === undefined ? 'c1' : `k-${key}`}`)).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    "refuses another tool's job and a tool only a wildcard grant covers",
    async () => {
      const { answers: got } = await answers('s.other', [on('slurm.status', jobId), on('slurm.cancel', jobId), on('slurm.collect', jobId)]);
      for (const a of got)
        expect(a).toMatchObject({
          status: 'error',
          error: { code: 'P-PRECOND-SLURM-JOB-UNKNOWN', details: { job_id: jobId, tool: 's.other' } },
        });
      const r = await call('s.wildcard', [on('slurm.status', jobId)]);
      expect(r).toMatchObject({ status: 'terminal_error', error: { code: 'A-AUTH-CAPABILITY-NOT-GRANTED' } });
    },
    CALL_BOUND_MS,
  );

  it(
    'refuses to collect a symbolic link, an out/ swapped for a link, a running job and an output over the cap; cuts a log at the cap',
    async () => {
      const jobs: Record<string, string> = {};
      const cases: Record<string, string> = {
        link: 'ln -s /etc/passwd out/r.txt',
        dir: 'rm -r out && ln -s /etc out',
        big: 'head -c 5000 /dev/zero > out/r.txt',
        log: 'head -c 5000 /dev/zero | tr "\\0" x',
      };
      for (const [name, sh] of Object.entries(cases)) {
        const {
          answers: [a],
        } = await answers('s.granted', [
          submit({ argv: ['/bin/sh', '-c', sh], outputs: name === 'log' ? [] : [{ name: 'r.txt' }], key: name }),
        ]);
        jobs[name] = (a!.capability_result!.result as SlurmSubmitResult).job_id;
      }
      const {
        answers: [busy],
      } = await answers('s.granted', [submit({ argv: ['/bin/sleep', '300'], key: 'busy' })]);
      const busyId = busy!.capability_result!.result.job_id as string;
      const {
        answers: [active],
      } = await answers('s.granted', [on('slurm.collect', busyId)], 'collect too soon');
      expect(active).toMatchObject({ status: 'error', error: { code: 'P-PRECOND-SLURM-JOB-ACTIVE' } });
      const {
        answers: [cancelled],
      } = await answers('s.granted', [on('slurm.cancel', busyId)], 'cancel');
      expect(cancelled).toMatchObject({ status: 'ok', capability_result: { result: { job_id: busyId } } });
      for (const id of Object.values(jobs)) await waitForEnd(id);
      expect((await waitForEnd(busyId)).state.name).toBe('cancelled');
      const collect = async (name: string) =>
        (await answers('s.granted', [on('slurm.collect', jobs[name]!)], `collect ${name}`)).answers[0]!;
      expect(await collect('link')).toMatchObject({
        status: 'error',
        error: { code: 'A-AUTH-SLURM-OUTPUT-PATH', details: { problem: 'it is a symbolic link' } },
      });
      expect(await collect('dir')).toMatchObject({
        status: 'error',
        error: { code: 'A-AUTH-SLURM-OUTPUT-PATH', details: { problem: "out/ is no longer the job's own directory" } },
      });
      expect(await collect('big')).toMatchObject({
        status: 'error',
        error: { code: 'R-CAP-SLURM-OUTPUT-TOO-LARGE', details: { size: 5000, max_bytes: 4096 } },
      });
      expect(await collect('log')).toMatchObject({
        status: 'ok',
        capability_result: { result: { stdout: { size: 4096, truncated: true }, stderr: { size: 0, truncated: false } } },
      });
    },
    JOB_BOUND_MS * 2,
  );
});
