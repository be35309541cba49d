// The Helix MCP server driven by a real MCP client: the SDK's Client over the SDK's in-memory
// transport pair, against the server on a real Host in this process, with toolpacks compiled from
// WAT and AssemblyScript. The stdio process itself is tested in mcp-transport and mcp-startup.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  McpError,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type RequestEnvelopeInput } from '../abi/index.js';
import type { Host } from '../host/5-host/host.js';
import { startupBanner } from '../host/6-faces/mcp/banner.js';
import { packageRoot } from '../host/1-base/paths.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { compileGuest } from './helpers/as-guest.js';
import { abiPrelude, echoModule, fixedOutputModule, numberResultModule } from './helpers/guest-wat.js';
import { serveInMemory, type MemoryServed } from './helpers/mcp-memory.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { CLI, eventually } from './fixtures/mcp/serve.js';

const countdown = (n: string): string => `(local.set $v (i64.const ${n}))
  (block $b (loop $l (br_if $b (i64.eqz (local.get $v))) (local.set $v (i64.sub (local.get $v) (i64.const 1))) (br $l)))
  (i64.extend_i32_u (local.get $len))`;
const LONG = { timeoutMs: 60_000, limits: { maxInputBytes: 1000, maxOutputBytes: 1000, fuel: 1e15 } };
const N_SCHEMA = { type: 'object', required: ['n'], additionalProperties: false, properties: { n: { type: 'integer' } } };

/** The default policy's grants and roots, with fuel enough for busy loops that only a deadline or a cancel stops. */
const POLICY = path.join(packageRoot(), 'test', 'fixtures', 'mcp', 'long-work.policy.yaml');
const home = tempDir('helix-mcp-home-');
const work = tempDir('helix-mcp-work-');
let plugins: { dir: string; cleanup: () => void };
let served: MemoryServed;
/** The call_id of every request the server handed to Host.call, in order. */
const hostCalls: string[] = [];
/** The host as the server sees it: the same host, recording each call it is given. */
const recording = (host: Host): Host => ({
  ...host,
  call: (request, options) => {
    hostCalls.push(String((request as RequestEnvelopeInput).call_id));
    return host.call(request, options);
  },
});

beforeAll(async () => {
  const script = await compileGuest('script.ts');
  plugins = await toolpacksDir([
    { id: 'mcp.echo', module: echoModule(), inputSchema: N_SCHEMA, outputSchema: N_SCHEMA },
    { id: 'mcp.trap', module: `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) unreachable))` },
    {
      id: 'mcp.list',
      module: fixedOutputModule('{"status":"ok","output":[1,2,3]}'),
      outputSchema: { type: 'array', items: { type: 'integer' } },
    },
    { id: 'mcp.slow', module: numberResultModule(countdown('1500000000')), manifest: LONG },
    { id: 'mcp.spin', module: numberResultModule(countdown('1000000000000')), manifest: LONG },
    {
      id: 'mcp.script',
      module: script,
      manifest: {
        limits: { maxInputBytes: 100_000, maxOutputBytes: 100_000, fuel: 1e10, maxMemoryPages: 256, maxCapabilityCalls: 100 },
        capabilities: { abiVersion: 1, allow: ['log.emit', 'clock.now_unix'] },
      },
    },
    {
      id: 'mcp.net',
      module: echoModule(),
      manifest: {
        deterministic: 'side_effectful',
        capabilities: { abiVersion: 1, allow: ['http.request', 'kv.put'], network: ['https://example.org:443'] },
      },
    },
    { id: 'mcp.versioned', dirName: 'v1', module: echoModule(), manifest: { version: '1.4.0' } },
    { id: 'mcp.versioned', dirName: 'v2', module: echoModule(), manifest: { version: '2.0.1', description: 'the second major' } },
  ]);
  // As `helix serve --policy POLICY --progress-interval-ms 100` started in work.dir: its import roots are work.dir.
  const policy = loadPolicy(POLICY, { env: { ...process.env, PWD: work.dir } });
  served = await serveInMemory({ toolpacksDir: plugins.dir, policy, home: home.dir, progressIntervalMs: 100 }, { serve: recording });
}, 120_000);
afterAll(async () => {
  await served?.close();
  plugins?.cleanup();
  home.cleanup();
  work.cleanup();
});

