// Privileged checks of fan-out job bundles: a malformed bundle refused by helix job run, a dry run
// refused as the call would be, and the node's home, local or on a network filesystem
// (ABI-FANOUT-001..004).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, type Check } from '../../check.js';
import { mountFuseDir } from '../../kit/priv-fuse.js';
import { helixCli } from '../../kit/priv-kit.js';
import { execMkfifo } from './shared.js';
import { bundle, copyOf, fanPacks, fanPolicy, refusedWith } from './fanout-shared.js';

/** The checks of this file, in the report's order. */
export const fanoutBundleChecks: readonly Check[] = [
  {
    id: 'privileged.fanout-bundle-malformed',
    title: 'helix job run on a bundle whose job.json is not JSON, of another format, a directory or a FIFO, or without params.json',
    category: 'privileged',
    abi: ['ABI-FANOUT-001'],
    engines: ['helix'],
    expected:
      'each is I-REQ-JOB-BUNDLE naming the file (exit 2), a FIFO without blocking; writing a bundle into a directory that is not empty is I-REQ-TARGET-NOT-EMPTY',
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const { host, dir, artifact } = await bundle(ctx, 'bundle');
      const job = JSON.parse(readFileSync(path.join(dir, 'job.json'), 'utf8')) as Record<string, unknown>;
      const cases: Array<[string, (d: string) => void, string]> = [
        ['not-json', (d) => writeFileSync(path.join(d, 'job.json'), '{"format": "helix-job/1",'), 'job.json'],
        ['other-format', (d) => writeFileSync(path.join(d, 'job.json'), JSON.stringify({ ...job, format: 'helix-job/9' })), 'job.json'],
        [
          'bad-fields',
          (d) =>
            writeFileSync(
              path.join(d, 'job.json'),
              JSON.stringify({ ...job, run_id: 'run_x', plugins_dir: 'relative/plugins', extra: true }),
            ),
          'job.json',
        ],
        [
          'directory',
          (d) => {
            rmSync(path.join(d, 'job.json'));
            mkdirSync(path.join(d, 'job.json'));
          },
          'job.json',
        ],
        [
          'fifo',
          (d) => {
            rmSync(path.join(d, 'job.json'));
            execMkfifo(path.join(d, 'job.json'));
          },
          'job.json',
        ],
        ['no-params', (d) => rmSync(path.join(d, 'params.json')), 'params.json'],
      ];
      const seen: Record<string, string> = {};
      for (const [name, damage, file] of cases) {
        const copy = copyOf(ctx, dir, `bundle-${name}`);
        damage(copy);
        const run = await helixCli(['job', 'run', copy], { boundMs: 60_000 });
        const first = run.stderr.split('\n').find((l) => l.includes('I-REQ') || l.includes('-')) ?? run.stderr.slice(0, 200);
        seen[name] = `exit ${run.code}: ${first.slice(0, 300)}`;
        expect(
          run.code === 2 && run.stderr.includes('I-REQ-JOB-BUNDLE') && run.stderr.includes(file),
          `${name}: expected exit 2 with I-REQ-JOB-BUNDLE naming ${file}, got exit ${run.code}: ${run.stderr.slice(0, 600)}`,
        );
      }
      ctx.observe('refusals', seen);
      const again = await refusedWith(host.jobs.bundle({ tool_id: 'f.echo', input: { sequences: artifact } }, dir));
      expect(again === 'I-REQ-TARGET-NOT-EMPTY', `a bundle written into a full directory: ${again}`);
    },
  },
  {
    id: 'privileged.fanout-dry-run',
    title:
      'A job bundle is written only for a call this host would make: unknown tools, bad input, missing artifacts, ungranted capabilities, built-ins and secret readers are refused',
    category: 'privileged',
    abi: ['ABI-FANOUT-002'],
    engines: ['helix'],
    expected:
      "each refusal carries the code the same call gets here (C-CONTRACT-TOOL-UNKNOWN, the input schema's, P-PRECOND-ARTIFACT-NOT-FOUND, A-AUTH-CAPABILITY-NOT-GRANTED); a built-in is C-CONTRACT-JOB-TOOL; a tool allowed secrets.get is P-PRECOND-JOB-SECRETS; no bundle directory is made",
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const host = await ctx.host();
      const art = (await host.artifacts.importInline('>a\nAC\n', { label: 'a', type: 'fasta' })).id;
      const cases: Array<[string, string, Record<string, unknown>, string | null]> = [
        ['unknown-tool', 'f.nope', { sequences: art }, null],
        ['bad-input', 'f.echo', { sequences: art, extra: 1 }, null],
        ['missing-artifact', 'f.echo', { sequences: `art_${'0'.repeat(26)}` }, null],
        ['ungranted', 'f.ungranted', { sequences: art }, null],
        ['builtin', 'helix.artifact_list', {}, 'C-CONTRACT-JOB-TOOL'],
        ['secrets', 'f.secret', { sequences: art }, 'P-PRECOND-JOB-SECRETS'],
      ];
      const seen: Record<string, string> = {};
      for (const [name, tool, input, fixed] of cases) {
        const dir = path.join(ctx.env.dir, `dry-${name}`);
        const code = await refusedWith(host.jobs.bundle({ tool_id: tool, input }, dir));
        const want = fixed ?? (await ctx.call(tool, input)).error?.code ?? 'success';
        seen[name] = `${code} (a call here: ${want})`;
        expect(code === want, `${name}: the bundle was refused with ${code}, a call gets ${want}`);
        expect(!existsSync(dir) || readdirSync(dir).length === 0, `${name}: a bundle was written`);
      }
      ctx.observe('refusals', seen);
    },
  },
  {
    id: 'privileged.fanout-node-home',
    title:
      'helix job run refuses to open the submitting store (also through a symbolic link) as its node store, and removes the temporary store it makes',
    category: 'privileged',
    abi: ['ABI-FANOUT-003'],
    engines: ['helix'],
    expected:
      "--home at the submitting store's home, or at a link to it, is P-PRECOND-JOB-HOME (exit 1) and the submitting store gains no run; without --home the node store is made under $TMPDIR and removed when the job ends",
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const { host, dir, runId } = await bundle(ctx, 'bundle');
      const link = path.join(ctx.env.dir, 'home-link');
      symlinkSync(host.home, link);
      for (const home of [host.home, link]) {
        const run = await helixCli(['job', 'run', dir, '--home', home]);
        expect(
          run.code === 1 && run.stderr.includes('P-PRECOND-JOB-HOME'),
          `--home ${home}: exit ${run.code}: ${run.stderr.slice(0, 400)}`,
        );
      }
      expect(host.runs.get(runId) === undefined, 'the submitting store has the run');
      const tmp = path.join(ctx.env.dir, 'node-tmp');
      mkdirSync(tmp);
      const run = await helixCli(['job', 'run', dir], { env: { ...process.env, TMPDIR: tmp } });
      expect(run.code === 0, `the job did not run on a store of its own: exit ${run.code}: ${run.stderr.slice(0, 400)}`);
      const left = readdirSync(tmp);
      ctx.observe('left_in_tmpdir', left);
      expect(left.length === 0, `the node's temporary store was left in $TMPDIR: ${left.join(', ')}`);
    },
  },
  {
    id: 'privileged.fanout-network-home',
    title: 'helix job run refuses a node store home on a FUSE filesystem (a network or cluster filesystem by its statfs type)',
    category: 'privileged',
    abi: ['ABI-FANOUT-003'],
    engines: ['container'],
    expected:
      '--home on a mounted FUSE directory is P-PRECOND-JOB-HOME naming the filesystem (exit 1), before anything is opened: the directory stays empty and no result is written',
    policy: (_e, env) => fanPolicy(env),
    packs: fanPacks,
    async run(ctx) {
      const mount = await mountFuseDir(ctx);
      ctx.observe('statfs_type', `0x${statfsSync(mount).type.toString(16)}`);
      const { dir } = await bundle(ctx, 'bundle');
      const run = await helixCli(['job', 'run', dir, '--home', mount], { boundMs: 60_000 });
      ctx.observe('refusal', run.stderr.split('\n')[0]);
      expect(
        run.code === 1 && run.stderr.includes('P-PRECOND-JOB-HOME') && run.stderr.includes('fuse'),
        `--home on FUSE: exit ${run.code}: ${run.stderr.slice(0, 500)}`,
      );
      expect(readdirSync(mount).length === 0, `the node store was opened on the FUSE directory: ${readdirSync(mount).join(', ')}`);
    },
  },
];
