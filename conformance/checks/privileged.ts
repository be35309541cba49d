// Conformance checks: privileged. Docker (docker.run and container toolpacks), Slurm (the slurm.*
// capabilities and their built-ins) and fan-out (job bundles, `helix job run`, collect, job arrays):
// every hostile request must be refused with its code before anything runs on the engine or the
// cluster, every hostile thing a container or a job leaves behind must be refused when it is read
// back, and tampered bundles must be refused before anything is written.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  statfsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  cpSync,
  writeFileSync,
  mkdtempSync,
} from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { isHelixError } from '../../abi/index.js';
import { helixHostName, LABEL_HOST, LABEL_PID, LABEL_RUN } from '../../capabilities/docker-container.js';
import { findJobs, runSlurmCommand } from '../../capabilities/slurm-commands.js';
import { canonicalJson } from '../../host/1-base/hashing.js';
import { hostStore, type Host } from '../../host/5-host/host.js';
import { readAudit } from '../../host/3-store/audit.js';
import { readJournal } from '../../host/3-store/journal.js';
import {
  CheckFailure,
  expect,
  expectOutcome,
  expectSuccess,
  type Check,
  type CheckContext,
  type CheckEnv,
  type PolicyDocument,
} from '../check.js';
import { echoModule } from '../kit/guest-wat.js';
import { mountFuseDir } from '../kit/priv-fuse.js';
import {
  answersOf,
  codesOf,
  containersCreated,
  containersLeft,
  countingDockerSocket,
  eventsSince,
  helixCli,
  scriptPack,
  setEnv,
  slurmShims,
  waitForJob,
  waitForJobEnd,
  writeContainerPack,
  type Answer,
} from '../kit/priv-kit.js';
import { digestOf } from '../kit/toolpack.js';
import { wat2wasm } from '../kit/wat.js';
import { checkDefaultPolicy } from '../runner.js';
import { serviceState } from '../outside-engines.js';

/** An allowlisted image id no engine has. */
const ABSENT = `sha256:${'e'.repeat(64)}`;
const ABSENT2 = `sha256:${'d'.repeat(64)}`;
const DEFAULT_GRANTS = ['clock.*', 'log.*', 'kv.*', 'artifact.*'];

/** The id of the checks' image, known once the docker probe answered (the runner awaits it before a check runs). */
let imageId = '';
async function image(): Promise<string> {
  const s = await serviceState('docker');
  if (!s.ok || s.imageId === undefined) throw new CheckFailure(`Docker is not usable: ${s.problem ?? 'no image id'}`);
  imageId = s.imageId;
  return imageId;
}

/** A policy: the check's default one with these grants, docker and slurm sections. */
function policyWith(env: CheckEnv, extra: { grants?: Record<string, string[]>; docker?: unknown; slurm?: unknown }): PolicyDocument {
  const base = checkDefaultPolicy(env);
  return {
    ...base,
    grants: { '*': DEFAULT_GRANTS, ...extra.grants },
    ...(extra.docker === undefined ? {} : { docker: extra.docker }),
    ...(extra.slurm === undefined ? {} : { slurm: extra.slurm }),
  };
}

/** The work root of the check's docker.run workspaces, set in HELIX_DOCKER_WORK. */
function dockerWork(ctx: CheckContext): string {
  const work = path.join(ctx.env.dir, 'docker-work');
  mkdirSync(work, { recursive: true });
  setEnv(ctx, 'HELIX_DOCKER_WORK', work);
  return work;
}

/** The script guest's run of `tool` making `calls` of `name`. */
async function script(ctx: CheckContext, tool: string, name: string, calls: readonly unknown[], echo?: string) {
  // A fresh copy of each call: the host refuses a request in which one object appears twice (I-REQ-JSON-VALUE).
  const input = JSON.parse(
    JSON.stringify({ calls: calls.map((args) => ({ name, args })), ...(echo === undefined ? {} : { echo }) }),
  ) as Record<string, unknown>;
  return ctx.call(tool, input);
}

