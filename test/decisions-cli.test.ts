// Host decisions are final (ABI-FINAL-001, ABI-FINAL-002) through the built CLI and through
// `helix serve` with the MCP SDK's real client: a guest that catches the call ceiling and calls
// 100,000 times ends with R-CAP-CALL-LIMIT, its journal holds the 101 calls up to the decision,
// and a well-behaved call afterwards succeeds (the next CLI call; the same server process).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { CLI, serveWithClient, type Served } from './fixtures/mcp/serve.js';
import { stormGuest } from './helpers/catching-guests.js';
import { echoModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const limits = { maxInputBytes: 65_536, maxOutputBytes: 65_536, fuel: 10_000_000_000, maxMemoryPages: 16, maxCapabilityCalls: 100 };

let plugins: { dir: string; cleanup: () => void };
beforeAll(async () => {
  plugins = await toolpacksDir([
    {
      id: 'f.storm',
      module: stormGuest(100_000),
      manifest: { timeoutMs: 60_000, limits, capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
    },
    { id: 'f.echo', module: echoModule() },
  ]);
}, 60_000);
afterAll(() => plugins?.cleanup());

describe('helix call', () => {
  const home = tempDir('helix-home-');
  afterAll(() => home.cleanup());

  async function helix(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
        cwd: packageRoot(),
        env: { ...process.env, HELIX_HOME: home.dir },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('ends a guest that catches the call ceiling with R-CAP-CALL-LIMIT, exit 1, 101 calls journaled; the next call succeeds', async () => {
    const r = await helix(['call', 'f.storm', '--toolpacks', plugins.dir, '--input', '{}']);
    expect(r.code).toBe(1);
    const envelope = ResponseEnvelopeSchema.parse(JSON.parse(r.stdout));
    expect(envelope.status).toBe('terminal_error');
    expect(envelope.error).toMatchObject({ code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 100 } });
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const shown = await helix(['runs', 'show', envelope.run_id!]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'failed', journal: { entries: 101 } });
    const echo = await helix(['call', 'f.echo', '--toolpacks', plugins.dir, '--input', '{"after":"storm"}']);
    expect(echo.code).toBe(0);
    expect(JSON.parse(echo.stdout)).toMatchObject({ status: 'success', output: { after: 'storm' } });
  }, 120_000);
});

describe('helix serve', () => {
  const home = tempDir('helix-home-');
  const work = tempDir('helix-work-');
  let served: Served;
  beforeAll(async () => {
    served = await serveWithClient(['--toolpacks', plugins.dir, '--home', home.dir], { cwd: work.dir });
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    home.cleanup();
    work.cleanup();
  });
  const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    served.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('ends a guest that catches the call ceiling with R-CAP-CALL-LIMIT, 101 calls journaled; the same server serves the next call', async () => {
    const r = await call('f-storm', {});
    expect(r.isError).toBe(true);
    const envelope = ResponseEnvelopeSchema.parse(r.structuredContent);
    expect(envelope.error).toMatchObject({ code: 'R-CAP-CALL-LIMIT', details: { max_capability_calls: 100 } });
    const got = await call('run_get', { run_id: envelope.run_id });
    expect(got.isError).toBeFalsy();
    expect(got.structuredContent).toMatchObject({ status: 'failed', journal: { entries: 101 } });
    const echo = await call('f-echo', { after: 'storm' });
    expect(echo.isError).toBeFalsy();
    expect(echo.structuredContent).toEqual({ after: 'storm' });
  }, 120_000);
});
