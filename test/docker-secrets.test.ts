// A secret a tool reads with secrets.get and hands to a container in its environment: the
// container gets the value (that is what the grant is for), and no record of the host keeps it: the journal keeps docker.run's
// arguments and result, the audit trail and the run record with the secret redacted, and the
// caller's output has it redacted by default (ABI-SECRET-*, ABI-DOCKER-002). Against the real
// dockerd of scripts/services.sh.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { LABEL_RUN } from '../capabilities/docker-container.js';
import { createHost, type Host } from '../host/index.js';
import { compileGuest } from './helpers/as-guest.js';
import { call, formsIn, formsInTree, MARKER, SECRET, type Answer } from './helpers/secret-kit.js';
import { upDocker, UP_BOUND_MS, CALL_BOUND_MS, GUEST_LIMITS as limits } from './helpers/docker-services.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const ENV_SOURCE = 'HELIX_TEST_DOCKER_SECRET';
const home = tempDir('helix-docker-secret-home-');
let host: Host;
let plugins: { dir: string; cleanup: () => void };
let image: string;

beforeAll(async () => {
  image = await upDocker();
  plugins = await toolpacksDir([
    {
      id: 'd.secret',
      module: await compileGuest('secret-paths.ts'),
      manifest: { timeoutMs: CALL_BOUND_MS, limits, capabilities: { abiVersion: 1, allow: ['secrets.get.db_password', 'docker.run'] } },
    },
  ]);
  const policyFile = path.join(plugins.dir, 'policy.yaml');
  writeFileSync(
    policyFile,
    [
      'version: 1',
      'tools: { allow: ["d.secret"] }',
      'grants:',
      '  d.secret: ["docker.run", "secrets.get.db_password"]',
      'secrets:',
      `  db_password: { env: ${ENV_SOURCE} }`,
      'docker:',
      `  images: ["${image}"]`,
      '  tools:',
      '    d.secret: { env: ["TOKEN"] }',
      '',
    ].join('\n'),
  );
  process.env[ENV_SOURCE] = SECRET;
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
}, UP_BOUND_MS + 120_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
  delete process.env[ENV_SOURCE];
});

describe('a secret in a container environment', () => {
  it(
    'reaches the container, and no record of the host keeps it',
    async () => {
      // The guest puts the value it read in place of {{raw}}: the caller's input never holds it.
      const input = {
        secret: 'db_password',
        calls: [
          call('docker.run', {
            image,
            argv: ['/bin/busybox', 'sh', '-c', 'printf %s "$TOKEN"; printf %s "$TOKEN" >&2'],
            env: { TOKEN: '{{raw}}' },
          }),
        ],
      };
      const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: 'd.secret', input }));
      expect(r.status).toBe('success');
      const answers = (r.output as { answers: Answer[] }).answers;
      // The caller's output is redacted (the default rule for the output), so the container's echo arrives as the marker.
      expect(answers[0]).toMatchObject({
        status: 'ok',
        capability_result: { name: 'docker.run', result: { exit_code: 0, stdout: MARKER, stderr: MARKER } },
      });
      expect(formsIn(JSON.stringify(r))).toEqual([]);
      await host.close();
      // The journal (docker.run's args with the env value, its result), the audit trail and the run record are in the store.
      expect(formsInTree(home.dir)).toEqual([]);
      expect(await new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${r.run_id!}`] } })).toEqual([]);
    },
    CALL_BOUND_MS,
  );

  it(
    'is refused when the policy does not let the tool set the variable',
    async () => {
      host = await createHost({ toolpacksDir: plugins.dir, policyFile: path.join(plugins.dir, 'policy.yaml'), home: home.dir });
      const r = ResponseEnvelopeSchema.parse(
        await host.call({
          tool_id: 'd.secret',
          input: {
            secret: 'db_password',
            calls: [call('docker.run', { image, argv: ['/bin/busybox', 'true'], env: { PASSWORD: '{{raw}}' } })],
          },
        }),
      );
      const answer = (r.output as { answers: Answer[] }).answers[0]!;
      expect(answer).toMatchObject({
        status: 'error',
        error: { code: 'A-AUTH-DOCKER-ENV', details: { name: 'PASSWORD', allowed: ['TOKEN'] } },
      });
      // The refused value is not echoed back in the error.
      expect(formsIn(JSON.stringify(answer))).toEqual([]);
    },
    CALL_BOUND_MS,
  );
});
