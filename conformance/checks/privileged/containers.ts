// Privileged checks of container toolpacks: a manifest refused, a toolpack the policy does not
// offer, argv injection, run identity and failures (ABI-CONTAINER-*).
import { isHelixError } from '../../../abi/index.js';
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { containersCreated, containersLeft, countingDockerSocket, eventsSince, writeContainerPack } from '../../kit/priv-kit.js';
import {
  ABSENT,
  ABSENT2,
  currentImage,
  DEFAULT_GRANTS,
  dockerWork,
  expectNothingRan,
  image,
  policyWith,
  refusalHost,
  sh,
} from './shared.js';

const GREP_INPUT = {
  type: 'object',
  required: ['sequences', 'pattern'],
  properties: { sequences: { type: 'string', 'x-helix-artifact': true }, pattern: { type: 'string' } },
};

/** The checks of this file, in the report's order. */
export const containerChecks: readonly Check[] = [
  {
    id: 'privileged.container-manifest-refused',
    title: 'Container manifests with unknown placeholders, stray braces, unknown fields and a log role with a file are refused at load',
    category: 'privileged',
    abi: ['ABI-CONTAINER-001', 'ABI-CONTAINER-003'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-MANIFEST-INVALID listing each violation at argv[i] or the field',
    async run(ctx) {
      await writeContainerPack(ctx, 'c.unknown', { argv: ['/bin/busybox', 'echo', '{{params.nope}}'] });
      await writeContainerPack(ctx, 'c.env', { argv: ['/bin/busybox', 'echo', '{{env.HOME}}'] });
      await writeContainerPack(ctx, 'c.unclosed', { argv: ['/bin/busybox', 'echo', '{{params.pattern'] }, GREP_INPUT);
      await writeContainerPack(
        ctx,
        'c.optional',
        { argv: ['/bin/busybox', 'echo', '{{params.pattern}}'] },
        { type: 'object', properties: { pattern: { type: 'string' } } },
      );
      await writeContainerPack(ctx, 'c.privileged', { argv: ['/bin/busybox', 'true'], privileged: true });
      await writeContainerPack(ctx, 'c.logfile', {
        argv: ['/bin/busybox', 'true'],
        declaredOutputs: [{ role: 'out_log', type: 'text', file: 'log.txt' }],
        logs: { stdout: 'out_log' },
      });
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID`);
      const text = JSON.stringify(refusal.details);
      const wanted = ['{{params.nope}}', '{{env.HOME}}', 'unclosed', 'must be required', 'privileged', 'is a log'];
      const missing = wanted.filter((w) => !text.includes(w));
      ctx.observe('violations', refusal.details.violations ?? refusal.details);
      expect(missing.length === 0, `the refusal does not name ${missing.join(', ')}: ${text.slice(0, 2000)}`);
    },
  },
  {
    id: 'privileged.container-not-offered',
    title: 'A container toolpack whose image the policy does not pin, grant or allow is not offered, and calling it names an unknown tool',
    category: 'privileged',
    abi: ['ABI-CONTAINER-002'],
    engines: ['helix'],
    expected:
      'only the tool whose image is pinned, granted docker.run by exact name and allowed by its docker.tools entry is offered; each other call is C-CONTRACT-TOOL-UNKNOWN',
    policy: (_e, env) =>
      policyWith(env, {
        grants: {
          '*': [...DEFAULT_GRANTS, 'docker.*'],
          'c.offered': ['docker.run'],
          'c.unpinned': ['docker.run'],
          'c.noentry': ['docker.run'],
          'c.otherimage': ['docker.run'],
        },
        docker: {
          images: [ABSENT, ABSENT2],
          pins: { 'helix-seqkit:local': ABSENT },
          tools: { 'c.offered': {}, 'c.unpinned': {}, 'c.ungranted': {}, 'c.otherimage': { images: [ABSENT2] } },
        },
      }),
    async run(ctx) {
      await countingDockerSocket(ctx);
      for (const id of ['c.offered', 'c.ungranted', 'c.noentry', 'c.otherimage'])
        await writeContainerPack(ctx, id, { argv: ['/bin/busybox', 'true'] });
      await writeContainerPack(ctx, 'c.unpinned', { image: 'evil/image:latest', argv: ['/bin/busybox', 'true'] });
      const host = await ctx.host();
      const containers = host.tools().filter((t) => t.kind === 'container');
      ctx.observe(
        'offered',
        containers.map((t) => ({ id: t.id, moduleDigest: t.moduleDigest })),
      );
      expect(
        JSON.stringify(containers.map((t) => t.id)) === '["c.offered"]',
        `offered container tools: ${JSON.stringify(containers.map((t) => t.id))}`,
      );
      expect(containers[0]!.moduleDigest === null, 'a container tool has a module digest');
      for (const id of ['c.unpinned', 'c.ungranted', 'c.noentry', 'c.otherimage'])
        expectOutcome(await ctx.call(id, {}), 'terminal_error', 'C-CONTRACT-TOOL-UNKNOWN');
    },
  },
  {
    id: 'privileged.container-argv-injection',
    title:
      'Values for a container argv placeholder with shell metacharacters, whitespace, control characters, a leading dash, an absolute path or .. are refused before anything runs',
    category: 'privileged',
    abi: ['ABI-CONTAINER-004'],
    engines: ['helix'],
    expected:
      'each call is I-REQ-CONTAINER-ARG with details.pointer /pattern, placeholder {{params.pattern}} and the reason; the Docker engine is never contacted and no workspace is made',
    policy: (_e, env) =>
      policyWith(env, {
        grants: { 'c.grep': ['docker.run'] },
        docker: { images: [ABSENT], pins: { 'helix-seqkit:local': ABSENT }, tools: { 'c.grep': {} } },
      }),
    async run(ctx) {
      await writeContainerPack(
        ctx,
        'c.grep',
        { argv: ['seqkit', 'grep', '--by-seq', '--pattern', '{{params.pattern}}', '{{inputs.sequences}}'] },
        GREP_INPUT,
      );
      const { host, work, engineCalls } = await refusalHost(ctx);
      const id = (await host.artifacts.importInline('>x\nAACC\n', { label: 'y.fa' })).id;
      const cases: Array<[string, RegExp]> = [
        ['ACGT;rm -rf /', /shell metacharacter/],
        ['$(id)', /shell metacharacter/],
        ['`id`', /shell metacharacter/],
        ['a|b', /shell metacharacter/],
        ['a&&b', /shell metacharacter/],
        ["it's", /shell metacharacter/],
        ['>out', /shell metacharacter/],
        ['~root', /shell metacharacter/],
        ['A C', /whitespace/],
        ['AC\nGT', /control character|whitespace/],
        ['AC\u0007', /control character/],
        ['--help', /leading dash/],
        ['-v', /leading dash/],
        ['/etc/passwd', /absolute path/],
        ['ACGT/../../etc', /\.\. path segment/],
        ['..', /\.\. path segment/],
      ];
      const seen: string[] = [];
      for (const [pattern, reason] of cases) {
        const r = await ctx.call('c.grep', { sequences: id, pattern });
        const d = (r.error?.details ?? {}) as Record<string, unknown>;
        seen.push(`${JSON.stringify(pattern)} -> ${r.error?.code}: ${String(d.reason)}`);
        expect(
          r.error?.code === 'I-REQ-CONTAINER-ARG' &&
            d.pointer === '/pattern' &&
            d.placeholder === '{{params.pattern}}' &&
            reason.test(String(d.reason)),
          `${JSON.stringify(pattern)}: expected I-REQ-CONTAINER-ARG /${reason.source}/, got ${r.status} ${r.error?.code} ${JSON.stringify(d)}`,
        );
      }
      ctx.observe('refusals', seen);
      expectNothingRan(ctx, work, engineCalls);
    },
  },
  {
    id: 'privileged.container-run-identity',
    title:
      "A container tool runs one journaled docker.run with its argv exec'd literally, replays without a container, and cannot be verified offline",
    category: 'privileged',
    abi: ['ABI-CONTAINER-001', 'ABI-CONTAINER-003', 'ABI-CONTAINER-005'],
    engines: ['container'],
    services: ['docker'],
    expected:
      "the first call creates one container; the run records module_digest null and one journal entry; metacharacters in the manifest's argv reach the program unexpanded and a placeholder inside an entry is bound; the same call replays with no container; helix verify refuses with P-PRECOND-VERIFY",
    policy: (_e, env) =>
      policyWith(env, {
        grants: { 'c.lit': ['docker.run'] },
        docker: { images: [currentImage()], pins: { 'helix-seqkit:local': currentImage() }, tools: { 'c.lit': {} } },
      }),
    async run(ctx) {
      await image();
      dockerWork(ctx);
      await writeContainerPack(
        ctx,
        'c.lit',
        {
          argv: ['/bin/busybox', 'printf', 'word\\tlit\\tn\\n%s\\t%s\\t%s\\n', '{{params.word}}', '$HOME;`id`*', '--n={{params.n}}'],
          stdout: { format: 'tsv' },
        },
        { type: 'object', required: ['word', 'n'], properties: { word: { type: 'string' }, n: { type: 'integer' } } },
      );
      const since = eventsSince();
      const first = await ctx.call('c.lit', { word: 'ACGT', n: 7 });
      const out = expectSuccess(first);
      ctx.observe('output', out);
      expect(
        JSON.stringify(out) === JSON.stringify({ rows: [{ word: 'ACGT', lit: '$HOME;`id`*', n: '--n=7' }] }),
        `argv did not reach the program literally: ${JSON.stringify(out)}`,
      );
      const created = await containersCreated(first.run_id!, since);
      const run = (await ctx.host()).runs.get(first.run_id!)!;
      ctx.observe('run', { module_digest: run.module_digest, journal: run.journal });
      expect(created === 1, `the first call created ${created} containers`);
      expect(
        run.module_digest === null && run.journal.entries === 1,
        `the run record: module_digest ${run.module_digest}, journal ${JSON.stringify(run.journal)}`,
      );
      const since2 = eventsSince();
      const again = await ctx.call('c.lit', { word: 'ACGT', n: 7 });
      expect(
        again.run_id === first.run_id && again.replayed === true,
        `the same call did not replay: ${again.status} replayed=${again.replayed}`,
      );
      const created2 = await containersCreated(first.run_id!, since2);
      expect(created2 === 0, `the replay created ${created2} containers`);
      const host = await ctx.host();
      const verified = await host.runs.verify(first.run_id!).then(
        (r) => `report match=${r.match}`,
        (e: unknown) => (isHelixError(e) ? e.code : String(e)),
      );
      ctx.observe('verify', verified);
      expect(verified === 'P-PRECOND-VERIFY', `helix verify of a container run answered ${verified}, not P-PRECOND-VERIFY`);
    },
  },
  {
    id: 'privileged.container-failures',
    title: 'Container tools that exit non-zero, eat memory, overstay the deadline, print a broken table, or ask for more than the ceilings',
    category: 'privileged',
    abi: ['ABI-CONTAINER-001', 'ABI-CONTAINER-006'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'S-TOOL-CONTAINER-EXIT with exit_code 3 and the stderr tail; S-TOOL-CONTAINER-EXIT with oom_killed; R-TIMEOUT-001 at the call deadline; S-TOOL-CONTAINER-STDOUT for repeated or __proto__ columns and non-object JSON; a manifest memoryBytes over docker.ceilings is A-AUTH-DOCKER-LIMIT; no container is left',
    policy: (_e, env) => {
      const tools = ['c.fail', 'c.hog', 'c.sleep', 'c.dup', 'c.proto', 'c.array', 'c.big'];
      return policyWith(env, {
        grants: Object.fromEntries(tools.map((t) => [t, ['docker.run']])),
        docker: {
          images: [currentImage()],
          pins: { 'helix-seqkit:local': currentImage() },
          tools: Object.fromEntries(tools.map((t) => [t, {}])),
          ceilings: { memoryBytes: 256 * 1024 * 1024, pids: 64 },
        },
      });
    },
    async run(ctx) {
      await image();
      dockerWork(ctx);
      await writeContainerPack(ctx, 'c.fail', { argv: sh('echo boom >&2; exit 3') });
      await writeContainerPack(ctx, 'c.hog', {
        argv: sh('x=$(head -c 200m /dev/zero | tr "\\0" a); echo survived'),
        limits: { maxInputBytes: 4096, maxOutputBytes: 65536, memoryBytes: 32 * 1024 * 1024 },
      });
      await writeContainerPack(ctx, 'c.sleep', { argv: ['/bin/busybox', 'sleep', '600'] });
      await writeContainerPack(ctx, 'c.dup', { argv: sh('printf "a\\ta\\n1\\t2\\n"'), stdout: { format: 'tsv' } });
      await writeContainerPack(ctx, 'c.proto', { argv: sh('printf "__proto__\\tb\\n1\\t2\\n"'), stdout: { format: 'tsv' } });
      await writeContainerPack(ctx, 'c.array', { argv: sh('echo "[1,2]"'), stdout: { format: 'json' } });
      await writeContainerPack(ctx, 'c.big', {
        argv: ['/bin/busybox', 'true'],
        limits: { maxInputBytes: 4096, maxOutputBytes: 65536, memoryBytes: 512 * 1024 * 1024 },
      });
      const got: Record<string, unknown> = {};
      const runIds: string[] = [];
      const one = async (tool: string, code: string, constraints: Record<string, unknown> = {}) => {
        const r = await ctx.call(tool, {}, { request: { constraints } });
        got[tool] = { code: r.error?.code, details: r.error?.details };
        if (r.run_id) runIds.push(r.run_id);
        expect(
          r.status !== 'success' && r.error?.code === code,
          `${tool}: expected ${code}, got ${r.status} ${r.error?.code}: ${r.error?.message}`,
        );
        return r.error!.details as Record<string, unknown>;
      };
      const fail = await one('c.fail', 'S-TOOL-CONTAINER-EXIT');
      expect(fail.exit_code === 3 && fail.oom_killed === false && fail.stderr === 'boom\n', `c.fail: ${JSON.stringify(fail)}`);
      const hog = await one('c.hog', 'S-TOOL-CONTAINER-EXIT');
      expect(hog.oom_killed === true, `c.hog: ${JSON.stringify(hog)}`);
      await one('c.sleep', 'R-TIMEOUT-001', { timeout_ms: 1500 });
      await one('c.dup', 'S-TOOL-CONTAINER-STDOUT');
      await one('c.proto', 'S-TOOL-CONTAINER-STDOUT');
      await one('c.array', 'S-TOOL-CONTAINER-STDOUT');
      await one('c.big', 'A-AUTH-DOCKER-LIMIT');
      ctx.observe('errors', got);
      for (const id of runIds) expect((await containersLeft(id)) === 0, `run ${id} left a container`);
    },
  },
];
