// Privileged checks of tampered fan-out bundles and job arrays: a tampered job refused before it
// runs, a tampered result refused by collect with the store unchanged, and job arrays refused or
// run on Slurm (ABI-FANOUT-005..008).
import { cpSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { runSlurmCommand } from '../../../capabilities/slurm-commands.js';
import { expect, type Check } from '../../check.js';
import { echoModule } from '../../kit/guest-wat.js';
import { helixCli, slurmShims, waitForJob } from '../../kit/priv-kit.js';
import { digestOf } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';
import { jobsDir } from './slurm-shared.js';
import { bundle, copyOf, fanPacks, fanPolicy, fanPolicyFile, refusedWith, snapshot } from './fanout-shared.js';

/** The checks of this file, in the report's order. */
export const fanoutTamperingChecks: readonly Check[] = [
  {
    id: 'privileged.fanout-tampered-job',
    title:
      'A node refuses a job bundle whose params, policy or input bytes were changed, whose run id was forged, or whose toolpack is another build',
    category: 'privileged',
    abi: ['ABI-FANOUT-004', 'ABI-FANOUT-006'],
    engines: ['helix'],
    expected:
      'params.json, policy.json or an input blob changed is D-DATA-BUNDLE-HASH; a forged run id, or the toolpacks dir holding another module build, is C-CONTRACT-JOB-TOOL; each exits 1 and writes a result holding the refusal and no run; collecting it reports refused and writes nothing',
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const { host, dir, runId } = await bundle(ctx, 'bundle');
      const job = JSON.parse(readFileSync(path.join(dir, 'job.json'), 'utf8')) as {
        run_id: string;
        plugins_dir: string;
        inputs: Array<{ sha256: string }>;
      };
      // Another build of f.echo: the same manifest but for its module and digest.
      const otherPlugins = path.join(ctx.env.dir, 'other-plugins');
      cpSync(job.plugins_dir, otherPlugins, { recursive: true });
      const bytes = await wat2wasm(echoModule('(func $another_build)'), 'f.echo-other.wat');
      writeFileSync(path.join(otherPlugins, 'f.echo', 'tool.wasm'), bytes);
      const manifestFile = path.join(otherPlugins, 'f.echo', 'f_echo.tool.yaml');
      const manifest = parseYaml(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
      writeFileSync(manifestFile, stringifyYaml({ ...manifest, digest: digestOf(bytes) }));
      const editJob = (d: string, change: Record<string, unknown>) =>
        writeFileSync(
          path.join(d, 'job.json'),
          JSON.stringify({ ...JSON.parse(readFileSync(path.join(d, 'job.json'), 'utf8')), ...change }),
        );
      const cases: Array<[string, (d: string) => void, string]> = [
        [
          'params',
          (d) =>
            writeFileSync(path.join(d, 'params.json'), readFileSync(path.join(d, 'params.json'), 'utf8').replace('{', '{"label":"x",')),
          'D-DATA-BUNDLE-HASH',
        ],
        [
          'policy',
          (d) =>
            writeFileSync(
              path.join(d, 'policy.json'),
              JSON.stringify({
                ...JSON.parse(readFileSync(path.join(d, 'policy.json'), 'utf8')),
                grants: { '*': ['secrets.*', 'http.*'] },
              }),
            ),
          'D-DATA-BUNDLE-HASH',
        ],
        [
          'input',
          (d) => writeFileSync(path.join(d, 'blobs', job.inputs[0]!.sha256.replace(/^sha256:/, '')), '>evil\nTTTT\n'),
          'D-DATA-BUNDLE-HASH',
        ],
        ['run-id', (d) => editJob(d, { run_id: `run_${'1'.repeat(32)}` }), 'C-CONTRACT-JOB-TOOL'],
        ['module', (d) => editJob(d, { plugins_dir: otherPlugins }), 'C-CONTRACT-JOB-TOOL'],
      ];
      const before = snapshot(host, runId);
      const seen: Record<string, string> = {};
      for (const [name, damage, code] of cases) {
        const copy = copyOf(ctx, dir, `job-${name}`);
        damage(copy);
        const run = await helixCli(['job', 'run', copy]);
        seen[name] = `exit ${run.code}: ${run.stderr.split('\n')[0]!.slice(0, 300)}`;
        expect(
          run.code === 1 && run.stderr.includes(code),
          `${name}: expected exit 1 with ${code}, got exit ${run.code}: ${run.stderr.slice(0, 500)}`,
        );
        const resultFile = path.join(copy, 'result', 'result.json');
        expect(existsSync(resultFile), `${name}: no result bundle holds the refusal`);
        const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { run: unknown; journal: unknown[] };
        expect(result.run === null && result.journal.length === 0, `${name}: the refused job has a run in its result`);
        const collected = await host.jobs.collect(copy);
        expect(
          collected.outcome === 'refused' && collected.response?.error?.code === code,
          `${name}: collect answered ${JSON.stringify(collected).slice(0, 300)}`,
        );
        expect(snapshot(host, runId) === before, `${name}: collecting the refusal wrote to the store`);
      }
      ctx.observe('refusals', seen);
    },
  },
  {
    id: 'privileged.fanout-tampered-result',
    title:
      'helix job collect refuses a result bundle with changed blobs, another identity, a missing or linked blob, a partial result.json, or none, and writes nothing',
    category: 'privileged',
    abi: ['ABI-FANOUT-005', 'ABI-FANOUT-006'],
    engines: ['helix'],
    expected:
      'a changed blob is D-DATA-BUNDLE-HASH, a blob that is a symbolic link D-DATA-BUNDLE-HASH or I-REQ-JOB-BUNDLE (not a regular file); another params hash or tool is D-DATA-BUNDLE-IDENTITY; a missing blob or a cut result.json is I-REQ-JOB-BUNDLE; no result is P-PRECOND-JOB-RESULT-MISSING; the store is unchanged by each; the genuine result is imported (events end with collected), a second collect is unchanged, and a local call replays it',
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const { host, dir, runId, artifact } = await bundle(ctx, 'bundle');
      const ran = await helixCli(['job', 'run', dir]);
      expect(ran.code === 0, `the genuine job did not run: exit ${ran.code}: ${ran.stderr.slice(0, 400)}`);
      const resultFile = (d: string) => path.join(d, 'result', 'result.json');
      const result = JSON.parse(readFileSync(resultFile(dir), 'utf8')) as { run: Record<string, unknown> & { input_sha256: string } };
      const inputBlob = (d: string) => path.join(d, 'result', 'blobs', result.run.input_sha256.replace(/^sha256:/, ''));
      const editRun = (d: string, change: Record<string, unknown>) =>
        writeFileSync(resultFile(d), JSON.stringify({ ...result, run: { ...result.run, ...change } }));
      const cases: Array<[string, (d: string) => void, string]> = [
        ['blob-bytes', (d) => writeFileSync(inputBlob(d), '{"sequences":"art_00000000000000000000000000"}'), 'D-DATA-BUNDLE-HASH'],
        [
          'blob-link',
          (d) => {
            const keep = path.join(ctx.env.dir, `kept-${path.basename(d)}`);
            cpSync(inputBlob(d), keep);
            rmSync(inputBlob(d));
            symlinkSync(keep, inputBlob(d));
          },
          'D-DATA-BUNDLE-HASH',
        ],
        ['params-hash', (d) => editRun(d, { params_hash: `sha256:${'0'.repeat(64)}` }), 'D-DATA-BUNDLE-IDENTITY'],
        ['tool', (d) => editRun(d, { tool_id: 'f.noslurm' }), 'D-DATA-BUNDLE-IDENTITY'],
        ['blob-missing', (d) => rmSync(inputBlob(d)), 'I-REQ-JOB-BUNDLE'],
        [
          'partial',
          (d) => {
            const text = readFileSync(resultFile(d), 'utf8');
            writeFileSync(resultFile(d), text.slice(0, Math.floor(text.length / 2)));
          },
          'I-REQ-JOB-BUNDLE',
        ],
        ['no-result', (d) => rmSync(path.join(d, 'result'), { recursive: true }), 'P-PRECOND-JOB-RESULT-MISSING'],
      ];
      const before = snapshot(host, runId);
      const seen: Record<string, string> = {};
      for (const [name, damage, code] of cases) {
        const copy = copyOf(ctx, dir, `result-${name}`);
        damage(copy);
        const got = await refusedWith(host.jobs.collect(copy));
        seen[name] = got;
        // A blob that is a link is both "not a regular file" (ABI-FANOUT-001, I-REQ-JOB-BUNDLE) and not a regular blob file (ABI-FANOUT-005, D-DATA-BUNDLE-HASH): either refusal holds the requirement.
        const accepted = name === 'blob-link' ? ['D-DATA-BUNDLE-HASH', 'I-REQ-JOB-BUNDLE'] : [code];
        expect(accepted.includes(got), `${name}: collect answered ${got}, not ${accepted.join(' or ')}`);
        expect(snapshot(host, runId) === before, `${name}: the refused collect wrote to the store`);
      }
      ctx.observe('refusals', seen);
      const first = await host.jobs.collect(dir);
      expect(first.outcome === 'imported' && first.status === 'succeeded', `the genuine result: ${JSON.stringify(first).slice(0, 300)}`);
      const events = host.runs.events(runId).map((e) => e.kind);
      expect(events.at(-1) === 'collected', `the run's events: ${JSON.stringify(events)}`);
      const after = snapshot(host, runId);
      const second = await host.jobs.collect(dir);
      expect(second.outcome === 'unchanged' && snapshot(host, runId) === after, `a second collect: ${second.outcome}`);
      const local = await ctx.call('f.echo', { sequences: artifact });
      expect(
        local.run_id === runId && local.replayed === true,
        `a local call of the same identity: run ${local.run_id} replayed ${local.replayed}`,
      );
      ctx.observe('events', events);
    },
  },
  {
    id: 'privileged.fanout-array-refusals',
    title:
      'helix job submit with a pointer that is no artifact field, repeated artifacts, limits or a partition outside the policy, a directory outside the work root, or a tool without a slurm entry',
    category: 'privileged',
    abi: ['ABI-FANOUT-007'],
    engines: ['helix'],
    expected:
      'I-REQ-JOB-ARRAY (exit 2) for the pointer and repeats; A-AUTH-SLURM-LIMIT for an array over arraySize or time over the ceiling; A-AUTH-SLURM-PARTITION; I-REQ-SLURM-VALUE for a partition with a newline; A-AUTH-FANOUT-WORK-ROOT for a directory outside (also by ..); A-AUTH-SLURM-TOOL; no directory is made and sbatch never runs (shims on PATH record nothing)',
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const shims = slurmShims(ctx, 0);
      const host = await ctx.host();
      const ids: string[] = [];
      for (const n of [1, 2, 3])
        ids.push((await host.artifacts.importInline(`>s${n}\n${'ACGT'.repeat(n)}\n`, { label: `s${n}`, type: 'fasta' })).id);
      const policy = fanPolicyFile(ctx.env);
      const plugins = await ctx.toolpacksDir();
      const work = jobsDir(ctx.env);
      const submitCli = (tool: string, dir: string, args: readonly string[]) =>
        helixCli(
          ['job', 'submit', tool, '--input', '{}', '--dir', dir, '--home', host.home, '--toolpacks', plugins, '--policy', policy, ...args],
          { env: { ...process.env } },
        );
      const over = ['--over', '/sequences'];
      const cases: Array<[string, string, string, readonly string[], string, number]> = [
        ['not-artifact', 'f.echo', path.join(work, 'a'), ['--over', '/label', '--artifacts', ids[0]!], 'I-REQ-JOB-ARRAY', 2],
        ['repeated', 'f.echo', path.join(work, 'b'), [...over, '--artifacts', `${ids[0]},${ids[1]},${ids[0]}`], 'I-REQ-JOB-ARRAY', 2],
        ['array-size', 'f.echo', path.join(work, 'c'), [...over, '--artifacts', ids.join(',')], 'A-AUTH-SLURM-LIMIT', 1],
        ['time', 'f.echo', path.join(work, 'd'), [...over, '--artifacts', ids[0]!, '--time-minutes', '6'], 'A-AUTH-SLURM-LIMIT', 1],
        ['partition', 'f.echo', path.join(work, 'e'), [...over, '--artifacts', ids[0]!, '--partition', 'gpu'], 'A-AUTH-SLURM-PARTITION', 1],
        [
          'injection',
          'f.echo',
          path.join(work, 'f'),
          [...over, '--artifacts', ids[0]!, '--partition', 'debug\n#SBATCH --uid=0'],
          'I-REQ-SLURM-VALUE',
          2,
        ],
        ['outside', 'f.echo', path.join(ctx.env.dir, 'elsewhere'), [...over, '--artifacts', ids[0]!], 'A-AUTH-FANOUT-WORK-ROOT', 1],
        ['dot-dot', 'f.echo', `${work}/../escape`, [...over, '--artifacts', ids[0]!], 'A-AUTH-FANOUT-WORK-ROOT', 1],
        ['no-entry', 'f.noslurm', path.join(work, 'g'), [...over, '--artifacts', ids[0]!], 'A-AUTH-SLURM-TOOL', 1],
      ];
      const seen: Record<string, string> = {};
      for (const [name, tool, dir, args, code, exit] of cases) {
        const r = await submitCli(tool, dir, args);
        seen[name] = `exit ${r.code}: ${r.stderr.split('\n')[0]!.slice(0, 300)}`;
        expect(
          r.stderr.includes(code) && (r.code === exit || (code === 'I-REQ-SLURM-VALUE' && r.code !== 0)),
          `${name}: expected exit ${exit} with ${code}, got exit ${r.code}: ${r.stderr.slice(0, 500)}`,
        );
        expect(!existsSync(dir), `${name}: ${dir} was made`);
      }
      ctx.observe('refusals', seen);
      expect(!existsSync(path.join(ctx.env.dir, 'escape')), 'a directory was made outside the work root');
      const ran = shims.calls();
      expect(ran.length === 0, `Slurm commands ran: ${ran.map((c) => `${c.command} ${c.args}`).join('; ')}`);
    },
  },
  {
    id: 'privileged.fanout-array-on-slurm',
    title:
      "A job array on the real cluster whose one element's result is tampered with before collect: that element is refused, the other comes in",
    category: 'privileged',
    abi: ['ABI-FANOUT-005', 'ABI-FANOUT-007'],
    engines: ['container'],
    services: ['slurm'],
    expected:
      'helix job submit makes one bundle per artifact and one Slurm array (array.json names job name and id); each element runs helix job run on its own store; collect (exit 1) imports element 0 as a succeeded run and refuses element 1 with D-DATA-BUNDLE-HASH, writing nothing of it; a second collect answers unchanged for element 0',
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const host = await ctx.host();
      const ids: string[] = [];
      for (const n of [1, 2])
        ids.push((await host.artifacts.importInline(`>s${n}\n${'ACGT'.repeat(n)}\n`, { label: `s${n}`, type: 'fasta' })).id);
      const policy = fanPolicyFile(ctx.env);
      const plugins = await ctx.toolpacksDir();
      const dir = path.join(jobsDir(ctx.env), 'array');
      const submitted = await helixCli([
        'job',
        'submit',
        'f.echo',
        '--input',
        '{}',
        '--over',
        '/sequences',
        '--artifacts',
        ids.join(','),
        '--dir',
        dir,
        '--home',
        host.home,
        '--toolpacks',
        plugins,
        '--policy',
        policy,
        '--time-minutes',
        '2',
      ]);
      expect(submitted.code === 0, `helix job submit: exit ${submitted.code}: ${submitted.stderr.slice(0, 500)}`);
      const array = JSON.parse(submitted.stdout) as {
        slurm_job_id: string;
        slurm_job_name: string;
        elements: Array<{ index: number; artifact_id: string; run_id: string }>;
      };
      ctx.defer(async () => void (await runSlurmCommand('scancel', [array.slurm_job_id]).catch(() => undefined)));
      ctx.observe('array', { slurm_job_id: array.slurm_job_id, slurm_job_name: array.slurm_job_name, elements: array.elements.length });
      expect(/^[0-9]+$/.test(array.slurm_job_id) && array.elements.length === 2, `array.json: ${submitted.stdout.slice(0, 400)}`);
      const ended = await waitForJob(array.slurm_job_id, (s) => s.state.terminal && s.tasks.length === 2, 'both elements ended', 180_000);
      ctx.observe(
        'slurm_states',
        ended.tasks.map((t) => t.slurmState),
      );
      const result = (i: number) => path.join(dir, String(i), 'result', 'result.json');
      expect(
        existsSync(result(0)) && existsSync(result(1)),
        `an element wrote no result: ${readFileSync(path.join(dir, '0', 'slurm.out'), 'utf8').slice(0, 500)}`,
      );
      const r1 = JSON.parse(readFileSync(result(1), 'utf8')) as { run: { input_sha256: string } };
      writeFileSync(path.join(dir, '1', 'result', 'blobs', r1.run.input_sha256.replace(/^sha256:/, '')), '{"sequences":"forged"}');
      const collected = await helixCli(['job', 'collect', dir, '--home', host.home, '--wait-ms', '30000']);
      const elements = (
        JSON.parse(collected.stdout) as {
          elements: Array<{ index: number; collected?: { outcome: string; status: string }; error?: { code: string } }>;
        }
      ).elements;
      const summary = elements.map((e) => e.error?.code ?? `${e.collected?.outcome}/${e.collected?.status}`);
      ctx.observe('collect', { exit: collected.code, elements: summary });
      expect(
        collected.code === 1 && JSON.stringify(summary) === JSON.stringify(['imported/succeeded', 'D-DATA-BUNDLE-HASH']),
        `collect: exit ${collected.code}, ${JSON.stringify(summary)} ${collected.stderr.slice(0, 300)}`,
      );
      expect(host.runs.get(array.elements[0]!.run_id)?.status === 'succeeded', 'element 0 is not a succeeded run of the store');
      expect(host.runs.get(array.elements[1]!.run_id) === undefined, 'the tampered element 1 entered the store');
      const again = await helixCli(['job', 'collect', dir, '--home', host.home]);
      const second = (
        JSON.parse(again.stdout) as { elements: Array<{ collected?: { outcome: string }; error?: { code: string } }> }
      ).elements.map((e) => e.error?.code ?? e.collected?.outcome);
      expect(second[0] === 'unchanged', `a second collect of element 0: ${JSON.stringify(second)}`);
    },
  },
];
