// Fixed run ids through the built CLI (ABI-RUNID-001, -006): a toolpack call, the same call with an
// idempotency key, and a host built-in, each must keep the exact run_id written here, so a change
// anywhere on the way from `helix call` to the identity formula that would orphan stored runs fails.
import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { fixedOutputModule } from './helpers/guest-wat.js';
import { CLI, runCli } from './helpers/run-cli.js';
import { tempDir, writeToolpack } from './helpers/toolpack.js';

let t: { dir: string; cleanup: () => void };
let root: string;

/** Every manifest field spelled out, so a change of the test helpers' defaults cannot move the vectors. */
const MANIFEST = {
  id: 'vec.fixed',
  version: '1.0.0',
  contractVersion: 'v1',
  description: 'answers {"n":1}',
  abi: 'helix/v1',
  module: 'tool.wasm',
  deterministic: 'pure',
  timeoutMs: 5000,
  limits: { maxInputBytes: 4096, maxOutputBytes: 4096, fuel: 1_000_000, maxMemoryPages: 4 },
  capabilities: { abiVersion: 1, allow: [] },
};
/** An input schema with a default, spelled out here for the same reason. */
const DEFAULTED_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['q'],
  properties: { q: { type: 'string' }, bin_width: { type: 'integer', default: 10 } },
};
// No path in it depends on where the test runs: the policy hash is part of every run_id.
const POLICY = 'version: 1\ntools:\n  allow: [vec.*, helix.*]\npaths:\n  importRoots: []\n  exportRoots: []\n';

const helix = (args: readonly string[]) =>
  runCli([...args, '--home', path.join(root, 'home'), '--policy', path.join(root, 'policy.yaml')], root);

async function call(toolId: string, input: Record<string, unknown>, extra: readonly string[] = []): Promise<ResponseEnvelope> {
  const r = await helix(['call', toolId, '--toolpacks', path.join(root, 'plugins'), '--input', JSON.stringify(input), ...extra]);
  expect(r.stderr, 'helix call printed no error').not.toMatch(/helix: [A-Z]-/);
  return ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before this test`);
  t = tempDir('helix-identity-vectors-');
  root = realpathSync(t.dir);
  writeFileSync(path.join(root, 'policy.yaml'), POLICY);
  // wabt (pinned in package-lock.json) turns this text into the same module bytes every time.
  const { bytes } = await writeToolpack(path.join(root, 'plugins'), {
    id: 'vec.fixed',
    module: fixedOutputModule('{"status":"ok","output":{"n":1}}'),
    manifest: MANIFEST,
  });
  expect(bytes.length).toBeGreaterThan(0);
  // The same module under an input schema with a default (ABI-RUNID-010).
  await writeToolpack(path.join(root, 'plugins'), {
    id: 'vec.defaulted',
    module: fixedOutputModule('{"status":"ok","output":{"n":1}}'),
    manifest: { ...MANIFEST, id: 'vec.defaulted' },
    inputSchema: DEFAULTED_SCHEMA,
  });
}, 60_000);
afterAll(() => t?.cleanup());

// Computed once by the code of this commit and written down. A failure here means stored runs of
// these calls would no longer be found (no replay, `helix runs show` by the old id only): a break of
// ABI-RUNID-001, to be made on purpose or not at all.
describe('run ids of real calls through helix call', () => {
  const TOOLPACK_RUN = 'run_6ea01dc5b1aae5fa2e4da4dce6a3e8ca';
  const DEFAULTED_RUN = 'run_0aaf159016d522a87f323af4ad8bc3a7';

  it('a toolpack call has its fixed run_id, and an idempotency key does not enter it', async () => {
    const first = await call('vec.fixed', { q: 'x', k: [1, 2] });
    expect(first).toMatchObject({ status: 'success', replayed: false, output: { n: 1 } });
    expect(first.run_id).toBe(TOOLPACK_RUN);
    // The key dedupes retries of a request; the work, and so the run, is the same.
    const keyed = await call('vec.fixed', { k: [1, 2], q: 'x' }, ['--idempotency-key', 'vector-key-000000000001']);
    expect(keyed).toMatchObject({ status: 'success', replayed: true, run_id: TOOLPACK_RUN });
  }, 60_000);

  it('a field its schema defaults, left out or spelled out, gives one fixed run_id; another value another', async () => {
    const left = await call('vec.defaulted', { q: 'x' });
    expect(left).toMatchObject({ status: 'success', replayed: false });
    expect(left.run_id).toBe(DEFAULTED_RUN);
    const spelled = await call('vec.defaulted', { bin_width: 10, q: 'x' });
    expect(spelled).toMatchObject({ status: 'success', replayed: true, run_id: DEFAULTED_RUN });
    const other = await call('vec.defaulted', { q: 'x', bin_width: 11 });
    expect(other.run_id).not.toBe(DEFAULTED_RUN);
  }, 60_000);

  it('a host built-in over an inline artifact has its fixed run_id, by the artifact content', async () => {
    const imported = await helix(['artifact', 'import', '--text', '>r1\nACGT\n']);
    expect(imported.code, imported.stderr).toBe(0);
    const id = (JSON.parse(imported.stdout) as { id: string }).id;
    const got = await call('helix.artifact_get', { artifact_id: id });
    expect(got).toMatchObject({ status: 'success', output: { id, size: 9 } });
    expect(got.run_id).toBe('run_a7d2e16f34043fdac79a673c3cb982c2');
  }, 60_000);
});