/** Checks each answer's code against `want`, in order; the answers. */
function expectCodes(answers: readonly Answer[], want: readonly string[], what: string): void {
  const got = codesOf(answers);
  expect(
    JSON.stringify(got) === JSON.stringify(want),
    `${what}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)} (${answers
      .map((a) => a.error?.message ?? '')
      .filter((m) => m !== '')
      .join(' | ')
      .slice(0, 1500)})`,
  );
}

// ------------------------------------------------------------------------------------------------
// Docker
// ------------------------------------------------------------------------------------------------

const dockerRefusalPolicy = (env: CheckEnv): PolicyDocument =>
  policyWith(env, {
    grants: { '*': [...DEFAULT_GRANTS, 'docker.*'], 'd.tool': ['docker.run'], 'd.noentry': ['docker.run'] },
    docker: {
      images: [ABSENT, ABSENT2],
      tools: { 'd.tool': { images: [ABSENT], env: ['ALLOWED'] }, 'd.wild': {} },
      ceilings: { memoryBytes: 64 * 1024 * 1024, pids: 16, timeoutMs: 10_000, maxStdoutBytes: 4096, maxWorkspaceInputBytes: 100 },
    },
  });

const dockerRefusalPacks = () => [
  scriptPack('d.tool', ['docker.run']),
  scriptPack('d.noentry', ['docker.run']),
  scriptPack('d.wild', ['docker.run']),
];

/** Starts the check's host with DOCKER_HOST at a counting socket and its own work root; waits for the start's sweep. */
async function refusalHost(ctx: CheckContext): Promise<{ host: Host; work: string; engineCalls: () => number }> {
  const socket = await countingDockerSocket(ctx);
  const work = dockerWork(ctx);
  const host = await ctx.host();
  await host.dockerSweep;
  const afterSweep = socket.connections();
  ctx.observe('engine_connections_at_start', afterSweep);
  return { host, work, engineCalls: () => socket.connections() - afterSweep };
}

/** Fails unless nothing reached the engine and no workspace was made. */
function expectNothingRan(ctx: CheckContext, work: string, engineCalls: () => number): void {
  ctx.observe('engine_connections_during_calls', engineCalls());
  ctx.observe('workspaces_made', readdirSync(work).length);
  expect(engineCalls() === 0, `the refused calls reached the Docker engine ${engineCalls()} times`);
  expect(readdirSync(work).length === 0, `the refused calls left workspaces: ${readdirSync(work).join(', ')}`);
}

