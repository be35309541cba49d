// docker.run's refusals: each decided from the arguments and the policy alone, before any engine is asked.
import { describe, expect, it } from 'vitest';
import { HelixError, PolicySchema, type PolicyInput } from '../abi/index.js';
import { DockerRunArgsSchema, planDockerRun } from './docker-request.js';

const ID = `sha256:${'a'.repeat(64)}`;
const OTHER = `sha256:${'b'.repeat(64)}`;
const DIGEST = `quay.io/biocontainers/seqkit@sha256:${'c'.repeat(64)}`;

function policy(docker?: PolicyInput['docker']) {
  return PolicySchema.parse({
    version: 1,
    tools: { allow: ['*'] },
    grants: { 'seq.stats': ['docker.run'] },
    ...(docker === undefined ? {} : { docker }),
  });
}
const granted = policy({
  images: [ID, OTHER, DIGEST],
  tools: { 'seq.stats': { images: [ID, DIGEST], env: ['LC_ALL'] }, 'net.fetch': { network: 'bridge' } },
  ceilings: { memoryBytes: 256 * 1024 * 1024, cpus: 2, timeoutMs: 30_000 },
});

function refusal(args: unknown, toolId = 'seq.stats', p = granted): HelixError {
  try {
    planDockerRun(DockerRunArgsSchema.parse(args), toolId, p);
  } catch (err) {
    expect(err).toBeInstanceOf(HelixError);
    return err as HelixError;
  }
  throw new Error('expected docker.run to be refused');
}

