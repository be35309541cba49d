// Privileged checks of Slurm jobs on the cluster: jobs submitted, watched and cancelled, adopted
// after a restart, hostile results refused when collected, and the built-in tools (ABI-SLURM-*).
import { findJobs, runSlurmCommand } from '../../../capabilities/slurm-commands.js';
import { canonicalJson } from '../../../host/1-base/hashing.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { answersOf, slurmShims, waitForJob, waitForJobEnd, type Answer } from '../../kit/priv-kit.js';
import { script } from './shared.js';
import { cancelAtEnd, firstJournalAnswer, realSlurmPolicy, slurmPacks, submit } from './slurm-shared.js';

/** The checks of this file, in the report's order. */
export const slurmJobChecks: readonly Check[] = [
  {
    id: 'privileged.slurm-jobs',
    title: "A job's states, its one submission per call, its collect, and another tool reaching for it, on the real cluster",
    category: 'privileged',
    abi: ['ABI-SLURM-004', 'ABI-SLURM-006', 'ABI-SLURM-008', 'ABI-SLURM-009', 'ABI-SLURM-010'],
    engines: ['container'],
    services: ['slurm'],
    expected:
      'a job named helix.<run>.k-<key> is submitted once (a replay answers the same job, Slurm knows one job of the name); its argv with shell syntax is written literally; states map running, cancelled, completed, failed (exit 7); collect of a running job is P-PRECOND-SLURM-JOB-ACTIVE; collect makes the declared output and logs once (a second collect: same ids); status, cancel and collect by another tool, and of an unknown id, are P-PRECOND-SLURM-JOB-UNKNOWN',
    policy: (_e, env) => realSlurmPolicy(env),
    packs: slurmPacks,
    async run(ctx) {
      const track = cancelAtEnd(ctx);
      const hostile = "it's $(id) `id` $HOME *";
      const body = {
        argv: ['/bin/sh', '-c', 'printf "%s\\n" "$1" > out/r.txt; echo to-stderr >&2', 'sh', hostile],
        outputs: [{ name: 'r.txt', type: 'text' }],
        key: 'lit',
      };
      const first = await script(ctx, 's.tool', 'slurm.submit', [body]);
      const [a] = answersOf(first);
      expect(
        a?.status === 'ok' &&
          a.capability_result!.result.source === 'submitted' &&
          a.capability_result!.result.job_name === `helix.${first.run_id}.k-lit`,
        `the submit: ${JSON.stringify(a)}`,
      );
      const jobA = track(a!.capability_result!.result.job_id as string);
      const again = await script(ctx, 's.tool', 'slurm.submit', [body]);
      expect(
        again.run_id === first.run_id && JSON.stringify(answersOf(again)[0]) === JSON.stringify(a),
        `the same call did not answer the same job: ${JSON.stringify(answersOf(again)[0])}`,
      );
      const busy = await script(ctx, 's.tool', 'slurm.submit', [submit({ argv: ['/bin/sleep', '300'], key: 'busy' })]);
      const jobB = track(answersOf(busy)[0]!.capability_result!.result.job_id as string);
      const fails = await script(ctx, 's.tool', 'slurm.submit', [submit({ argv: ['/bin/sh', '-c', 'exit 7'], key: 'fails' })]);
      const jobC = track(answersOf(fails)[0]!.capability_result!.result.job_id as string);
      const named = await findJobs({ name: `helix.${first.run_id}.k-lit` });
      expect(named.length === 1, `Slurm knows ${named.length} jobs named helix.${first.run_id}.k-lit`);

      let polls = 0;
      const ask = async (tool: string, name: string, jobId: string) =>
        answersOf(await script(ctx, tool, name, [{ job_id: jobId }], `poll ${++polls}`))[0]!;
      await waitForJob(jobB, (s) => s.state.name === 'running', 'running');
      const running = await ask('s.tool', 'slurm.status', jobB);
      expect(
        running.capability_result?.result.state === 'running' && running.capability_result.result.terminal === false,
        `a running job: ${JSON.stringify(running)}`,
      );
      const active = await ask('s.tool', 'slurm.collect', jobB);
      expect(active.error?.code === 'P-PRECOND-SLURM-JOB-ACTIVE', `collect of a running job: ${JSON.stringify(active)}`);
      const other = await Promise.all(['slurm.status', 'slurm.cancel', 'slurm.collect'].map((n) => ask('s.other', n, jobB)));
      expect(
        other.every((o) => o.error?.code === 'P-PRECOND-SLURM-JOB-UNKNOWN'),
        `another tool reached the job: ${JSON.stringify(other)}`,
      );
      const unknown = await ask('s.tool', 'slurm.status', '999999999');
      expect(unknown.error?.code === 'P-PRECOND-SLURM-JOB-UNKNOWN', `an unknown job id: ${JSON.stringify(unknown)}`);
      const cancelled = await ask('s.tool', 'slurm.cancel', jobB);
      expect(cancelled.status === 'ok', `cancel: ${JSON.stringify(cancelled)}`);
      for (const id of [jobA, jobB, jobC]) await waitForJobEnd(id);
      const states = await Promise.all([jobA, jobB, jobC].map((id) => ask('s.tool', 'slurm.status', id)));
      const summary = states.map((s) => s.capability_result?.result);
      ctx.observe('states', summary);
      expect(
        summary[0]?.state === 'completed' && summary[0].terminal === true && summary[0].exit_code === 0,
        `job A: ${JSON.stringify(summary[0])}`,
      );
      expect(summary[1]?.state === 'cancelled' && summary[1].terminal === true, `job B: ${JSON.stringify(summary[1])}`);
      expect(summary[2]?.state === 'failed' && summary[2].exit_code === 7, `job C: ${JSON.stringify(summary[2])}`);
      const c1 = await ask('s.tool', 'slurm.collect', jobA);
      const c2 = await ask('s.tool', 'slurm.collect', jobA);
      const r1 = c1.capability_result?.result;
      expect(
        r1 !== undefined && JSON.stringify(c2.capability_result?.result) === JSON.stringify(r1),
        `a second collect differs: ${JSON.stringify(c1)} / ${JSON.stringify(c2)}`,
      );
      const host = await ctx.host();
      const text = (await host.artifacts.readBytes(r1.outputs[0].artifact_id, 4096)).toString('utf8');
      expect(text === `${hostile}\n`, `the argv did not reach the job literally: ${JSON.stringify(text)}`);
      const stderr = (await host.artifacts.readBytes(r1.stderr.artifact_id, 4096)).toString('utf8');
      expect(stderr === 'to-stderr\n', `the job's stderr: ${JSON.stringify(stderr)}`);
      ctx.observe('collected', r1);
    },
  },
  {
    id: 'privileged.slurm-adoption',
    title: 'A run that died between sbatch and its checkpoint adopts the job Slurm already has instead of submitting again',
    category: 'privileged',
    abi: ['ABI-SLURM-008'],
    engines: ['container'],
    services: ['slurm'],
    expected:
      "a run whose submit failed is executed again; when Slurm then holds a job named helix.<run>.k-<key> (submitted outside the run, as a crash after sbatch leaves it) the submit answers source adopted with that job's id and submits nothing; the next execution of the run answers source checkpoint; Slurm knows exactly one job of the name",
    policy: (_e, env) => realSlurmPolicy(env),
    packs: slurmPacks,
    async run(ctx) {
      const track = cancelAtEnd(ctx);
      // The run fails after its submit (its guest makes calls past its limit), so each call executes it again.
      const input = { calls: [{ name: 'slurm.submit', args: { argv: ['/bin/sleep', '1'], key: 'adopt' } }], storm: 'log.emit' };
      const attempt = async (): Promise<{ runId: string; submit: Answer }> => {
        const r = await ctx.call('s.tool', JSON.parse(JSON.stringify(input)) as Record<string, unknown>);
        expect(r.status !== 'success' && r.error?.code === 'R-CAP-CALL-LIMIT', `the storming run ended ${r.status} ${r.error?.code}`);
        const host = await ctx.host();
        return { runId: r.run_id!, submit: firstJournalAnswer(host, r.run_id!) };
      };
      // First execution: sbatch fails (a shim), so the run has no job and no checkpoint.
      const saved = process.env.PATH;
      slurmShims(ctx, 1);
      const first = await attempt();
      process.env.PATH = saved;
      expect(first.submit.error?.code === 'R-UPSTREAM-SLURM', `the first submit: ${JSON.stringify(first.submit)}`);
      // The job a crash left: in Slurm under the run's job name, in no checkpoint.
      const name = `helix.${first.runId}.k-adopt`;
      const leftover = track(
        (
          await runSlurmCommand('sbatch', [
            '--parsable',
            `--job-name=${name}`,
            `--chdir=${ctx.env.dir}`,
            '--output=/dev/null',
            '--time=1',
            '--wrap',
            'sleep 1',
          ])
        )
          .trim()
          .split(';')[0]!,
      );
      const second = await attempt();
      expect(second.runId === first.runId, 'the second call is another run');
      const adopted = second.submit.capability_result?.result;
      expect(
        adopted?.source === 'adopted' && adopted.job_id === leftover && adopted.job_name === name,
        `the second submit: ${JSON.stringify(second.submit)}`,
      );
      const third = await attempt();
      const again = third.submit.capability_result?.result;
      expect(again?.source === 'checkpoint' && again.job_id === leftover, `the third submit: ${JSON.stringify(third.submit)}`);
      const named = await findJobs({ name });
      expect(
        named.length === 1 && named[0]!.jobId === leftover,
        `Slurm knows ${named.length} jobs named ${name}: ${JSON.stringify(named)}`,
      );
      ctx.observe('submits', [first.submit.error?.code, adopted?.source, again?.source]);
      ctx.observe('job', { name, job_id: leftover });
    },
  },
  {
    id: 'privileged.slurm-collect-hostile',
    title: 'A job swaps out/ for a link to /etc, leaves a symbolic link, a FIFO, an oversized output and a long log; collect refuses each',
    category: 'privileged',
    abi: ['ABI-SLURM-010'],
    engines: ['container'],
    services: ['slurm'],
    expected:
      'a link in out/ and an out/ swapped for a link are A-AUTH-SLURM-OUTPUT-PATH; a FIFO is A-AUTH-SLURM-OUTPUT-PATH (not a regular file) and collect does not block; an output over outputBytes is R-CAP-SLURM-OUTPUT-TOO-LARGE; a log over it is cut at outputBytes with truncated: true',
    policy: (_e, env) => realSlurmPolicy(env),
    packs: slurmPacks,
    async run(ctx) {
      const track = cancelAtEnd(ctx);
      const cases: Record<string, string> = {
        link: 'ln -s /etc/passwd out/r.txt',
        dir: 'rm -r out && ln -s /etc out',
        fifo: 'mkfifo out/r.txt',
        big: 'head -c 5000 /dev/zero > out/r.txt',
        log: 'head -c 5000 /dev/zero | tr "\\0" x',
      };
      const jobs: Record<string, string> = {};
      for (const [name, command] of Object.entries(cases)) {
        const r = await script(ctx, 's.tool', 'slurm.submit', [
          submit({ argv: ['/bin/sh', '-c', command], outputs: name === 'log' ? [] : [{ name: 'r.txt' }], key: name }),
        ]);
        jobs[name] = track(answersOf(r)[0]!.capability_result!.result.job_id as string);
      }
      for (const id of Object.values(jobs)) await waitForJobEnd(id);
      const got: Record<string, unknown> = {};
      const collect = async (name: string) => {
        const a = answersOf(await script(ctx, 's.tool', 'slurm.collect', [{ job_id: jobs[name]! }], `collect ${name}`))[0]!;
        got[name] = a.error ?? a.capability_result?.result;
        return a;
      };
      const link = await collect('link');
      expect(
        link.error?.code === 'A-AUTH-SLURM-OUTPUT-PATH' && link.error.details.problem === 'it is a symbolic link',
        `link: ${JSON.stringify(link)}`,
      );
      const dir = await collect('dir');
      expect(
        dir.error?.code === 'A-AUTH-SLURM-OUTPUT-PATH' && /out\/ is no longer/.test(dir.error.details.problem),
        `out/ swapped: ${JSON.stringify(dir)}`,
      );
      const fifo = await collect('fifo');
      expect(
        fifo.error?.code === 'A-AUTH-SLURM-OUTPUT-PATH' && /not a regular file/.test(fifo.error.details.problem),
        `FIFO: ${JSON.stringify(fifo)}`,
      );
      const big = await collect('big');
      expect(
        big.error?.code === 'R-CAP-SLURM-OUTPUT-TOO-LARGE' && big.error.details.size === 5000 && big.error.details.max_bytes === 4096,
        `oversized: ${JSON.stringify(big)}`,
      );
      const log = await collect('log');
      const res = log.capability_result?.result;
      expect(res?.stdout.size === 4096 && res.stdout.truncated === true, `a long log: ${JSON.stringify(log)}`);
      ctx.observe('collects', got);
    },
  },
  {
    id: 'privileged.slurm-builtins',
    title:
      "The built-ins slurm_job_get and slurm_job_collect reach a store tool's job for that tool, never a job Helix did not submit, and never replay",
    category: 'privileged',
    abi: ['ABI-SLURM-011'],
    engines: ['container'],
    services: ['slurm'],
    expected:
      "slurm_job_get answers the job's state with tool_id s.tool, each call a new run (replayed false); slurm_job_collect gives the same artifacts the tool's own slurm.collect gives; an unknown job id, and a job submitted outside Helix, are P-PRECOND-SLURM-JOB-UNKNOWN for both",
    policy: (_e, env) => realSlurmPolicy(env),
    packs: slurmPacks,
    async run(ctx) {
      const track = cancelAtEnd(ctx);
      const r = await script(ctx, 's.tool', 'slurm.submit', [
        submit({ argv: ['/bin/sh', '-c', 'echo hello > out/r.txt'], outputs: [{ name: 'r.txt' }], key: 'b' }),
      ]);
      const jobId = track(answersOf(r)[0]!.capability_result!.result.job_id as string);
      // A job of the same user, submitted outside Helix.
      const foreign = track(
        (await runSlurmCommand('sbatch', ['--parsable', `--chdir=${ctx.env.dir}`, '--output=/dev/null', '--time=1', '--wrap', 'true']))
          .trim()
          .split(';')[0]!,
      );
      await waitForJobEnd(jobId);
      const g1 = await ctx.call('helix.slurm_job_get', { job_id: jobId });
      const g2 = await ctx.call('helix.slurm_job_get', { job_id: jobId });
      const got = expectSuccess(g1);
      expectSuccess(g2);
      expect(got.tool_id === 's.tool' && got.state === 'completed' && got.terminal === true, `slurm_job_get: ${JSON.stringify(got)}`);
      expect(
        g1.replayed === false && g2.replayed === false && g1.run_id !== g2.run_id,
        `slurm_job_get replayed: ${g1.run_id} ${g1.replayed} / ${g2.run_id} ${g2.replayed}`,
      );
      const collected = expectSuccess(await ctx.call('helix.slurm_job_collect', { job_id: jobId }));
      const viaTool = answersOf(await script(ctx, 's.tool', 'slurm.collect', [{ job_id: jobId }], 'after the built-in'))[0]!
        .capability_result?.result;
      const { tool_id: _t, ...rest } = collected;
      expect(
        canonicalJson(viaTool) === canonicalJson(rest),
        `the built-in and the tool collected differently: ${JSON.stringify(collected)} / ${JSON.stringify(viaTool)}`,
      );
      for (const id of ['999999999', foreign]) {
        expectOutcome(await ctx.call('helix.slurm_job_get', { job_id: id }), 'terminal_error', 'P-PRECOND-SLURM-JOB-UNKNOWN');
        expectOutcome(await ctx.call('helix.slurm_job_collect', { job_id: id }), 'terminal_error', 'P-PRECOND-SLURM-JOB-UNKNOWN');
      }
      ctx.observe('job_get', got);
      ctx.observe('foreign_job', foreign);
    },
  },
];