const dockerChecks: Check[] = [
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

// The real engine: docker.run through a real guest and broker.
const dockerRealPolicy = (env: CheckEnv): PolicyDocument =>
  policyWith(env, {
    grants: { 'd.tool': ['docker.run'] },
    docker: {
      images: [imageId, ABSENT],
      tools: { 'd.tool': {} },
      ceilings: {
        memoryBytes: 128 * 1024 * 1024,
        pids: 32,
        tmpfsBytes: 8 * 1024 * 1024,
        timeoutMs: 60_000,
        maxOutputFileBytes: 4096,
        maxStdoutBytes: 65536,
      },
    },
  });

const sh = (command: string) => ['/bin/busybox', 'sh', '-c', command];

const dockerRealChecks: Check[] = [
  {
    id: 'privileged.docker-confinement',
    title: 'A container tries to be root, write its root, reach the network, keep capabilities, fork without end and eat memory',
    category: 'privileged',
    abi: ['ABI-DOCKER-005'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'the process is uid:gid 65534:65534 with only lo, a read-only root and a writable /tmp, CapEff and CapBnd 0, NoNewPrivs 1; forks past pids fail; passing memory_bytes is oom_killed; argv[0] is the entrypoint; an allowlisted image the engine lacks is P-PRECOND-DOCKER-IMAGE-MISSING',
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const img = await image();
      dockerWork(ctx);
      const probe =
        'id -u; id -g; ls /sys/class/net | tr "\\n" " "; echo; touch /probe 2>/dev/null && echo root=rw || echo root=ro; echo x > /tmp/ok && echo tmp=rw; grep -E "^(CapEff|CapBnd|NoNewPrivs)" /proc/self/status';
      const answers = answersOf(
        await script(ctx, 'd.tool', 'docker.run', [
          { image: img, argv: sh(probe) },
          {
            image: img,
            argv: sh('for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; echo started'),
            limits: { pids: 6, timeout_ms: 15_000 },
          },
          { image: img, argv: sh('x=$(head -c 200m /dev/zero | tr "\\0" a); echo survived'), limits: { memory_bytes: 32 * 1024 * 1024 } },
          { image: img, argv: ['seqkit', 'version'] },
          { image: ABSENT, argv: ['/bin/true'] },
        ]),
      );
      const [conf, forks, hog, entry, missing] = answers.map((a) => a.capability_result?.result);
      const lines = String(conf?.stdout ?? '').split('\n');
      ctx.observe('probe', lines);
      expect(
        JSON.stringify(lines) ===
          JSON.stringify([
            '65534',
            '65534',
            'lo ',
            'root=ro',
            'tmp=rw',
            'CapEff:\t0000000000000000',
            'CapBnd:\t0000000000000000',
            'NoNewPrivs:\t1',
            '',
          ]),
        `the container is not confined as ABI-DOCKER-005 says: ${JSON.stringify(lines)}`,
      );
      expect(
        /can't fork|Resource temporarily unavailable/.test(String(forks?.stderr)),
        `forks past pids did not fail: ${JSON.stringify(forks)}`,
      );
      expect(
        hog?.oom_killed === true && !String(hog?.stdout).includes('survived'),
        `a container past memory_bytes was not killed: ${JSON.stringify(hog)}`,
      );
      expect(
        entry?.exit_code === 0 && /^seqkit v2\./.test(String(entry?.stdout)),
        `argv[0] was not the entrypoint: ${JSON.stringify(entry)}`,
      );
      expect(
        answers[4]!.error?.code === 'P-PRECOND-DOCKER-IMAGE-MISSING' && missing === undefined,
        `an image the engine lacks: ${JSON.stringify(answers[4])}`,
      );
      ctx.observe('pids_stderr', String(forks?.stderr).slice(0, 200));
      ctx.observe('oom_killed', hog?.oom_killed);
    },
  },
  {
    id: 'privileged.docker-result-bounds',
    title: 'A container floods stdout, writes binary, exits non-zero, outlives its timeout; each is bounded and its container removed',
    category: 'privileged',
    abi: ['ABI-DOCKER-006', 'ABI-DOCKER-007'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'stdout cut at max_stdout_bytes with stdout_truncated; binary stdout base64; a non-zero exit is a result; at timeout_ms the container is killed (exit_code null, timed_out); every container carries helix.run_id, helix.tool, helix.host, helix.pid and none is left after the call',
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const img = await image();
      const work = dockerWork(ctx);
      const host = await ctx.host();
      // Labels, seen while a container of the call runs.
      let labels: Record<string, string> | undefined;
      let watching = true;
      const watcher = (async () => {
        const docker = new Docker();
        while (watching && labels === undefined) {
          const found = await docker.listContainers({
            all: true,
            filters: { label: [`${LABEL_HOST}=${helixHostName()}`, 'helix.tool=d.tool'] },
          });
          labels = found[0]?.Labels;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const since = eventsSince();
      const r = await script(ctx, 'd.tool', 'docker.run', [
        { image: img, argv: sh('yes helix | head -c 100000'), limits: { max_stdout_bytes: 1000 } },
        { image: img, argv: sh('printf "\\377\\376\\000\\001"') },
        { image: img, argv: sh('echo out; echo oops >&2; exit 3') },
        { image: img, argv: ['/bin/busybox', 'sleep', '600'], limits: { timeout_ms: 1500 } },
      ]);
      watching = false;
      await watcher;
      const results = answersOf(r).map((a) => a.capability_result?.result);
      const [flood, binary, failed, late] = results;
      expect(
        flood?.stdout_truncated === true && flood.stdout.length === 1000 && flood.exit_code === 0,
        `stdout was not cut at max_stdout_bytes: ${JSON.stringify(flood).slice(0, 300)}`,
      );
      expect(
        binary?.stdout_encoding === 'base64' && Buffer.from(binary.stdout, 'base64').equals(Buffer.from([0xff, 0xfe, 0, 1])),
        `binary stdout was not base64: ${JSON.stringify(binary)}`,
      );
      expect(
        failed?.exit_code === 3 && failed.stdout === 'out\n' && failed.stderr === 'oops\n',
        `a non-zero exit is not a plain result: ${JSON.stringify(failed)}`,
      );
      expect(late?.timed_out === true && late.exit_code === null, `the container was not killed at timeout_ms: ${JSON.stringify(late)}`);
      const created = await containersCreated(r.run_id!, since);
      const left = await containersLeft(r.run_id!);
      ctx.observe('containers_created', created);
      ctx.observe('containers_left', left);
      ctx.observe('labels', labels);
      expect(created === 4, `the engine created ${created} containers for the run, not 4`);
      expect(left === 0, `${left} containers of the run are left on the engine`);
      expect(
        labels !== undefined &&
          labels[LABEL_RUN] === r.run_id &&
          labels['helix.tool'] === 'd.tool' &&
          labels[LABEL_HOST] === helixHostName() &&
          labels[LABEL_PID] === String(process.pid),
        `the container's labels: ${JSON.stringify(labels)}`,
      );
      expect(readdirSync(work).length === 0, `workspaces were left: ${readdirSync(work).join(', ')}`);
      void host;
    },
  },
  {
    id: 'privileged.docker-leftover-sweep',
    title: "A host's start sweeps containers and workspaces a dead Helix process left, and never a live process's or another host's",
    category: 'privileged',
    abi: ['ABI-DOCKER-007'],
    engines: ['container'],
    services: ['docker'],
    expected:
      "the start's sweep removes the container labelled with this host and a dead pid and the workspace named after the dead pid; the live process's container and workspace and another host's container stay",
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'])],
    async run(ctx) {
      const img = await image();
      const work = dockerWork(ctx);
      const name = `helix-conformance-${path.basename(ctx.env.dir)}`;
      setEnv(ctx, 'HELIX_HOST_NAME', name);
      const docker = new Docker();
      const dead = 2 ** 22 + 1; // above Linux's pid_max: no process has it
      const labels = (host: string, pid: number) => ({
        [LABEL_HOST]: host,
        [LABEL_PID]: String(pid),
        [LABEL_RUN]: 'run_conformance_sweep',
        'helix.tool': 'd.tool',
      });
      const leftover = await docker.createContainer({ Image: img, Cmd: ['seqkit', 'version'], Labels: labels(name, dead) });
      const live = await docker.createContainer({ Image: img, Cmd: ['seqkit', 'version'], Labels: labels(name, process.pid) });
      const other = await docker.createContainer({ Image: img, Cmd: ['seqkit', 'version'], Labels: labels(`${name}-other`, dead) });
      ctx.defer(async () => {
        for (const c of [leftover, live, other]) await c.remove({ force: true }).catch(() => undefined);
      });
      mkdirSync(path.join(work, `${dead}-crashed`, 'out'), { recursive: true });
      mkdirSync(path.join(work, `${process.pid}-running`));
      const host = await ctx.host();
      const swept = await host.dockerSweep;
      ctx.observe('swept', swept);
      expect(
        swept !== undefined && JSON.stringify(swept.containers) === JSON.stringify([leftover.id]),
        `the sweep removed ${JSON.stringify(swept?.containers)}, not only the leftover ${leftover.id}`,
      );
      expect(
        JSON.stringify(swept!.workspaces) === JSON.stringify([`${dead}-crashed`]),
        `the sweep removed workspaces ${JSON.stringify(swept!.workspaces)}`,
      );
      const exists = async (c: Docker.Container) =>
        c.inspect().then(
          () => true,
          () => false,
        );
      expect(!(await exists(leftover)), 'the leftover container is still there');
      expect((await exists(live)) && (await exists(other)), "the sweep removed a live process's or another host's container");
      expect(existsSync(path.join(work, `${process.pid}-running`)), "the sweep removed a live process's workspace");
    },
  },
  {
    id: 'privileged.docker-hostile-outputs',
    title:
      'A container leaves a symbolic link to /etc/passwd, a FIFO, a directory, an oversized file, and half an output before its timeout',
    category: 'privileged',
    abi: ['ABI-DOCKER-008', 'ABI-DOCKER-009'],
    engines: ['container'],
    services: ['docker'],
    expected:
      'each hostile output fails the docker.run with S-TOOL-DOCKER-OUTPUT (details.file and details.reason) and nothing of it is read; an output written before a timeout is missing, not registered; in/ and meta/ are read-only, out/ belongs to 65534; the workspace is removed every time',
    policy: (_e, env) => dockerRealPolicy(env),
    packs: () => [scriptPack('d.tool', ['docker.run'], { declaredOutputs: [{ role: 'any', type: 'binary' }] })],
    async run(ctx) {
      const img = await image();
      const work = dockerWork(ctx);
      const host = await ctx.host();
      const reads = (await host.artifacts.importInline('>a\nACGT\n', { label: 'reads' })).id;
      const out = [{ file: 'x', role: 'any' }];
      const cases: Array<[string, RegExp]> = [
        ['ln -s /etc/passwd out/x', /symbolic link/],
        ['mkfifo out/x', /FIFO/],
        ['mkdir out/x', /directory/],
        ['head -c 5000 /dev/zero > out/x', /5000 bytes, over docker\.ceilings\.maxOutputFileBytes \(4096\)/],
      ];
      const calls = [
        ...cases.map(([c]) => ({ image: img, argv: sh(c), outputs: out, inputs: [{ name: 'reads.fa', artifact_id: reads }] })),
        { image: img, argv: sh('echo partial > out/x; sleep 600'), outputs: out, limits: { timeout_ms: 1500 } },
        {
          image: img,
          argv: sh(
            'for p in /work/in/x /work/meta/x /work/x /x; do touch $p 2>/dev/null && echo "$p=rw" || echo "$p=ro"; done; ls -nd /work/out | awk "{print \\$3}"',
          ),
          inputs: [{ name: 'reads.fa', artifact_id: reads }],
        },
        // The run must create its declared output to succeed: a last call seals it.
        { image: img, argv: sh('echo sealed > out/x'), outputs: [{ file: 'x', role: 'any', type: 'binary' }] },
      ];
      const r = await script(ctx, 'd.tool', 'docker.run', calls);
      const answers = answersOf(r);
      const reasons: string[] = [];
      for (const [i, [command, reason]] of cases.entries()) {
        const a = answers[i]!;
        reasons.push(
          `${command} -> ${a.error?.code ?? 'ok'}: ${a.error?.details?.reason ?? JSON.stringify(a.capability_result?.result?.outputs)}`,
        );
        expect(
          a.error?.code === 'S-TOOL-DOCKER-OUTPUT' && a.error.details.file === 'x' && reason.test(String(a.error.details.reason)),
          `${command}: expected S-TOOL-DOCKER-OUTPUT /${reason.source}/, got ${JSON.stringify(a)}`,
        );
      }
      ctx.observe('reasons', reasons);
      const late = answers[4]!.capability_result?.result;
      expect(
        late?.timed_out === true && late.outputs.length === 0 && JSON.stringify(late.missing_outputs) === '["x"]',
        `an output written before the timeout was read: ${JSON.stringify(late)}`,
      );
      const probe = String(answers[5]!.capability_result?.result?.stdout ?? '').split('\n');
      ctx.observe('workspace_probe', probe);
      expect(
        JSON.stringify(probe.slice(0, 5)) === JSON.stringify(['/work/in/x=ro', '/work/meta/x=ro', '/work/x=ro', '/x=ro', '65534']),
        `the workspace mounts are not as ABI-DOCKER-008 says: ${JSON.stringify(probe)}`,
      );
      // The run itself has no `any` output registered from the refused calls.
      const run = host.runs.get(r.run_id!);
      ctx.observe('run_outputs', run?.outputs);
      expect(readdirSync(work).length === 0, `workspaces were left: ${readdirSync(work).join(', ')}`);
    },
  },
];

// ------------------------------------------------------------------------------------------------
// Container toolpacks
// ------------------------------------------------------------------------------------------------

const SEQ_INPUT = { type: 'object', required: ['sequences'], properties: { sequences: { type: 'string', 'x-helix-artifact': true } } };
const GREP_INPUT = {
  type: 'object',
  required: ['sequences', 'pattern'],
  properties: { sequences: { type: 'string', 'x-helix-artifact': true }, pattern: { type: 'string' } },
};

const containerChecks: Check[] = [
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
        docker: { images: [imageId], pins: { 'helix-seqkit:local': imageId }, tools: { 'c.lit': {} } },
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
          images: [imageId],
          pins: { 'helix-seqkit:local': imageId },
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

// ------------------------------------------------------------------------------------------------
// Slurm
// ------------------------------------------------------------------------------------------------

const SLURM = ['slurm.submit', 'slurm.status', 'slurm.cancel', 'slurm.collect'];
const SLURM_CEILINGS = { timeMinutes: 5, cpusPerTask: 1, memoryMiB: 256, outputBytes: 4096, arraySize: 2 };

/** The check's Slurm work root (made now, its real path). */
function jobsDir(env: CheckEnv, name = 'jobs'): string {
  const dir = path.join(env.dir, name);
  mkdirSync(dir, { recursive: true });
  return realpathSync(dir);
}

function slurmPolicy(env: CheckEnv, workRoot: string = jobsDir(env), slurm: Record<string, unknown> = {}): PolicyDocument {
  return policyWith(env, {
    grants: { '*': [...DEFAULT_GRANTS, 'slurm.*'], 's.tool': SLURM, 's.other': SLURM, 's.noentry': SLURM },
    slurm: {
      partitions: ['debug'],
      accounts: ['lab1', 'lab2'],
      qos: ['normal'],
      workRoot,
      tools: { 's.tool': { accounts: ['lab1'] }, 's.other': {}, 's.wild': {} },
      ceilings: SLURM_CEILINGS,
      ...slurm,
    },
  });
}

/** The real cluster's policy: its one partition and QOS, no account list. */
function realSlurmPolicy(env: CheckEnv): PolicyDocument {
  return slurmPolicy(env, jobsDir(env), { accounts: [], tools: { 's.tool': {}, 's.other': {} } });
}

const slurmPacks = () => ['s.tool', 's.other', 's.noentry', 's.wild'].map((id) => scriptPack(id, [...SLURM, 'log.emit']));

/** Cancels, when the check ends, every job the check's calls submitted. */
function cancelAtEnd(ctx: CheckContext): (jobId: string) => string {
  const jobs = new Set<string>();
  ctx.defer(async () => {
    if (jobs.size > 0) await runSlurmCommand('scancel', [...jobs]).catch(() => undefined);
  });
  return (jobId) => (jobs.add(jobId), jobId);
}

const submit = (args: Record<string, unknown>) => args;

/** The answer the run's first journaled capability call got (a failed run's output is not returned). */
function firstJournalAnswer(host: Host, runId: string): Answer {
  const entry = readJournal(hostStore(host), runId)[0] as { result?: unknown; error?: unknown } | undefined;
  if (entry === undefined) throw new CheckFailure(`run ${runId} journaled no call`);
  return (
    entry.error !== undefined && entry.error !== null
      ? { status: 'error', error: entry.error }
      : { status: 'ok', capability_result: { name: 'slurm.submit', result: entry.result } }
  ) as Answer;
}

const slurmChecks: Check[] = [
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

// ------------------------------------------------------------------------------------------------
// Fan-out
// ------------------------------------------------------------------------------------------------

const FAN_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['sequences'],
  properties: { sequences: { type: 'string', 'x-helix-artifact': true }, label: { type: 'string' } },
};

const fanPacks = () => [
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

function fanPolicy(env: CheckEnv): PolicyDocument {
  return policyWith(env, {
    grants: { 'f.secret': ['secrets.get.db_password'] },
    slurm: { partitions: ['debug'], workRoot: jobsDir(env), tools: { 'f.echo': {} }, ceilings: { ...SLURM_CEILINGS, arraySize: 2 } },
  });
}

/** The check's policy as a file the CLI reads. */
function fanPolicyFile(env: CheckEnv): string {
  const file = path.join(env.dir, 'fanout-policy.json');
  writeFileSync(file, JSON.stringify(fanPolicy(env)));
  return file;
}

/** What the submitting store holds: a refused or repeated collect must leave it as it was. */
function snapshot(host: Host, runId: string): string {
  return JSON.stringify({
    run: host.runs.get(runId) ?? null,
    artifacts: host.artifacts.list({ limit: 10_000 }).length,
    audit: readAudit(hostStore(host)).length,
  });
}

/** The code a promise is refused with, or `done`. */
async function refusedWith(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'done',
    (e: unknown) => (isHelixError(e) ? e.code : `not a HelixError: ${e instanceof Error ? e.message : String(e)}`),
  );
}

/** A bundle of f.echo over a new artifact, written from the check's host. */
async function bundle(
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
function copyOf(ctx: CheckContext, dir: string, name: string): string {
  const copy = path.join(ctx.env.dir, name);
  cpSync(dir, copy, { recursive: true });
  return copy;
}

const fanoutChecks: Check[] = [
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
        ['directory', (d) => (rmSync(path.join(d, 'job.json')), mkdirSync(path.join(d, 'job.json'))), 'job.json'],
        ['fifo', (d) => (rmSync(path.join(d, 'job.json')), execMkfifo(path.join(d, 'job.json'))), 'job.json'],
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
  {
    id: 'privileged.fanout-tampered-job',
    title:
      'A node refuses a job bundle whose params, policy or input bytes were changed, whose run id was forged, or whose toolpack is another build',
    category: 'privileged',
    abi: ['ABI-FANOUT-004', 'ABI-FANOUT-006'],
    engines: ['helix'],
    expected:
      'params.json, policy.json or an input blob changed is D-DATA-BUNDLE-HASH; a forged run id, or the plugins dir holding another module build, is C-CONTRACT-JOB-TOOL; each exits 1 and writes a result holding the refusal and no run; collecting it reports refused and writes nothing',
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
      const plugins = await ctx.pluginsDir();
      const work = jobsDir(ctx.env);
      const submitCli = (tool: string, dir: string, args: readonly string[]) =>
        helixCli(
          ['job', 'submit', tool, '--input', '{}', '--dir', dir, '--home', host.home, '--plugins', plugins, '--policy', policy, ...args],
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
      const plugins = await ctx.pluginsDir();
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
        '--plugins',
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

/** Makes a FIFO at `file`. */
function execMkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}

export const privilegedChecks: readonly Check[] = [
  ...dockerChecks,
  ...dockerRealChecks,
  ...containerChecks,
  ...slurmChecks,
  ...fanoutChecks,
];