const call = (
  name: string,
  args: Record<string, unknown>,
  options?: Parameters<MemoryServed['client']['callTool']>[2],
): Promise<CallToolResult> => served.client.callTool({ name, arguments: args }, undefined, options) as Promise<CallToolResult>;
const text = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

describe('helix serve: tools', () => {
  it('tools/list gives one safe name per tool id, with its schemas and annotations', async () => {
    const { tools } = await served.client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'artifact_get',
      'artifact_import',
      'artifact_list',
      'artifact_preview',
      'mcp-echo',
      'mcp-list',
      'mcp-net',
      'mcp-script',
      'mcp-slow',
      'mcp-spin',
      'mcp-trap',
      'mcp-versioned',
      'run_get',
      'run_verify',
      'slurm_job_collect',
      'slurm_job_get',
    ]);
    for (const t of tools) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const echo = tools.find((t) => t.name === 'mcp-echo')!;
    expect(echo.inputSchema).toEqual(N_SCHEMA);
    expect(echo.outputSchema?.anyOf).toEqual([N_SCHEMA, { $ref: '#/$defs/helix_error_envelope' }]);
    expect(echo.annotations).toEqual({
      title: 'mcp.echo',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(echo._meta).toMatchObject({ 'helix/tool_id': 'mcp.echo', 'helix/version': '1.0.0', 'helix/kind': 'wasm' });
    const net = tools.find((t) => t.name === 'mcp-net')!;
    expect(net.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(tools.find((t) => t.name === 'artifact_import')!.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    });
    expect(tools.find((t) => t.name === 'run_get')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('tools/list exposes the newest version of an id and names the older ones it hides', async () => {
    const { tools } = await served.client.listTools();
    const v = tools.find((t) => t.name === 'mcp-versioned')!;
    expect(v.description).toBe('the second major');
    expect(v._meta).toMatchObject({ 'helix/version': '2.0.1', 'helix/hidden_versions': ['1.4.0'] });
    expect(startupBanner(served.host, served.mcp.tools, { cliPath: CLI })).toMatch(
      /mcp-versioned\s+mcp\.versioned 2\.0\.1\s+\(.*older 1\.4\.0 not exposed/,
    );
  });

  it('tools/call returns the output as structuredContent, a text rendering, and the run in _meta; a repeat replays', async () => {
    const r = await call('mcp-echo', { n: 7 });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ n: 7 });
    expect(JSON.parse(text(r))).toEqual({ n: 7 });
    expect(r._meta).toMatchObject({
      'helix/run_id': expect.stringMatching(/^run_[0-9a-f]{32}$/),
      'helix/replayed': false,
      'helix/status': 'success',
    });
    const again = await call('mcp-echo', { n: 7 });
    expect(again._meta).toMatchObject({ 'helix/run_id': r._meta!['helix/run_id'], 'helix/replayed': true });
  });

  it('tools/call wraps an output that is not an object as {"value": ...}, matching the advertised schema', async () => {
    const r = await call('mcp-list', {});
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ value: [1, 2, 3] });
  });

  it('tools/call answers bad input with isError and the invalid_request envelope, not a protocol error', async () => {
    const r = await call('mcp-echo', { n: 'seven', extra: true });
    expect(r.isError).toBe(true);
    const envelope = ResponseEnvelopeSchema.parse(r.structuredContent);
    expect(envelope).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-INPUT' }, provenance: { tool_id: 'mcp.echo' } });
    expect(envelope.error!.details.violations).toHaveLength(2);
    expect(text(r)).toMatch(/^invalid_request I-REQ-INPUT: The input has 2 schema violations\.\n {2}.*\n {2}.*\nhint: /);
    expect(text(r)).toContain('  /n: must be an integer (found a string, "seven")\n');
  });

  it('tools/call answers a guest fault with isError and the terminal_error envelope', async () => {
    const r = await call('mcp-trap', {});
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({
      status: 'terminal_error',
      error: { code: 'S-TOOL-TRAP' },
      run_id: expect.stringMatching(/^run_/),
    });
    expect(text(r)).toMatch(/^terminal_error S-TOOL-TRAP: .*\n(.*\n)*run: run_/);
  });

  it('tools/call of an unknown tool name is a protocol error (invalid params)', async () => {
    const err = await call('no-such-tool', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toMatch(/Unknown tool: no-such-tool/);
  });

  it('50 concurrent calls with distinct inputs each get their own output; repeated, all replay', async () => {
    const ns = Array.from({ length: 50 }, (_, i) => 1000 + i);
    const results = await Promise.all(ns.map((n) => call('mcp-echo', { n })));
    results.forEach((r, i) => {
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual({ n: ns[i] });
    });
    expect(new Set(results.map((r) => r._meta!['helix/run_id'])).size).toBe(50);
    const again = await Promise.all(ns.map((n) => call('mcp-echo', { n })));
    again.forEach((r, i) => {
      expect(r.structuredContent).toEqual({ n: ns[i] });
      expect(r._meta).toMatchObject({ 'helix/replayed': true, 'helix/run_id': results[i]!._meta!['helix/run_id'] });
    });
  });
});

describe('helix serve: long work', () => {
  it('sends progress (elapsed ms, increasing) for a call that carries a progress token', async () => {
    const seen: Array<{ progress: number; message?: string }> = [];
    const r = await call('mcp-slow', { p: 1 }, { onprogress: (p) => seen.push(p), timeout: 60_000 });
    expect(r.isError).toBeFalsy();
    // Reports come while the call runs (every 100 ms here), all before its result, within its
    // duration; how many depends on how busy the machine is, so only that they came is asserted.
    const duration = (r._meta!['helix/metrics'] as { duration_ms: number }).duration_ms;
    expect(duration).toBeGreaterThan(1000);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    expect(seen.at(-1)!.progress).toBeLessThanOrEqual(duration);
    expect(seen[0]!.message).toMatch(/^mcp\.slow: running for \d+\.\d s, 0 capability calls$/);
  });

  it('notifications/cancelled stops the run, records it as failed R-TIMEOUT-CANCELLED, and the server keeps serving', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const pending = call('mcp-spin', { c: 1 }, { signal: abort.signal, onprogress: () => abort.abort('test cancels'), timeout: 60_000 });
    await expect(pending).rejects.toThrow();
    // The run record is written once the worker is stopped.
    const failed = await eventually(() => served.host.runs.list({ toolId: 'mcp.spin' }).find((x) => x.status === 'failed'));
    expect(failed.result?.error?.code).toBe('R-TIMEOUT-CANCELLED');
    expect(failed.finished_at! - started).toBeLessThan(10_000);
    const viaTool = await call('run_get', { run_id: failed.run_id });
    expect(viaTool.structuredContent).toMatchObject({
      run_id: failed.run_id,
      status: 'failed',
      result: { error: { code: 'R-TIMEOUT-CANCELLED' } },
    });
    const after = await call('mcp-echo', { n: 1 });
    expect(after.structuredContent).toEqual({ n: 1 });
  });
});

