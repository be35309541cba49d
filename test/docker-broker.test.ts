// docker.run reached the way a tool reaches it: a real guest in a real worker asks the broker,
// which grants it only by exact name (a wildcard never covers it), journals the answer, and
// refuses a tag or an ungranted image before any container exists.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { LABEL_RUN } from '../capabilities/docker-container.js';
import { hostStore } from '../host/5-host/host.js';
import { createHost, type Host } from '../host/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { readAudit } from '../host/3-store/audit.js';
import { compileGuest } from './helpers/as-guest.js';
import { type Answer, UP_BOUND_MS, upDocker, CALL_BOUND_MS, GUEST_LIMITS as limits } from './helpers/docker-services.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const home = tempDir('helix-home-');
let host: Host;
let plugins: { dir: string; cleanup: () => void };
let image: string;

beforeAll(async () => {
  image = await upDocker();
  const script = await compileGuest('script.ts');
  const allow = { abiVersion: 1, allow: ['docker.run'] };
  plugins = await toolpacksDir([
    { id: 'd.granted', module: script, manifest: { timeoutMs: CALL_BOUND_MS, limits, capabilities: allow } },
    { id: 'd.wildcard', module: script, manifest: { timeoutMs: CALL_BOUND_MS, limits, capabilities: allow } },
  ]);
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  const docker = ['docker:', `  images: ["${image}"]`, '  tools:', '    d.granted: {}', '    d.wildcard: {}'];
  writeFileSync(
    policyFile,
    ['version: 1', 'tools: { allow: ["*"] }', 'grants:', '  "*": ["docker.*"]', '  d.granted: ["docker.run"]', ...docker, ''].join('\n'),
  );
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
}, UP_BOUND_MS + 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

async function script(tool: string, calls: Array<Record<string, unknown>>): Promise<{ runId: string; answers: Answer[] }> {
  const r = ResponseEnvelopeSchema.parse(
    await host.call({ tool_id: tool, input: { calls: calls.map((args) => ({ name: 'docker.run', args })) } }),
  );
  expect(r.status).toBe('success');
  return { runId: r.run_id!, answers: (r.output as { answers: Answer[] }).answers };
}

describe('docker.run through the broker', () => {
  it(
    'runs for a tool granted docker.run by exact name, and leaves no container',
    async () => {
      const { runId, answers } = await script('d.granted', [
        { image, argv: ['seqkit', 'version'] },
        { image, argv: ['/bin/busybox', 'false'] },
      ]);
      expect(answers[0]).toMatchObject({
        status: 'ok',
        capability_result: {
          name: 'docker.run',
          result: { exit_code: 0, stdout: expect.stringMatching(/^seqkit v2\./), timed_out: false },
        },
      });
      expect(answers[1]).toMatchObject({ status: 'ok', capability_result: { result: { exit_code: 1 } } });
      expect(await new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${runId}`] } })).toEqual([]);
      expect(
        readAudit(hostStore(host))
          .filter((a) => a.run_id === runId)
          .map((a) => a.decision),
      ).toEqual(['allowed', 'allowed']);
      expect(getRun(hostStore(host), runId)!.journal.entries).toBe(2);
    },
    CALL_BOUND_MS,
  );

  it(
    'refuses a tool that only a wildcard grant covers',
    async () => {
      const r = ResponseEnvelopeSchema.parse(
        await host.call({
          tool_id: 'd.wildcard',
          input: { calls: [{ name: 'docker.run', args: { image, argv: ['seqkit', 'version'] } }] },
        }),
      );
      expect(r).toMatchObject({
        status: 'terminal_error',
        error: { code: 'A-AUTH-CAPABILITY-NOT-GRANTED', details: { capabilities: ['docker.run'] } },
      });
    },
    CALL_BOUND_MS,
  );

  it(
    'answers a tag, an unlisted image and a field asking for privilege with precise errors the guest can read',
    async () => {
      const { answers } = await script('d.granted', [
        { image: 'helix-seqkit:local', argv: ['seqkit', 'version'] },
        { image: `sha256:${'f'.repeat(64)}`, argv: ['seqkit', 'version'] },
        { image, argv: ['seqkit', 'version'], privileged: true },
        { image, argv: ['seqkit', 'version'], network: 'host' },
      ]);
      expect(answers.map((a) => a.error?.code)).toEqual([
        'I-REQ-DOCKER-IMAGE-REF',
        'A-AUTH-DOCKER-IMAGE',
        'I-REQ-CAPABILITY-ARGS',
        'A-AUTH-DOCKER-NETWORK',
      ]);
      expect(answers[2]!.error!.details.violations).toEqual([expect.objectContaining({ message: expect.stringContaining('privileged') })]);
    },
    CALL_BOUND_MS,
  );
});
