// A run whose process was killed shows as `interrupted` from every reader (ABI-STORE-030), not
// only after a later host start: helix runs list and show in other processes, run_get over MCP,
// the RO-Crate export; and the next host serves calls and can run it again.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostStore } from '../host/5-host/host.js';
import { createHost } from '../host/index.js';
import { runEvents } from '../host/4-calls/runs/run-store.js';
import { openStore } from '../host/3-store/open-store.js';
import { readActiveRuns } from '../host/3-store/runs.js';
import { serveWithClient } from './fixtures/mcp/serve.js';
import { echoModule, numberResultModule } from './helpers/guest-wat.js';
import { looksRaw } from './helpers/store-damage.js';
import { CLI, runCli as helix } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const dirs: Array<{ dir: string; cleanup: () => void }> = [];
afterAll(() => {
  for (const d of dirs) d.cleanup();
});
let plugins: string;

beforeAll(async () => {
  const p = await toolpacksDir([
    { id: 'k.echo', module: echoModule() },
    {
      id: 'k.forever',
      module: numberResultModule('(loop $l (br $l)) (i64.const 0)'),
      manifest: { timeoutMs: 600_000, limits: { maxInputBytes: 100, maxOutputBytes: 100, fuel: 1e15 } },
      outputSchema: { type: 'object' },
    },
  ]);
  dirs.push(p);
  plugins = p.dir;
}, 120_000);

/** Starts `helix call k.forever` and returns the process once its run is recorded as running. */
async function startForever(home: string): Promise<{ child: ChildProcess; runId: string }> {
  const child = spawn(process.execPath, [CLI, 'call', 'k.forever', '--toolpacks', plugins, '--home', home, '--input', '{}'], {
    stdio: 'ignore',
  });
  const until = Date.now() + 120_000;
  for (;;) {
    // Read in a short-lived handle, as another process would.
    const store = openStore(home);
    let runId: string | undefined;
    try {
      for (const active of readActiveRuns(store)) runId = active.runId;
    } finally {
      await store.close();
    }
    if (runId !== undefined) return { child, runId };
    if (Date.now() > until) throw new Error('the run never started');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('a run whose process was killed', () => {
  it('is interrupted in helix runs list and show from another process, with its event', async () => {
    const home = tempDir('helix-killed-');
    dirs.push(home);
    const { child, runId } = await startForever(home.dir);
    // Alive: another process sees it running.
    expect(JSON.parse((await helix(['runs', 'list', '--json', '--home', home.dir])).stdout)).toEqual([
      expect.objectContaining({ run_id: runId, status: 'running' }),
    ]);
    await kill9(child);

    const listed = await helix(['runs', 'list', '--json', '--home', home.dir]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ run_id: runId, status: 'interrupted', owner: null, finished_at: expect.any(Number) }),
    ]);
    const shown = await helix(['runs', 'show', runId, '--home', home.dir]);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      status: 'interrupted',
      events: [{ kind: 'started' }, { kind: 'interrupted', detail: { found_by: 'read' } }],
    });
    expect(JSON.parse((await helix(['runs', 'list', '--json', '--status', 'running', '--home', home.dir])).stdout)).toEqual([]);
    expect(looksRaw(listed.stderr + shown.stderr)).toBe(false);

    // The crate shows what the store says; a later host finds nothing left to recover and serves.
    const exported = await helix(['runs', 'export', runId, path.join(home.dir, 'crate'), '--no-data', '--home', home.dir]);
    expect(exported.code).toBe(0);
    expect(readFileSync(path.join(home.dir, 'crate', 'helix-chain.json'), 'utf8')).toContain('"status": "interrupted"');
    const host = await createHost({ toolpacksDir: plugins, home: home.dir });
    try {
      expect(host.interrupted).toEqual([]);
      expect(runEvents(hostStore(host), runId).filter((e) => e.kind === 'interrupted')).toHaveLength(1);
      expect(await host.call({ tool_id: 'k.echo', input: { after: 'kill' } })).toMatchObject({ status: 'success' });
    } finally {
      await host.close();
    }
  }, 300_000);

  it('is interrupted in run_get over MCP, and the server serves the next call', async () => {
    const home = tempDir('helix-killed-mcp-');
    dirs.push(home);
    const served = await serveWithClient(['--toolpacks', plugins, '--home', home.dir]);
    try {
      const { child, runId } = await startForever(home.dir);
      await kill9(child);
      const got = await served.client.callTool({ name: 'run_get', arguments: { run_id: runId } });
      expect(got.isError).toBeFalsy();
      expect(got.structuredContent).toMatchObject({ run_id: runId, status: 'interrupted' });
      const next = await served.client.callTool({ name: 'k-echo', arguments: { n: 1 } });
      expect(next.isError).toBeFalsy();
    } finally {
      await served.close();
    }
  }, 300_000);
});
