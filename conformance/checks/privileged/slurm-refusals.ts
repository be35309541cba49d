// Privileged checks of the slurm.* capabilities refused before the cluster is reached, the work
// root, and the job script and upstream a job is given (ABI-SLURM-*).
import { existsSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { expect, expectOutcome, type Check } from '../../check.js';
import { answersOf, slurmShims } from '../../kit/priv-kit.js';
import { expectCodes, script } from './shared.js';
import { jobsDir, slurmPacks, slurmPolicy, submit } from './slurm-shared.js';

/** The checks of this file, in the report's order. */
export const slurmRefusalChecks: readonly Check[] = [
  {
    id: 'privileged.slurm-refusals',
    title:
      'slurm.submit with names, limits and values outside the policy, script injection in any field, and file names that are paths is refused before any Slurm command runs',
    category: 'privileged',
    abi: ['ABI-SLURM-001', 'ABI-SLURM-002', 'ABI-SLURM-003', 'ABI-SLURM-004', 'ABI-SLURM-007'],
    engines: ['helix'],
    expected:
      "a tool without slurm.tools entry is A-AUTH-SLURM-TOOL; partition, account (outside the tool's narrowed list too) and QOS not allowed are A-AUTH-SLURM-PARTITION/-ACCOUNT/-QOS naming the allowed ones; each limit over its ceiling is A-AUTH-SLURM-LIMIT with asked and ceiling; a line break, #SBATCH, a quote or a NUL in a value is I-REQ-SLURM-VALUE naming the field; a script field is I-REQ-CAPABILITY-ARGS; path-like or colliding file names are I-REQ-SLURM-FILE-NAME; a wildcard-only grant is A-AUTH-CAPABILITY-NOT-GRANTED; no Slurm command runs (shims on PATH record none) and the work root stays empty",
    policy: (_e, env) => slurmPolicy(env),
    packs: slurmPacks,
    async run(ctx) {
      const shims = slurmShims(ctx, 0);
      const work = jobsDir(ctx.env);
      const host = await ctx.host();
      const art = (await host.artifacts.importInline('>a\nACGT\n', { label: 'reads' })).id;
      const ok = ['/bin/true'];
      const calls: Array<[Record<string, unknown>, string]> = [
        [submit({ argv: ok, partition: 'gpu' }), 'A-AUTH-SLURM-PARTITION'],
        [submit({ argv: ok, account: 'root' }), 'A-AUTH-SLURM-ACCOUNT'],
        [submit({ argv: ok, account: 'lab2' }), 'A-AUTH-SLURM-ACCOUNT'],
        [submit({ argv: ok, qos: 'high' }), 'A-AUTH-SLURM-QOS'],
        [submit({ argv: ok, limits: { time_minutes: 6 } }), 'A-AUTH-SLURM-LIMIT'],
        [submit({ argv: ok, limits: { memory_mib: 257 } }), 'A-AUTH-SLURM-LIMIT'],
        [submit({ argv: ok, limits: { cpus_per_task: 2 } }), 'A-AUTH-SLURM-LIMIT'],
        [submit({ argv: ok, partition: 'debug\n#SBATCH --uid=0' }), 'I-REQ-SLURM-VALUE'],
        [submit({ argv: ok, partition: "debug' --uid=0 '" }), 'I-REQ-SLURM-VALUE'],
        [submit({ argv: ok, qos: 'normal;id' }), 'I-REQ-SLURM-VALUE'],
        [submit({ argv: ['/bin/echo', 'a\n#SBATCH --partition=gpu'] }), 'I-REQ-SLURM-VALUE'],
        [submit({ argv: ['/bin/echo', '#SBATCH --uid=0'] }), 'I-REQ-SLURM-VALUE'],
        [submit({ argv: ['/bin/echo', 'a\u0000b'] }), 'I-REQ-SLURM-VALUE'],
        [submit({ argv: ok, script: '#!/bin/sh\n#SBATCH --uid=0\nid\n' }), 'I-REQ-CAPABILITY-ARGS'],
        [submit({ argv: ok, directives: ['--uid=0'] }), 'I-REQ-CAPABILITY-ARGS'],
        [submit({ argv: ok, key: '../x' }), 'I-REQ-CAPABILITY-ARGS'],
        [submit({ argv: ok, inputs: [{ artifact_id: art, name: '../escape' }] }), 'I-REQ-SLURM-FILE-NAME'],
        [submit({ argv: ok, inputs: [{ artifact_id: art, name: '/etc/cron.d/x' }] }), 'I-REQ-SLURM-FILE-NAME'],
        [submit({ argv: ok, inputs: [{ artifact_id: art, name: '.profile' }] }), 'I-REQ-SLURM-FILE-NAME'],
        [submit({ argv: ok, outputs: [{ name: 'r.txt' }, { name: 'R.TXT' }] }), 'I-REQ-SLURM-FILE-NAME'],
        [submit({ argv: ok, outputs: [{ name: '-rf' }] }), 'I-REQ-SLURM-FILE-NAME'],
      ];
      const answers = answersOf(
        await script(
          ctx,
          's.tool',
          'slurm.submit',
          calls.map(([c]) => c),
        ),
      );
      expectCodes(
        answers,
        calls.map(([, code]) => code),
        's.tool',
      );
      const partition = answers[0]!.error!.details;
      expect(
        JSON.stringify(partition.allowed) === '["debug"]',
        `the partition refusal does not name the allowed ones: ${JSON.stringify(partition)}`,
      );
      const narrowed = answers[2]!.error!.details;
      expect(
        JSON.stringify(narrowed.allowed) === '["lab1"]',
        `the account refusal does not give the tool's narrowed list: ${JSON.stringify(narrowed)}`,
      );
      const limit = answers[4]!.error!.details;
      expect(limit.asked === 6 && limit.ceiling === 5, `the limit refusal does not name request and ceiling: ${JSON.stringify(limit)}`);
      const injected = answers[7]!.error!.details;
      expect(
        injected.field === 'partition' && /line break/.test(String(injected.problem)),
        `the injection refusal does not name the field and problem: ${JSON.stringify(injected)}`,
      );
      ctx.observe('details', { partition, narrowed, limit, injected, argv: answers[10]!.error!.details });
      const noEntry = answersOf(await script(ctx, 's.noentry', 'slurm.submit', [submit({ argv: ok })]));
      expectCodes(noEntry, ['A-AUTH-SLURM-TOOL'], 's.noentry (granted, no slurm.tools entry)');
      const wild = await script(ctx, 's.wild', 'slurm.submit', [submit({ argv: ok })]);
      expectOutcome(wild, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      const ran = shims.calls();
      ctx.observe('slurm_commands_run', ran.length);
      expect(ran.length === 0, `Slurm commands ran for refused calls: ${ran.map((c) => `${c.command} ${c.args}`).join('; ')}`);
      expect(readdirSync(work).length === 0, `the refused calls left job directories: ${readdirSync(work).join(', ')}`);
    },
  },
  {
    id: 'privileged.slurm-work-root',
    title: 'slurm.submit under a work root that is a symbolic link, or missing, is refused before any Slurm command runs',
    category: 'privileged',
    abi: ['ABI-SLURM-007'],
    engines: ['helix'],
    expected:
      "P-PRECOND-SLURM-WORK-ROOT naming the work root, with no Slurm command run (shims on PATH record none) and nothing made under the link's target",
    policy: (_e, env) => {
      const real = jobsDir(env, 'jobs-real');
      const link = path.join(env.dir, 'jobs-link');
      if (!existsSync(link)) symlinkSync(real, link);
      return slurmPolicy(env, link);
    },
    packs: slurmPacks,
    async run(ctx) {
      const shims = slurmShims(ctx, 0);
      const answers = answersOf(await script(ctx, 's.tool', 'slurm.submit', [submit({ argv: ['/bin/true'] })]));
      expectCodes(answers, ['P-PRECOND-SLURM-WORK-ROOT'], 's.tool under a linked work root');
      ctx.observe('refusal', answers[0]!.error);
      const ran = shims.calls();
      ctx.observe(
        'slurm_commands_run',
        ran.map((c) => `${c.command} ${c.args}`),
      );
      expect(
        ran.length === 0,
        `Slurm commands ran before the work root was refused: ${ran.map((c) => `${c.command} ${c.args}`).join('; ')}`,
      );
      expect(readdirSync(path.join(ctx.env.dir, 'jobs-real')).length === 0, 'a job directory was made through the link');
    },
  },
  {
    id: 'privileged.slurm-script-and-upstream',
    title:
      'A job whose argv is full of shell syntax is sent to sbatch as a generated, fully quoted script on stdin; a failing sbatch is R-UPSTREAM-SLURM',
    category: 'privileged',
    abi: ['ABI-SLURM-004', 'ABI-SLURM-005'],
    engines: ['helix'],
    expected:
      'sbatch (a shim on PATH) is run with --parsable and the script on stdin: #!/bin/sh, #SBATCH directives with single-quoted values, --export=NONE, one exec of the single-quoted argv; its exit 1 is R-UPSTREAM-SLURM with command, exit code and stderr',
    policy: (_e, env) => slurmPolicy(env),
    packs: slurmPacks,
    async run(ctx) {
      const shims = slurmShims(ctx, 1);
      const hostile = "it's $(id) `id` $HOME; rm -rf / | cat > /etc/x *";
      const answers = answersOf(await script(ctx, 's.tool', 'slurm.submit', [submit({ argv: ['/bin/echo', hostile] })]));
      const a = answers[0]!;
      expect(a.error?.code === 'R-UPSTREAM-SLURM', `a failing sbatch answered ${JSON.stringify(a)}`);
      const d = a.error!.details;
      expect(
        d.command === 'sbatch' && d.exit_code === 1 && String(d.stderr).includes('conformance shim'),
        `R-UPSTREAM-SLURM does not name command, exit code and stderr: ${JSON.stringify(d)}`,
      );
      const sbatch = shims.calls().filter((c) => c.command === 'sbatch');
      expect(sbatch.length === 1 && sbatch[0]!.args === '--parsable', `sbatch was run as ${JSON.stringify(sbatch.map((c) => c.args))}`);
      const scriptText = sbatch[0]!.stdin;
      ctx.show({ label: 'the batch script sbatch received on stdin', lang: 'text', text: scriptText });
      const quoted = `'${hostile.replaceAll("'", `'\\''`)}'`;
      const lines = scriptText.split('\n');
      expect(lines[0] === '#!/bin/sh', 'the script does not start with #!/bin/sh');
      expect(lines.includes('#SBATCH --export=NONE'), 'the script does not say --export=NONE');
      expect(
        lines.includes("#SBATCH --partition='debug'") &&
          lines.includes("#SBATCH --qos='normal'") &&
          lines.includes('#SBATCH --time=5') &&
          lines.includes("#SBATCH --mem='256M'"),
        `the directives are not the policy's: ${scriptText}`,
      );
      const execs = lines.filter((l) => !l.startsWith('#') && l.trim() !== '');
      expect(
        execs.length === 1 && execs[0] === `exec '/bin/echo' ${quoted}`,
        `the script runs more than one quoted exec: ${JSON.stringify(execs)}`,
      );
      ctx.observe('upstream', d);
    },
  },
];
