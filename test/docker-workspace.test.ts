// docker.run's workspace against the real dockerd of scripts/services.sh, reached through a real
// guest and broker: input artifacts materialised in /work/in, declared outputs in /work/out
// registered as the run's artifacts, stdout and stderr kept as log artifacts, the workspace the
// only writable mount and removed afterwards; outputs that are links, FIFOs, directories or too
// large refused; bad names, collisions, unknown artifacts and undeclared roles refused before any
// container exists (no create event on the engine).
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import type { DockerRunResult } from '../capabilities/docker-run.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost, type Host } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { compileGuest } from './helpers/as-guest.js';
import {
  type Answer,
  containersCreated,
  eventsSince,
  UP_BOUND_MS,
  upDocker,
  CALL_BOUND_MS,
  GUEST_LIMITS as limits,
} from './helpers/docker-services.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const FASTA = '>a\nACGTACGTGG\n>b\nGGCC\n';
const home = tempDir('helix-home-');
const work = tempDir('helix-work-');
let host: Host;
let plugins: { dir: string; cleanup: () => void };
let image: string;
let fasta: string;
let savedWorkRoot: string | undefined;

beforeAll(async () => {
  image = await upDocker();
  savedWorkRoot = process.env.HELIX_DOCKER_WORK;
  process.env.HELIX_DOCKER_WORK = work.dir;
  const script = await compileGuest('script.ts');
  const allow = { abiVersion: 1, allow: ['docker.run'] };
  const declaredOutputs = [
    { role: 'stats', type: 'tsv' },
    { role: 'stdout_log', type: 'text' },
    { role: 'stderr_log', type: 'text' },
  ];
  plugins = await toolpacksDir([
    { id: 'd.outputs', module: script, manifest: { timeoutMs: CALL_BOUND_MS, limits, capabilities: allow, declaredOutputs } },
    {
      id: 'd.plain',
      module: script,
      manifest: { timeoutMs: CALL_BOUND_MS, limits, capabilities: allow, declaredOutputs: [{ role: 'any', type: 'binary' }] },
    },
  ]);
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  const docker = [
    'docker:',
    `  images: ["${image}"]`,
    '  tools: { d.outputs: {}, d.plain: {} }',
    '  ceilings: { maxOutputFileBytes: 4096, maxLogBytes: 1000, pids: 32 }',
  ];
  writeFileSync(
    policyFile,
    ['version: 1', 'tools: { allow: ["*"] }', 'grants:', '  d.outputs: ["docker.run"]', '  d.plain: ["docker.run"]', ...docker, ''].join(
      '\n',
    ),
  );
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
  fasta = (await host.artifacts.importInline(FASTA, { label: 'reads.fa' })).id;
}, UP_BOUND_MS + 120_000);
afterAll(async () => {
  if (savedWorkRoot === undefined) delete process.env.HELIX_DOCKER_WORK;
  else process.env.HELIX_DOCKER_WORK = savedWorkRoot;
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
  work.cleanup();
});

// d.plain's run must create its declared output to succeed: a last call seals it.
const SEAL = { argv: ['/bin/busybox', 'sh', '-c', 'echo sealed > out/x'], outputs: [{ file: 'x', role: 'any', type: 'binary' }] };

/** Runs the guest's docker.run calls (d.plain's with SEAL after them); the response, the answers to `calls`, and the containers the engine created for them. */
async function script(tool: string, calls: Array<Record<string, unknown>>) {
  const since = eventsSince();
  const seal = tool === 'd.plain' ? [SEAL] : [];
  const r = ResponseEnvelopeSchema.parse(
    await host.call({
      tool_id: tool,
      input: { calls: [...calls, ...seal].map((args) => ({ name: 'docker.run', args: { image, ...args } })) },
    }),
  );
  expect(r.status).toBe('success');
  const runId = r.run_id!;
  const created = (await containersCreated(runId, since)) - seal.length;
  const answers = (r.output as { answers: Answer[] }).answers.slice(0, calls.length);
  return { r, runId, answers, created };
}

const sh = (command: string) => ({ argv: ['/bin/busybox', 'sh', '-c', command] });