describe('helix serve: logging', () => {
  const lines: LoggingMessageNotification['params'][] = [];
  beforeAll(() => served.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void lines.push(n.params)));
  const emit = (level: string, event: string): Record<string, unknown> => ({ name: 'log.emit', args: { level, event, fields: { level } } });

  it('sends the guest log lines at or above the level set, naming the tool, the run and the call', async () => {
    await served.client.setLoggingLevel('debug');
    const r = await call('mcp-script', { calls: [emit('debug', 'd1'), emit('info', 'i1'), emit('warn', 'w1')], echo: 'first' });
    expect(r.isError).toBeFalsy();
    const mine = await eventually(() => {
      const got = lines.filter((l) => (l.data as { call_id: string }).call_id === r._meta!['helix/call_id']);
      return got.length === 3 ? got : undefined;
    });
    expect(mine.map((l) => l.level)).toEqual(['debug', 'info', 'warning']);
    for (const l of mine) {
      expect(l.logger).toBe('mcp.script');
      expect(l.data).toMatchObject({ tool_id: 'mcp.script', run_id: r._meta!['helix/run_id'] });
    }
    expect(mine[0]!.data).toMatchObject({ event: 'd1', fields: { level: 'debug' } });
  });

  it('runs a call of a log.emit tool once: one Host.call, its lines name the run the response carries, one run stored', async () => {
    await served.client.setLoggingLevel('info');
    const r = await call('mcp-script', { calls: [emit('info', 'once')], echo: 'once' });
    expect(r.isError).toBeFalsy();
    const callId = r._meta!['helix/call_id'] as string;
    const runId = r._meta!['helix/run_id'] as string;
    // No dry run first to learn the run id: the server hands the host this call exactly once.
    expect(hostCalls.filter((id) => id === callId)).toHaveLength(1);
    const line = await eventually(() => lines.find((l) => (l.data as { call_id: string }).call_id === callId));
    expect(line.data).toMatchObject({ run_id: runId, event: 'once' });
    expect(served.host.runs.list({ toolId: 'mcp.script' }).filter((x) => x.run_id === runId)).toEqual([
      expect.objectContaining({ status: 'succeeded', attempts: 1 }),
    ]);
  });

  it('filters the guest log lines below the level a client sets', async () => {
    await served.client.setLoggingLevel('warning');
    const r = await call('mcp-script', {
      calls: [emit('debug', 'd2'), emit('info', 'i2'), emit('warn', 'w2'), emit('error', 'e2')],
      echo: 'second',
    });
    expect(r.isError).toBeFalsy();
    const mine = await eventually(() => {
      const got = lines.filter((l) => (l.data as { call_id: string }).call_id === r._meta!['helix/call_id']);
      return got.length >= 2 ? got : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(
      lines
        .filter((l) => (l.data as { call_id: string }).call_id === r._meta!['helix/call_id'])
        .map((l) => (l.data as { event: string }).event),
    ).toEqual(['w2', 'e2']);
    expect(mine.map((l) => l.level)).toEqual(['warning', 'error']);
  });
});

describe('helix serve: artifacts as resources', () => {
  it('an artifact imported with the artifact_import tool is listed and readable as helix://artifact/<id>', async () => {
    const file = path.join(work.dir, 'reads.fa');
    writeFileSync(file, '>r1\nACGT\n>r2\nGGCC\n');
    const imported = await call('artifact_import', { path: file, label: 'reads' });
    expect(imported.isError).toBeFalsy();
    const id = (imported.structuredContent as { id: string }).id;
    const { resources } = await served.client.listResources();
    const listed = resources.find((r) => r.uri === `helix://artifact/${id}`);
    expect(listed).toMatchObject({ name: 'reads', mimeType: 'text/x-fasta', size: 18 });
    const read = await served.client.readResource({ uri: `helix://artifact/${id}` });
    expect(read.contents).toEqual([{ uri: `helix://artifact/${id}`, mimeType: 'text/x-fasta', text: '>r1\nACGT\n>r2\nGGCC\n' }]);
    const { resourceTemplates } = await served.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'helix://artifact/{id}', name: 'artifact' })]);
  });

  it('reading an unknown artifact is a resource-not-found protocol error', async () => {
    const err = await served.client.readResource({ uri: 'helix://artifact/art_00000000000000000000000000' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as McpError).code).toBe(-32002);
  });
});