describe('docker.run arguments and policy', () => {
  it('plans an allowed call with every limit at its ceiling unless asked lower', () => {
    const plan = planDockerRun(
      DockerRunArgsSchema.parse({ image: DIGEST, argv: ['seqkit', 'version'], env: { LC_ALL: 'C' }, limits: { cpus: 0.5 } }),
      'seq.stats',
      granted,
    );
    expect(plan).toEqual({
      image: DIGEST,
      argv: ['seqkit', 'version'],
      env: ['LC_ALL=C'],
      network: 'none',
      limits: {
        memoryBytes: 256 * 1024 * 1024,
        cpus: 0.5,
        pids: 128,
        tmpfsBytes: 64 * 1024 * 1024,
        timeoutMs: 30_000,
        maxStdoutBytes: 256 * 1024,
        maxStderrBytes: 256 * 1024,
        maxLogBytes: 16 * 1024 * 1024,
        maxWorkspaceInputBytes: 4 * 1024 ** 3,
        maxOutputFileBytes: 1024 ** 3,
      },
      inputs: [],
      outputs: [],
      logs: {},
    });
  });

  it('refuses a tag, with the pointer and a hint naming how to find the id', () => {
    for (const image of ['seqkit', 'biocontainers/seqkit:2.8.0', `seqkit:latest@sha256:${'c'.repeat(63)}`]) {
      const err = refusal({ image, argv: ['seqkit'] });
      expect(err.code).toBe('I-REQ-DOCKER-IMAGE-REF');
      expect(err.details).toMatchObject({ pointer: '/image', image });
      expect(err.hint).toContain('docker image inspect');
    }
  });

  it("refuses an image off the allowlist, off the tool's list, or for a tool without an entry", () => {
    expect(refusal({ image: `sha256:${'d'.repeat(64)}`, argv: ['x'] })).toMatchObject({ code: 'A-AUTH-DOCKER-IMAGE' });
    expect(refusal({ image: OTHER, argv: ['x'] }).message).toBe(
      `docker.run refused: ${OTHER} is not among the images the policy lets seq.stats run.`,
    );
    expect(refusal({ image: ID, argv: ['x'] }, 'seq.other').message).toBe(
      "docker.run refused: the policy's docker.tools has no entry for seq.other.",
    );
    expect(refusal({ image: ID, argv: ['x'] }, 'seq.stats', policy()).code).toBe('A-AUTH-DOCKER-IMAGE');
    expect(refusal({ image: ID, argv: ['x'] }, 'constructor').code).toBe('A-AUTH-DOCKER-IMAGE');
  });

  it('refuses bridge unless granted, and host always', () => {
    expect(refusal({ image: ID, argv: ['x'], network: 'bridge' })).toMatchObject({
      code: 'A-AUTH-DOCKER-NETWORK',
      details: { pointer: '/network', granted: 'none' },
    });
    expect(refusal({ image: ID, argv: ['x'], network: 'host' }, 'net.fetch').message).toBe(
      'docker.run refused network host: host network is never granted.',
    );
    expect(planDockerRun(DockerRunArgsSchema.parse({ image: OTHER, argv: ['x'], network: 'bridge' }), 'net.fetch', granted).network).toBe(
      'bridge',
    );
  });

  it('refuses an environment name the tool was not granted', () => {
    const err = refusal({ image: ID, argv: ['x'], env: { LC_ALL: 'C', LD_PRELOAD: '/tmp/x.so' } });
    expect(err).toMatchObject({
      code: 'A-AUTH-DOCKER-ENV',
      details: { pointer: '/env/LD_PRELOAD', name: 'LD_PRELOAD', allowed: ['LC_ALL'] },
    });
  });

  it('refuses each limit over its ceiling, naming the limit, the request and the ceiling', () => {
    const err = refusal({ image: ID, argv: ['x'], limits: { memory_bytes: 256 * 1024 * 1024 + 1 } });
    expect(err).toMatchObject({
      code: 'A-AUTH-DOCKER-LIMIT',
      details: {
        pointer: '/limits/memory_bytes',
        asked: 256 * 1024 * 1024 + 1,
        ceiling: 256 * 1024 * 1024,
        field: 'docker.ceilings.memoryBytes',
      },
    });
    expect(refusal({ image: ID, argv: ['x'], limits: { cpus: 2.5 } }).details.field).toBe('docker.ceilings.cpus');
    expect(refusal({ image: ID, argv: ['x'], limits: { pids: 129 } }).details.field).toBe('docker.ceilings.pids');
    expect(refusal({ image: ID, argv: ['x'], limits: { tmpfs_bytes: 2 ** 30 } }).details.field).toBe('docker.ceilings.tmpfsBytes');
    expect(refusal({ image: ID, argv: ['x'], limits: { timeout_ms: 30_001 } }).details.field).toBe('docker.ceilings.timeoutMs');
    expect(refusal({ image: ID, argv: ['x'], limits: { max_stdout_bytes: 2 ** 18 + 1 } }).details.field).toBe(
      'docker.ceilings.maxStdoutBytes',
    );
    expect(refusal({ image: ID, argv: ['x'], limits: { max_stderr_bytes: 2 ** 18 + 1 } }).details.field).toBe(
      'docker.ceilings.maxStderrBytes',
    );
  });

  it('refuses a workspace name that is not a plain file name, and entries that would be one file or one role', () => {
    const input = (name: string) => ({ name, artifact_id: 'art_1' });
    for (const name of ['../x', 'a/b', '.hidden', '-rf', '', 'a b', 'x'.repeat(129), 'é']) {
      expect(refusal({ image: ID, argv: ['x'], inputs: [input(name)] })).toMatchObject({
        code: 'I-REQ-DOCKER-WORKSPACE-NAME',
        details: { pointer: '/inputs/0/name', name },
      });
    }
    expect(
      refusal({
        image: ID,
        argv: ['x'],
        outputs: [
          { file: 'ok', role: 'a' },
          { file: '..', role: 'b' },
        ],
      }).details,
    ).toEqual({ pointer: '/outputs/1/file', name: '..' });
    expect(refusal({ image: ID, argv: ['x'], inputs: [input('R.fa'), input('r.FA')] })).toMatchObject({
      code: 'I-REQ-DOCKER-WORKSPACE-COLLISION',
      details: { pointer: '/inputs/1/name', first: '/inputs/0/name' },
    });
    expect(refusal({ image: ID, argv: ['x'], outputs: [{ file: 'a', role: 'r' }], logs: { stderr: 'r' } })).toMatchObject({
      code: 'I-REQ-DOCKER-WORKSPACE-COLLISION',
      details: { pointer: '/logs/stderr', first: '/outputs/0/role' },
    });
    // in/ and out/ are two directories: an input and an output may share a name.
    const plan = planDockerRun(
      DockerRunArgsSchema.parse({ image: ID, argv: ['x'], inputs: [input('a.fa')], outputs: [{ file: 'a.fa', role: 'r' }] }),
      'seq.stats',
      granted,
    );
    expect(plan.outputs).toEqual([{ file: 'a.fa', role: 'r' }]);
  });

  it('refuses argv entries that are not plain strings, and any field asking for privilege', () => {
    const bad = (args: unknown) => DockerRunArgsSchema.safeParse(args).error?.issues.map((i) => `${i.path.join('/')}: ${i.code}`);
    expect(bad({ image: ID, argv: ['seqkit', 3, { a: 1 }, null] })).toEqual([
      'argv/1: invalid_type',
      'argv/2: invalid_type',
      'argv/3: invalid_type',
    ]);
    expect(bad({ image: ID, argv: ['a\0b'] })).toEqual(['argv/0: custom']);
    expect(bad({ image: ID, argv: [] })).toEqual(['argv: too_small']);
    expect(bad({ image: ID, argv: ['', 'x'] })).toEqual(['argv/0: custom']);
    expect(bad({ image: ID, argv: ['x'], limits: { memory_bytes: 1024, cpus: 0.001 } })).toEqual([
      'limits/memory_bytes: too_small',
      'limits/cpus: too_small',
    ]);
    expect(bad({ image: ID, argv: 'seqkit version' })).toEqual(['argv: invalid_type']);
    expect(bad({ image: ID, argv: ['x'], env: { A: 1 } })).toEqual(['env/A: invalid_type']);
    for (const key of ['privileged', 'cap_add', 'user', 'volumes', 'devices'])
      expect(bad({ image: ID, argv: ['x'], [key]: true })).toEqual([': unrecognized_keys']);
  });
});
