// Privileged checks of docker.run refused before the engine is reached: a tag or an image not
// allowed, a tool without a docker entry, request fields past the policy, and workspace names that
// would leave the workspace; nothing reaches the engine and no workspace is made (ABI-DOCKER-*).
import { expect, expectOutcome, type Check } from '../../check.js';
import { answersOf, codesOf, scriptPack } from '../../kit/priv-kit.js';
import {
  ABSENT,
  ABSENT2,
  dockerRefusalPacks,
  dockerRefusalPolicy,
  expectCodes,
  expectNothingRan,
  policyWith,
  refusalHost,
  script,
} from './shared.js';

/** The checks of this file, in the report's order. */
export const dockerRefusalChecks: readonly Check[] = [
  {
    id: 'privileged.docker-tag-in-policy',
    title: 'A policy naming a Docker image by tag is refused at load',
    category: 'privileged',
    abi: ['ABI-DOCKER-001'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-POLICY-INVALID, naming docker.images',
    policy: (_e, env) =>
      policyWith(env, {
        grants: { 'd.tool': ['docker.run'] },
        docker: { images: ['helix-seqkit:local', `busybox@sha256:${'a'.repeat(64)}`], tools: { 'd.tool': {} } },
      }),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-POLICY-INVALID', `refused with ${refusal.code}, not P-PRECOND-POLICY-INVALID`);
      const text = JSON.stringify(refusal);
      expect(text.includes('docker') && text.includes('images'), `the refusal does not name docker.images: ${text.slice(0, 500)}`);
      ctx.observe('refusal', { code: refusal.code, message: refusal.message });
    },
  },
  {
    id: 'privileged.docker-image-and-grant',
    title:
      'docker.run of a tag, an image not allowed to the tool, by a tool without a docker entry or with only a wildcard grant, is refused before the engine is reached',
    category: 'privileged',
    abi: ['ABI-DOCKER-001', 'ABI-DOCKER-002'],
    engines: ['helix'],
    expected:
      'a tag is I-REQ-DOCKER-IMAGE-REF; an id not on the tool\'s images, or a tool without docker.tools entry, is A-AUTH-DOCKER-IMAGE; a tool granted docker.run only by "*": ["docker.*"] fails A-AUTH-CAPABILITY-NOT-GRANTED; the Docker engine is never contacted and no workspace is made',
    policy: (_e, env) => dockerRefusalPolicy(env),
    packs: dockerRefusalPacks,
    async run(ctx) {
      const { work, engineCalls } = await refusalHost(ctx);
      const argv = ['/bin/busybox', 'true'];
      const answers = answersOf(
        await script(ctx, 'd.tool', 'docker.run', [
          { image: 'helix-seqkit:local', argv },
          { image: 'busybox', argv },
          { image: `sha256:${'e'.repeat(63)}`, argv },
          { image: ABSENT2, argv },
          { image: `sha256:${'f'.repeat(64)}`, argv },
        ]),
      );
      expectCodes(
        answers,
        ['I-REQ-DOCKER-IMAGE-REF', 'I-REQ-DOCKER-IMAGE-REF', 'I-REQ-DOCKER-IMAGE-REF', 'A-AUTH-DOCKER-IMAGE', 'A-AUTH-DOCKER-IMAGE'],
        'd.tool',
      );
      const noEntry = answersOf(await script(ctx, 'd.noentry', 'docker.run', [{ image: ABSENT, argv }]));
      expectCodes(noEntry, ['A-AUTH-DOCKER-IMAGE'], 'd.noentry (granted docker.run, no docker.tools entry)');
      const wild = await script(ctx, 'd.wild', 'docker.run', [{ image: ABSENT, argv }]);
      expectOutcome(wild, 'terminal_error', 'A-AUTH-CAPABILITY-NOT-GRANTED');
      ctx.observe('codes', { 'd.tool': codesOf(answers), 'd.noentry': codesOf(noEntry), 'd.wild': wild.error?.code });
      expectNothingRan(ctx, work, engineCalls);
    },
  },
  {
    id: 'privileged.docker-request-fields',
    title:
      'docker.run asking for host network, an ungranted network or variable, limits over the ceilings, privilege, mounts, a user or a NUL is refused before the engine is reached',
    category: 'privileged',
    abi: ['ABI-DOCKER-002', 'ABI-DOCKER-003', 'ABI-DOCKER-004'],
    engines: ['helix'],
    expected:
      'network host and an ungranted bridge are A-AUTH-DOCKER-NETWORK; an env name not on docker.tools.<tool>.env is A-AUTH-DOCKER-ENV; each limit over its ceiling, and inputs over maxWorkspaceInputBytes, are A-AUTH-DOCKER-LIMIT naming limit, request and ceiling; privileged, cap_add, mounts, user, devices and a NUL or empty argv are I-REQ-CAPABILITY-ARGS; nothing reaches the engine',
    policy: (_e, env) => dockerRefusalPolicy(env),
    packs: dockerRefusalPacks,
    async run(ctx) {
      const { host, work, engineCalls } = await refusalHost(ctx);
      const big = (await host.artifacts.importInline('x'.repeat(200), { label: 'over the workspace ceiling' })).id;
      const base = { image: ABSENT, argv: ['/bin/busybox', 'true'] };
      const calls: Array<[Record<string, unknown>, string]> = [
        [{ ...base, network: 'host' }, 'A-AUTH-DOCKER-NETWORK'],
        [{ ...base, network: 'bridge' }, 'A-AUTH-DOCKER-NETWORK'],
        [{ ...base, env: { LD_PRELOAD: '/tmp/x.so' } }, 'A-AUTH-DOCKER-ENV'],
        [{ ...base, env: { ALLOWED: 'ok', PATH: '/tmp' } }, 'A-AUTH-DOCKER-ENV'],
        [{ ...base, limits: { memory_bytes: 64 * 1024 * 1024 + 1 } }, 'A-AUTH-DOCKER-LIMIT'],
        [{ ...base, limits: { pids: 17 } }, 'A-AUTH-DOCKER-LIMIT'],
        [{ ...base, limits: { timeout_ms: 10_001 } }, 'A-AUTH-DOCKER-LIMIT'],
        [{ ...base, limits: { max_stdout_bytes: 4097 } }, 'A-AUTH-DOCKER-LIMIT'],
        [{ ...base, inputs: [{ name: 'big.txt', artifact_id: big }] }, 'A-AUTH-DOCKER-LIMIT'],
        [{ ...base, privileged: true }, 'I-REQ-CAPABILITY-ARGS'],
        [{ ...base, cap_add: ['SYS_ADMIN'] }, 'I-REQ-CAPABILITY-ARGS'],
        [{ ...base, mounts: [{ source: '/', target: '/host' }] }, 'I-REQ-CAPABILITY-ARGS'],
        [{ ...base, user: '0:0' }, 'I-REQ-CAPABILITY-ARGS'],
        [{ ...base, devices: ['/dev/kmsg'] }, 'I-REQ-CAPABILITY-ARGS'],
        [{ ...base, argv: ['/bin/busybox', 'echo', 'a\u0000b'] }, 'I-REQ-CAPABILITY-ARGS'],
        [{ ...base, argv: [] }, 'I-REQ-CAPABILITY-ARGS'],
      ];
      const answers = answersOf(
        await script(
          ctx,
          'd.tool',
          'docker.run',
          calls.map(([c]) => c),
        ),
      );
      expectCodes(
        answers,
        calls.map(([, code]) => code),
        'd.tool',
      );
      const memory = answers[4]!.error!.details;
      expect(
        memory.asked === 64 * 1024 * 1024 + 1 && memory.ceiling === 64 * 1024 * 1024 && String(memory.field).includes('memoryBytes'),
        `the memory refusal does not name request and ceiling: ${JSON.stringify(memory)}`,
      );
      const inputs = answers[8]!.error!.details;
      expect(
        inputs.asked === 200 && inputs.ceiling === 100,
        `the workspace refusal does not name the bytes and the ceiling: ${JSON.stringify(inputs)}`,
      );
      ctx.observe('limit_refusal', memory);
      ctx.observe('workspace_refusal', inputs);
      expectNothingRan(ctx, work, engineCalls);
    },
  },
  {
    id: 'privileged.docker-workspace-names',
    title: 'docker.run workspace names that are paths, hidden, options, or collide in case are refused before anything is written',
    category: 'privileged',
    abi: ['ABI-DOCKER-008'],
    engines: ['helix'],
    expected:
      'names with .., /, a leading dot or dash, an absolute path, a NUL or over 128 characters are I-REQ-DOCKER-WORKSPACE-NAME with details.pointer; two inputs equal ignoring case, two outputs of one role are I-REQ-DOCKER-WORKSPACE-COLLISION; an unknown artifact is P-PRECOND-ARTIFACT-NOT-FOUND; an undeclared role C-CONTRACT-OUTPUT-ROLE; no workspace, no engine',
    policy: (_e, env) => dockerRefusalPolicy(env),
    packs: () => [
      scriptPack('d.tool', ['docker.run', 'artifact.write'], { declaredOutputs: [{ role: 'any', type: 'text' }] }),
      scriptPack('d.noentry', ['docker.run']),
      scriptPack('d.wild', ['docker.run']),
    ],
    async run(ctx) {
      const { host, work, engineCalls } = await refusalHost(ctx);
      const art = (await host.artifacts.importInline('>a\nACGT\n', { label: 'reads' })).id;
      const base = { image: ABSENT, argv: ['/bin/busybox', 'true'] };
      const named = (name: string) => ({ ...base, inputs: [{ name, artifact_id: art }] });
      const calls: Array<[Record<string, unknown>, string]> = [
        [named('../etc/passwd'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('/etc/passwd'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('a/b'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('..'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('.bashrc'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('-rf'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('a\u0000b'), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [named('x'.repeat(129)), 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [{ ...base, outputs: [{ file: '../../escape', role: 'any' }] }, 'I-REQ-DOCKER-WORKSPACE-NAME'],
        [
          {
            ...base,
            inputs: [
              { name: 'reads.fa', artifact_id: art },
              { name: 'READS.FA', artifact_id: art },
            ],
          },
          'I-REQ-DOCKER-WORKSPACE-COLLISION',
        ],
        [
          {
            ...base,
            outputs: [
              { file: 'x', role: 'any' },
              { file: 'y', role: 'any' },
            ],
          },
          'I-REQ-DOCKER-WORKSPACE-COLLISION',
        ],
        [{ ...base, inputs: [{ name: 'x', artifact_id: `art_${'0'.repeat(26)}` }] }, 'P-PRECOND-ARTIFACT-NOT-FOUND'],
        [{ ...base, outputs: [{ file: 'x', role: 'secret_role' }] }, 'C-CONTRACT-OUTPUT-ROLE'],
      ];
      // The run must create its declared output to succeed: a last call writes it.
      const input = JSON.parse(
        JSON.stringify({
          calls: [
            ...calls.map(([args]) => ({ name: 'docker.run', args })),
            { name: 'artifact.write', args: { role: 'any', data: 'sealed', final: true } },
          ],
        }),
      ) as Record<string, unknown>;
      const answers = answersOf(await ctx.call('d.tool', input)).slice(0, calls.length);
      expectCodes(
        answers,
        calls.map(([, code]) => code),
        'd.tool',
      );
      expect(
        answers[0]!.error!.details.pointer === '/inputs/0/name',
        `the name refusal does not point at the entry: ${JSON.stringify(answers[0]!.error!.details)}`,
      );
      expect(
        answers[9]!.error!.details.pointer === '/inputs/1/name' && answers[9]!.error!.details.first === '/inputs/0/name',
        `the collision does not name both entries: ${JSON.stringify(answers[9]!.error!.details)}`,
      );
      ctx.observe('name_refusal', answers[0]!.error!.details);
      ctx.observe('collision', answers[9]!.error!.details);
      expectNothingRan(ctx, work, engineCalls);
    },
  },
];