describe('docker.run workspace', () => {
  it(
    'materialises inputs, registers declared outputs and both logs as the run artifacts, and removes the workspace',
    async () => {
      const command = 'seqkit stats -T in/reads.fa > out/stats.tsv; cat meta/call.json; echo to-stderr >&2';
      const { runId, answers, created } = await script('d.outputs', [
        {
          ...sh(command),
          inputs: [{ name: 'reads.fa', artifact_id: fasta }],
          outputs: [{ file: 'stats.tsv', role: 'stats', type: 'tsv' }],
          logs: { stdout: 'stdout_log', stderr: 'stderr_log' },
        },
      ]);
      expect(created).toBe(1);
      const result = answers[0]!.capability_result!.result as DockerRunResult;
      expect(result).toMatchObject({
        exit_code: 0,
        stderr: 'to-stderr\n',
        missing_outputs: [],
        outputs: [{ file: 'stats.tsv', role: 'stats' }],
      });
      const stats = (await host.artifacts.readBytes(result.outputs[0]!.artifact_id, 1 << 20)).toString();
      expect(stats.split('\n')[1]!.split('\t').slice(0, 5)).toEqual(['in/reads.fa', 'FASTA', 'DNA', '2', '14']);
      // meta/call.json tells the container what it was given, by path and content hash.
      const meta = JSON.parse(result.stdout);
      expect(meta).toMatchObject({
        run_id: runId,
        tool: 'd.outputs',
        inputs: [{ name: 'reads.fa', path: '/work/in/reads.fa', artifact_id: fasta, size: FASTA.length }],
        outputs: [{ file: 'stats.tsv', path: '/work/out/stats.tsv', role: 'stats' }],
      });
      expect((await host.artifacts.readBytes(result.stdout_log!.artifact_id, 1 << 20)).toString()).toBe(result.stdout);
      expect((await host.artifacts.readBytes(result.stderr_log!.artifact_id, 1 << 20)).toString()).toBe('to-stderr\n');
      const run = getRun(hostStore(host), runId)!;
      expect(run.outputs.map((o) => [o.role, o.artifact_id]).sort()).toEqual(
        [
          ['stats', result.outputs[0]!.artifact_id],
          ['stderr_log', result.stderr_log!.artifact_id],
          ['stdout_log', result.stdout_log!.artifact_id],
        ].sort(),
      );
      expect(readdirSync(work.dir)).toEqual([]);
      // helix verify answers docker.run from the journal: the outputs it registered are the run's, no container runs again.
      const since = eventsSince();
      const report = await host.runs.verify(runId);
      expect(report.checks.find((c) => c.check === 'same output artifacts')).toEqual({ check: 'same output artifacts', ok: true });
      expect(report.match).toBe(true);
      expect(await containersCreated(runId, since)).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    'is the only writable place besides /tmp: in/ and meta/ are read-only, out/ belongs to uid 65534',
    async () => {
      const probe =
        'for p in /work/in/x /work/meta/x /work/x /x; do touch $p 2>/dev/null && echo "$p=written" || echo "$p=refused"; done; echo hi > /work/out/ok && ls -n /work/out/ok | awk "{print \\$3}"; ls -ln in/reads.fa | cut -c1-10';
      const { answers } = await script('d.plain', [{ ...sh(probe), inputs: [{ name: 'reads.fa', artifact_id: fasta }] }]);
      expect((answers[0]!.capability_result!.result as DockerRunResult).stdout.split('\n')).toEqual([
        '/work/in/x=refused',
        '/work/meta/x=refused',
        '/work/x=refused',
        '/x=refused',
        '65534',
        '-r--r--r--',
        '',
      ]);
      expect(readdirSync(work.dir)).toEqual([]);
    },
    CALL_BOUND_MS,
  );

  it(
    'refuses an output that is a symbolic link, a FIFO, a directory or over the size cap, without reading it',
    async () => {
      const cases = [
        ['ln -s /etc/passwd out/x', 'it is a symbolic link'],
        ['mkfifo out/x', 'it is a FIFO, not a regular file'],
        ['mkdir out/x', 'it is a directory, not a regular file'],
        ['head -c 5000 /dev/zero > out/x', 'it is 5000 bytes, over docker.ceilings.maxOutputFileBytes (4096)'],
      ] as const;
      for (const [command, reason] of cases) {
        const { answers } = await script('d.plain', [{ ...sh(command), outputs: [{ file: 'x', role: 'any' }] }]);
        expect(answers[0]!.error).toMatchObject({ code: 'S-TOOL-DOCKER-OUTPUT', details: { file: 'x', reason } });
      }
      expect(readdirSync(work.dir)).toEqual([]);
    },
    CALL_BOUND_MS * 2,
  );

  it(
    'lists a declared output the container did not write, and collects nothing after a timeout',
    async () => {
      const { answers } = await script('d.plain', [
        { ...sh('true'), outputs: [{ file: 'x', role: 'any' }] },
        { ...sh('echo partial > out/x; sleep 600'), outputs: [{ file: 'x', role: 'any' }], limits: { timeout_ms: 1500 } },
      ]);
      expect(answers[0]!.capability_result!.result).toMatchObject({ exit_code: 0, outputs: [], missing_outputs: ['x'] });
      expect(answers[1]!.capability_result!.result).toMatchObject({
        exit_code: null,
        timed_out: true,
        outputs: [],
        missing_outputs: ['x'],
      });
      expect(readdirSync(work.dir)).toEqual([]);
    },
    CALL_BOUND_MS,
  );

  it(
    'keeps a log artifact up to maxLogBytes and says the rest was cut',
    async () => {
      const { answers } = await script('d.outputs', [
        {
          ...sh('yes helix | head -c 3000; echo x > out/s'),
          outputs: [{ file: 's', role: 'stats', type: 'tsv' }],
          logs: { stdout: 'stdout_log', stderr: 'stderr_log' },
        },
      ]);
      const result = answers[0]!.capability_result!.result as DockerRunResult;
      expect(result.stdout_log).toMatchObject({ role: 'stdout_log', size: 1000, truncated: true });
      expect(result.stdout).toHaveLength(3000);
      expect((await host.artifacts.readBytes(result.stdout_log!.artifact_id, 1 << 20)).toString()).toBe(
        'helix\n'.repeat(500).slice(0, 1000),
      );
    },
    CALL_BOUND_MS,
  );

  it(
    'refuses bad names, collisions, unknown artifacts and undeclared roles before any container or workspace exists',
    async () => {
      const input = (name: string) => ({ name, artifact_id: fasta });
      const { answers, created } = await script('d.plain', [
        { ...sh('true'), inputs: [input('../etc/passwd')] },
        { ...sh('true'), inputs: [input('a/b')] },
        { ...sh('true'), inputs: [input('.hidden')] },
        { ...sh('true'), inputs: [input('-rf')] },
        { ...sh('true'), outputs: [{ file: '..', role: 'any' }] },
        { ...sh('true'), inputs: [input('reads.fa'), input('READS.fa')] },
        {
          ...sh('true'),
          outputs: [
            { file: 'x', role: 'any' },
            { file: 'y', role: 'any' },
          ],
        },
        { ...sh('true'), inputs: [{ name: 'x', artifact_id: `art_${'0'.repeat(26)}` }] },
        { ...sh('true'), outputs: [{ file: 'x', role: 'stats' }] },
        { ...sh('true'), logs: { stdout: 'log' } },
      ]);
      expect(answers.map((a) => a.error?.code)).toEqual([
        'I-REQ-DOCKER-WORKSPACE-NAME',
        'I-REQ-DOCKER-WORKSPACE-NAME',
        'I-REQ-DOCKER-WORKSPACE-NAME',
        'I-REQ-DOCKER-WORKSPACE-NAME',
        'I-REQ-DOCKER-WORKSPACE-NAME',
        'I-REQ-DOCKER-WORKSPACE-COLLISION',
        'I-REQ-DOCKER-WORKSPACE-COLLISION',
        'P-PRECOND-ARTIFACT-NOT-FOUND',
        'C-CONTRACT-OUTPUT-ROLE',
        'C-CONTRACT-OUTPUT-ROLE',
      ]);
      expect(answers[0]!.error!.details).toEqual({ pointer: '/inputs/0/name', name: '../etc/passwd' });
      expect(answers[5]!.error!.details).toEqual({ pointer: '/inputs/1/name', first: '/inputs/0/name' });
      expect(answers[6]!.error!.details).toEqual({ pointer: '/outputs/1/role', first: '/outputs/0/role' });
      expect(created).toBe(0);
      expect(readdirSync(work.dir)).toEqual([]);
    },
    CALL_BOUND_MS,
  );
});
