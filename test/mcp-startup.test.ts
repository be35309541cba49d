// `helix serve` starting and stopping: fail-closed startup with nothing on stdout, the startup
// message and its client configuration, and clean shutdown on stdin close and SIGTERM.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { echoModule, numberResultModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { CLI, eventually, serveRaw } from './fixtures/mcp/serve.js';

const run = promisify(execFile);
const POLICY = path.join(packageRoot(), 'test', 'fixtures', 'mcp', 'long-work.policy.yaml');
const SPIN = `(local.set $v (i64.const 1000000000000))
  (block $b (loop $l (br_if $b (i64.eqz (local.get $v))) (local.set $v (i64.sub (local.get $v) (i64.const 1))) (br $l)))
  (i64.const 0)`;
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

const home = tempDir('helix-mcp-start-');
let good: { dir: string; cleanup: () => void };
let bad: { dir: string; cleanup: () => void };
beforeAll(async () => {
  good = await toolpacksDir([
    { id: 'start.echo', module: echoModule() },
    {
      id: 'start.spin',
      module: numberResultModule(SPIN),
      manifest: { timeoutMs: 60_000, limits: { maxInputBytes: 100, maxOutputBytes: 100, fuel: 1e15 } },
    },
  ]);
  bad = await toolpacksDir([
    { id: 'start.bad_one', module: echoModule(), manifest: { version: 'one' } },
    { id: 'start.bad_two', module: echoModule(), manifest: { digest: `sha256:${'0'.repeat(64)}` } },
  ]);
});
afterAll(() => {
  good?.cleanup();
  bad?.cleanup();
  home.cleanup();
});

/** Starts a server, sends it an initialize request anyway, and waits for it to exit. */
async function refusedStart(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const s = serveRaw(args);
  s.send(INITIALIZE);
  const code = await s.exited;
  return { code, stdout: s.stdout(), stderr: s.stderr() };
}

describe('helix serve startup', () => {
  it('refuses invalid toolpacks with exit 3, every violation on stderr, and nothing on stdout', async () => {
    const r = await refusedStart(['--toolpacks', bad.dir, '--home', home.dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^helix: P-PRECOND-MANIFEST-INVALID: 2 toolpack violations/);
    expect(r.stderr).toMatch(/start_bad_one\.tool\.yaml:\d+: version: /);
    expect(r.stderr).toMatch(/start_bad_two\.tool\.yaml.*digest/);
  });

  it('refuses a toolpacks directory that does not exist with exit 3', async () => {
    const r = await refusedStart(['--toolpacks', path.join(home.dir, 'nowhere'), '--home', home.dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/P-PRECOND-PLUGINS-DIR/);
  });

  it('refuses an invalid policy with exit 3, naming the field', async () => {
    const policy = path.join(home.dir, 'bad.policy.yaml');
    writeFileSync(policy, 'version: 1\ntools:\n  allow: ["*"]\nceilings:\n  fuel: -5\n');
    const r = await refusedStart(['--toolpacks', good.dir, '--policy', policy, '--home', home.dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/P-PRECOND-POLICY-INVALID/);
    expect(r.stderr).toMatch(/ceilings\.fuel/);
  });

  it('prints what it loaded and a client configuration that starts the same server (given --plugins, the former name of --toolpacks)', async () => {
    const s = serveRaw(['--plugins', good.dir, '--home', home.dir]);
    await s.waitForStderr(/^Ready\./m);
    const err = s.stderr();
    expect(err).toContain(`store:    ${path.join(home.dir, 'helix.mdb')}`);
    expect(err).toMatch(/policy: {3}sha256:[0-9a-f]{64} \(the bundled default policy\)/);
    expect(err).toContain(`toolpacks: ${good.dir}`);
    expect(err).toMatch(/start-echo\s+start\.echo 1\.0\.0\s+\(read-only, idempotent\)/);
    expect(err).toMatch(/artifact_import\s+helix\.artifact_import 1\.0\.0/);
    const snippet = JSON.parse(err.slice(err.indexOf('\n{') + 1, err.indexOf('\n}\n') + 2)) as {
      mcpServers: { helix: { command: string; args: string[]; env: Record<string, string> } };
    };
    const cfg = snippet.mcpServers.helix;
    expect(cfg).toEqual({ command: process.execPath, args: [CLI, 'serve', '--toolpacks', good.dir], env: { HELIX_HOME: home.dir } });
    s.child.stdin!.end();
    expect(await s.exited).toBe(0);
    expect(s.stdout()).toBe('');

    // The configuration as a client would use it, from another directory.
    const client = new Client({ name: 'snippet', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, cwd: path.parse(home.dir).root, stderr: 'ignore' }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('start-echo');
    await client.close();
  });
});

describe('helix serve shutdown', () => {
  it('stops cleanly when stdin closes: exit 0 and the store closed for the next process', async () => {
    const s = serveRaw(['--toolpacks', good.dir, '--home', home.dir]);
    await s.waitForStderr(/^Ready\./m);
    s.child.stdin!.end();
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toMatch(/stdin closed; stopping\nhelix serve: stopped\n$/);
    const { stdout } = await run(process.execPath, [CLI, 'runs', 'list', '--home', home.dir, '--json']);
    expect(Array.isArray(JSON.parse(stdout))).toBe(true);
  });

  it('on SIGTERM cancels the call in flight, records its run as failed, exits 0, and wrote only protocol to stdout', async () => {
    const s = serveRaw(['--toolpacks', good.dir, '--policy', POLICY, '--home', home.dir, '--progress-interval-ms', '50']);
    s.send(INITIALIZE);
    await eventually(() => (s.stdout().includes('"id":1') ? true : undefined));
    s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    s.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'start-spin', arguments: { s: 1 }, _meta: { progressToken: 'spin' } },
    });
    await eventually(() => (s.stdout().includes('notifications/progress') ? true : undefined));
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(s.stderr()).toMatch(/SIGTERM received; stopping\nhelix serve: stopped\n$/);
    for (const line of s.stdout().trim().split('\n')) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    const { stdout } = await run(process.execPath, [CLI, 'runs', 'list', '--home', home.dir, '--tool', 'start.spin', '--json']);
    const runs = JSON.parse(stdout) as RunRecord[];
    expect(runs).toEqual([
      expect.objectContaining({
        status: 'failed',
        result: expect.objectContaining({ error: expect.objectContaining({ code: 'R-TIMEOUT-CANCELLED' }) }),
      }),
    ]);
  });
});
