// Secrets stay secret through the built CLI and through `helix serve` with the MCP SDK's real
// Client (ABI-SECRET-*): `helix call` then `helix runs show`, `helix runs export` (every file of
// the crate searched for every form) and `helix verify`; a served call whose writes are refused.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { kvGet } from '../host/3-store/kv.js';
import { openStore } from '../host/3-store/open-store.js';
import { compileGuest } from './helpers/as-guest.js';
import { CLI, serveWithClient } from './fixtures/mcp/serve.js';
import { startServer, type TestServer } from './helpers/http-test-kit.js';
import { call, formsIn, formsInTree, MARKER, SECRET, SECRET_ENV, secretToolpacks, writeSecretPolicy } from './helpers/secret-kit.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const work = tempDir('helix-secret-cli-');
let plugins: { dir: string; cleanup: () => void };
let upstream: TestServer;

beforeAll(async () => {
  upstream = await startServer((_req, res) => res.end('ok'));
  plugins = await toolpacksDir(secretToolpacks(await compileGuest('secret-paths.ts'), upstream.origin));
}, 120_000);
afterAll(async () => {
  await upstream?.close();
  plugins?.cleanup();
  work.cleanup();
});

/** The built CLI with the secret in its environment; never throws on a non-zero exit. */
async function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      cwd: packageRoot(),
      env: { ...process.env, [SECRET_ENV]: SECRET },
      maxBuffer: 1 << 26,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('helix call, runs show, runs export and verify', () => {
  it('ABI-SECRET-001/004/007: the crate of a run that wrote the secret every way holds no form of it', async () => {
    const home = path.join(work.dir, 'cli-home');
    const policy = path.join(work.dir, 'cli.policy.yaml');
    writeSecretPolicy(policy, upstream.origin, `{ env: ${SECRET_ENV} }`, '{ kv: redact, artifacts: redact }');
    const host = ['--toolpacks', plugins.dir, '--policy', policy, '--home', home];
    const input = {
      secret: 'db_password',
      calls: [
        call('log.emit', { event: 'token', fields: { basic: 'Basic {{b64|user:}}' } }),
        call('kv.put', { key: 'k', value: '{{hex}}' }),
        call('artifact.write', { role: 'report', data: 'report for {{raw|||0|12}}', label: 'by {{pct}}' }),
        call('artifact.write', { role: 'report', data: '{{raw|||12|}}\n{{b64url|a}}\n', final: true }),
      ],
      output: 'done with {{json}}',
    };
    const called = await helix(['call', 's.writer', '--input', JSON.stringify(input), '--compact', ...host]);
    expect(called.code, called.stderr).toBe(0);
    const envelope = ResponseEnvelopeSchema.parse(JSON.parse(called.stdout));
    expect(envelope).toMatchObject({ status: 'success', output: { echo: `done with ${MARKER}` } });
    expect(formsIn(called.stdout + called.stderr)).toEqual([]);
    const runId = envelope.run_id!;

    const shown = await helix(['runs', 'show', runId, '--home', home]);
    expect(shown.code).toBe(0);
    expect(formsIn(shown.stdout)).toEqual([]);

    const crate = path.join(work.dir, 'crate');
    const exported = await helix(['runs', 'export', runId, crate, '--home', home]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(formsInTree(crate)).toEqual([]);
    const metadata = readFileSync(path.join(crate, 'ro-crate-metadata.json'), 'utf8');
    expect(metadata).toContain(`by ${MARKER}`);
    const files = JSON.parse(metadata)
      ['@graph'].filter((e: { '@id': string }) => e['@id'].startsWith('data/'))
      .map((e: { '@id': string }) => readFileSync(path.join(crate, e['@id']), 'utf8'));
    expect(files.join('')).toContain(MARKER);

    const verified = await helix(['verify', runId, '--home', home]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect((await helix(['call', 's.plain', '--input', '{"calls":[]}', ...host])).code).toBe(0);
    expect(formsIn(readFileSync(path.join(home, 'helix.mdb')))).toEqual([]);
  });
});

describe('helix serve with a real MCP client', () => {
  it('ABI-SECRET-003/005/006: refuses the kv write, redacts the log notification and the output, and keeps serving', async () => {
    const home = path.join(work.dir, 'serve-home');
    const secretFile = path.join(work.dir, 'db_password.txt');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    const policy = path.join(work.dir, 'serve.policy.yaml');
    writeSecretPolicy(policy, upstream.origin, `{ file: ${JSON.stringify(secretFile)} }`);
    const served = await serveWithClient(['--toolpacks', plugins.dir, '--policy', policy, '--home', home]);
    const notes: unknown[] = [];
    served.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notes.push(n.params));
    try {
      const args = {
        secret: 'db_password',
        calls: [call('kv.put', { key: 'k', value: 'x {{b64|ab}}' }), call('log.emit', { event: 'leak', fields: { v: '{{HEX}}' } })],
        output: '{{raw}}',
      };
      const result = (await served.client.callTool({ name: 's-paths', arguments: args })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const output = result.structuredContent as {
        answers: Array<{ error?: { code: string; details: Record<string, unknown> } }>;
        echo: string;
      };
      expect(output.answers[0]!.error).toMatchObject({
        code: 'A-AUTH-SECRET-WRITE',
        details: { secret: 'db_password', where: 'kv.put', path: '/value' },
      });
      expect(output.echo).toBe(MARKER);
      expect(formsIn(JSON.stringify(result))).toEqual([]);
      expect(notes).toContainEqual(expect.objectContaining({ data: expect.objectContaining({ event: 'leak', fields: { v: MARKER } }) }));
      expect(formsIn(JSON.stringify(notes))).toEqual([]);
      const plain = (await served.client.callTool({ name: 's-plain', arguments: { calls: [] } })) as CallToolResult;
      expect(plain.isError).toBeFalsy();
    } finally {
      await served.close();
    }
    const store = openStore(home);
    try {
      expect(formsIn(readFileSync(store.path))).toEqual([]);
      expect(kvGet(store, 's.paths', 'k')).toBeUndefined();
    } finally {
      await store.close();
    }
    expect(formsIn(served.stderr())).toEqual([]);
  });
});
