// `helix serve` against a hostile client over real stdio (README "Security", the MCP stdin row): raw lines no SDK
// client would send, the exact JSON-RPC replies to each, and the same process serving a real
// call after every one. Also the message bound at its edge, and a client that stops reading.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolResultSchema, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { peakRssMiB, rawWire, type RawWire, type WireMessage } from './fixtures/mcp/raw-wire.js';
import { CLI, eventually, serveRaw, type RawServe } from './fixtures/mcp/serve.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
};
const LEVELS = 'debug, info, notice, warning, error, critical, alert, emergency';

const home = tempDir('helix-mcp-wire-');
const work = tempDir('helix-mcp-wire-work-');
let plugins: { dir: string; cleanup: () => void };
beforeAll(async () => {
  plugins = await toolpacksDir([{ id: 'wire.echo', module: echoModule() }]);
});
afterAll(() => {
  plugins?.cleanup();
  home.cleanup();
  work.cleanup();
});

/** A started, initialized server with raw access, and a check that it still serves a real call. */
async function start(
  extra: string[] = [],
): Promise<{ s: RawServe; w: RawWire; served: () => Promise<void>; request: (method: string, params?: unknown) => Promise<WireMessage> }> {
  const s = serveRaw(['--toolpacks', plugins.dir, '--home', home.dir, ...extra], { cwd: work.dir });
  await s.waitForStderr(/^Ready\./m, 120_000);
  const w = rawWire(s);
  w.line(JSON.stringify(INITIALIZE));
  await w.reply('init');
  w.line('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  let next = 1;
  const request = (method: string, params?: unknown): Promise<WireMessage> => {
    const id = next++;
    w.line(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
    return w.reply(id);
  };
  const served = async (): Promise<void> => {
    const n = next;
    const r = await request('tools/call', { name: 'wire-echo', arguments: { n } });
    expect(r.result).toMatchObject({ structuredContent: { n } });
    expect(r.result!.isError).toBeUndefined();
  };
  return { s, w, served, request };
}

/** Writes a hostile line and returns the reply: to `id`, or the next one with id null. */
async function refused(w: RawWire, line: string, id: string | number | null): Promise<WireMessage> {
  const n = w.nullReplies().length + 1;
  w.line(line);
  return id === null ? w.nullReply(n) : w.reply(id);
}

/** An error message as a client should read it: words, no McpError prefix, no zod dump, no stack. */
function expectClean(message: string): void {
  expect(message).not.toMatch(/MCP error/);
  expect(message).not.toMatch(/"code":\s*"invalid_|"expected":|ZodError|\n\s+at /);
}

describe('helix serve over raw stdio: broken frames (ABI-MCP-001 .. ABI-MCP-007)', () => {
  let srv: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    srv = await start();
  }, 180_000);
  afterAll(async () => {
    srv?.s.child.stdin?.end();
    await srv?.s.exited;
  });

  it('the startup log states the default message bound: the policy maxInputBytes plus 1 MiB', () => {
    expect(srv.s.stderr()).toContain(`  messages: up to ${17 * MiB} bytes a line (--max-message-bytes)`);
  });

  it('a line of 10 MiB + 1 byte is read whole and answered, and the server serves on (ABI-MCP-001)', async () => {
    const pre = '{"jsonrpc":"2.0","id":"ten","method":"tools/call","params":{"name":"wire-echo","arguments":{"pad":"';
    const post = '"}}}';
    const line = `${pre}${'x'.repeat(10 * MiB + 1 - pre.length - post.length)}${post}`;
    expect(Buffer.byteLength(line)).toBe(10 * MiB + 1);
    srv.w.line(line);
    const r = await srv.w.reply('ten');
    expect(r.result).toMatchObject({
      isError: true,
      structuredContent: { status: 'invalid_request', error: { code: 'I-REQ-INPUT-SIZE' } },
    });
    await srv.served();
  });

  it('a 64 MiB line is refused -32600 with its id as it streams, in bounded memory, and the server serves on (ABI-MCP-002)', async () => {
    const before = peakRssMiB(srv.s.child.pid!);
    const pre = '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"wire-echo","arguments":{"pad":"';
    const post = '"}},"id":"huge"}';
    const stdin = srv.s.child.stdin!;
    stdin.write(pre);
    stdin.write(Buffer.alloc(64 * MiB - pre.length - post.length, 'x'));
    stdin.write(`${post}\n`);
    const r = await srv.w.reply('huge', 60_000);
    const after = peakRssMiB(srv.s.child.pid!);
    console.log(
      `64 MiB line: server peak RSS ${before.toFixed(1)} MiB before, ${after.toFixed(1)} MiB after (+${(after - before).toFixed(1)} MiB)`,
    );
    expect(r.error).toMatchObject({
      code: -32600,
      data: { code: 'I-REQ-MCP-MESSAGE-TOO-LARGE', details: { bytes: 64 * MiB, max_message_bytes: 17 * MiB } },
    });
    expect(r.error!.message).toMatch(
      /^Invalid request \(stdin line \d+ is 67108864 bytes, over the 17825792-byte bound \(--max-message-bytes\)\); it was dropped unread\./,
    );
    // Held whole, the line alone would take 64 MiB, and more as a string and parsed.
    expect(after - before).toBeLessThan(64);
    await srv.served();
  }, 120_000);

  const cases: Array<[string, string, string | number | null, number, RegExp | string, string?]> = [
    [
      'not JSON',
      'this is not json',
      null,
      -32700,
      /^Parse error \(stdin line \d+\): the line is not JSON \(Unexpected token/,
      'I-REQ-MCP-PARSE',
    ],
    [
      'jsonrpc "1.0"',
      '{"jsonrpc":"1.0","id":"v1","method":"ping"}',
      'v1',
      -32600,
      /^Invalid request \(stdin line \d+\): jsonrpc must be "2\.0", not "1\.0"\.$/,
      'I-REQ-MCP-INVALID-MESSAGE',
    ],
    [
      'a batch array',
      '[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]',
      null,
      -32600,
      /a batch array of 2 messages; MCP 2025-06-18 and later have no JSON-RPC batching/,
      'I-REQ-MCP-BATCH',
    ],
    [
      'an object id',
      '{"jsonrpc":"2.0","id":{"k":1},"method":"ping"}',
      null,
      -32600,
      /: id must be a string or an integer, not an object\.$/,
      'I-REQ-MCP-INVALID-MESSAGE',
    ],
    ['a missing method', '{"jsonrpc":"2.0","id":"m1"}', 'm1', -32600, /: the message has no method/],
    [
      'an unknown method',
      '{"jsonrpc":"2.0","id":"u1","method":"tools/run","params":{}}',
      'u1',
      -32601,
      /^Method not found: "tools\/run"; this server answers initialize, ping, tools\/list, tools\/call/,
      'I-REQ-MCP-METHOD',
    ],
    [
      'params that are not an object',
      '{"jsonrpc":"2.0","id":"p1","method":"ping","params":"x"}',
      'p1',
      -32602,
      'Invalid params of ping: params must be an object, not "x".',
      'I-REQ-MCP-PARAMS',
    ],
    [
      'a tool name that is a number',
      '{"jsonrpc":"2.0","id":"n1","method":"tools/call","params":{"name":5}}',
      'n1',
      -32602,
      'Invalid params of tools/call: params.name must be a string, not the number 5.',
      'I-REQ-MCP-PARAMS',
    ],
    [
      'arguments as a string',
      '{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"wire-echo","arguments":"n=1"}}',
      'a1',
      -32602,
      'Invalid params of tools/call: params.arguments must be an object, not "n=1".',
    ],
    [
      'an unknown log level',
      '{"jsonrpc":"2.0","id":"l1","method":"logging/setLevel","params":{"level":"verbose"}}',
      'l1',
      -32602,
      `Invalid params of logging/setLevel: params.level must be one of ${LEVELS}.`,
    ],
    [
      'an unknown tool',
      '{"jsonrpc":"2.0","id":"t1","method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}',
      't1',
      -32602,
      'Unknown tool: no-such-tool',
    ],
  ];
  for (const [what, line, id, code, message, helixCode] of cases) {
    it(`${what} is answered ${code} with id ${JSON.stringify(id)}, in words, and the server serves on`, async () => {
      const r = await refused(srv.w, line, id);
      expect(r).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
      if (typeof message === 'string') expect(r.error!.message).toBe(message);
      else expect(r.error!.message).toMatch(message);
      expectClean(r.error!.message);
      if (helixCode !== undefined) expect(r.error!.data).toMatchObject({ code: helixCode, hint: expect.any(String) });
      await srv.served();
    });
  }

  it('a batch gets no reply for its members: MCP has no batching', () => {
    expect(srv.w.messages().filter((m) => m.id === 'b1' || m.id === 'b2')).toEqual([]);
  });

  it('100,000-deep params crash nothing: each request is answered and the server serves on', async () => {
    const depth = 100_000;
    const arrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const objects = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const cursor = await refused(srv.w, `{"jsonrpc":"2.0","id":"d1","method":"tools/list","params":{"cursor":${arrays}}}`, 'd1');
    expect(cursor.error).toMatchObject({
      code: -32602,
      message: 'Invalid params of tools/list: params.cursor must be a string, not an array.',
    });
    const unknown = await refused(
      srv.w,
      `{"jsonrpc":"2.0","id":"d2","method":"tools/call","params":{"name":"no-such-tool","arguments":${objects}}}`,
      'd2',
    );
    expect(unknown.error).toMatchObject({ code: -32602, message: 'Unknown tool: no-such-tool' });
    const ping = await refused(srv.w, `{"jsonrpc":"2.0","id":"d3","method":"ping","params":{"_meta":{"deep":${objects}}}}`, 'd3');
    expect(ping.result).toEqual({});
    const id = await refused(srv.w, `{"jsonrpc":"2.0","id":${objects},"method":"ping"}`, null);
    expect(id.error).toMatchObject({ code: -32600 });
    srv.w.line(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${arrays},"progress":1}}`);
    // A response to no request: the SDK logs it serialized, which a value this deep cannot be.
    srv.w.line(`{"jsonrpc":"2.0","id":"nobody","result":{"deep":${objects}}}`);
    await srv.served();
    expect(srv.w.messages().filter((m) => m.id === 'nobody')).toEqual([]);
  });

  it('a broken notification gets no reply, only a line on stderr', async () => {
    const before = srv.w.messages().length;
    srv.w.line('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}');
    await srv.served();
    expect(srv.w.messages().length).toBe(before + 1);
    expect(srv.s.stderr()).toMatch(
      /^helix serve: notification notifications\/cancelled dropped: params\.requestId must be a string or a number, not an object$/m,
    );
  });

  it('a real SDK Client on the same pipe lists the tools, calls one, and reads each protocol error with one prefix', async () => {
    const client = new Client({ name: 'after-hostile', version: '1' });
    // The SDK's newline-delimited stream transport, here on the client's side of the child's pipes.
    await client.connect(new StdioServerTransport(srv.s.child.stdout!, srv.s.child.stdin!));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('wire-echo');
    const ok = await client.callTool({ name: 'wire-echo', arguments: { via: 'client' } });
    expect(ok.structuredContent).toEqual({ via: 'client' });
    const unknown = await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: unknown) => e as McpError);
    expect((unknown as McpError).message).toBe('MCP error -32602: Unknown tool: no-such-tool');
    const bad = await client
      .request({ method: 'tools/call', params: { name: 5 } }, CallToolResultSchema)
      .catch((e: unknown) => e as McpError);
    expect(bad).toMatchObject({
      code: -32602,
      message: 'MCP error -32602: Invalid params of tools/call: params.name must be a string, not the number 5.',
    });
    srv.w.line('this is not json either');
    expect((await client.listTools()).tools.length).toBe(tools.length);
    await client.close();
  });
});

describe('helix serve --max-message-bytes (ABI-MCP-001, ABI-MCP-002)', () => {
  it('the bound is exact: 1024 bytes pass with LF or CRLF, 1025 are refused with the id, and the server serves on', async () => {
    const srv = await start(['--max-message-bytes', '1024']);
    try {
      expect(srv.s.stderr()).toContain('  messages: up to 1024 bytes a line (--max-message-bytes)');
      expect(srv.s.stderr()).toMatch(/"--max-message-bytes",\n\s+"1024"\n/);
      const ping = (id: string, bytes: number): string => {
        const head = `{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"pad":"`;
        return `${head}${'p'.repeat(bytes - head.length - 3)}"}}`;
      };
      expect(Buffer.byteLength(ping('x1', 1024))).toBe(1024);
      srv.w.line(ping('x1', 1024));
      expect((await srv.w.reply('x1')).result).toEqual({});
      srv.w.line(ping('x2', 1024), '\r\n');
      expect((await srv.w.reply('x2')).result).toEqual({});
      srv.w.line(ping('x3', 1025));
      expect((await srv.w.reply('x3')).error).toMatchObject({
        code: -32600,
        message: expect.stringContaining('is 1025 bytes, over the 1024-byte bound'),
      });
      srv.w.line(`{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"${'p'.repeat(2000)}"}}`);
      await srv.served();
      expect(srv.s.stderr()).toMatch(/bytes, over the 1024-byte bound \(--max-message-bytes\): a notification, dropped unread/);
    } finally {
      srv.s.child.stdin!.end();
      await srv.s.exited;
    }
  }, 180_000);

  it('an out-of-range --max-message-bytes is a usage error naming the option (exit 2)', async () => {
    const r = await run(process.execPath, [CLI, 'serve', '--max-message-bytes', '10', '--home', home.dir]).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-message-bytes must be an integer from 1024 to 268435456 bytes, got 10');
  });
});

describe('helix serve and a client that stops reading (ABI-MCP-008, ABI-MCP-009)', () => {
  /** Imports `bytes` of text through the server's artifact_import tool; returns its resource URI. */
  async function artifactOf(srv: Awaited<ReturnType<typeof start>>, name: string, bytes: number): Promise<string> {
    writeFileSync(path.join(work.dir, name), 'acgt'.repeat(bytes / 4));
    const imported = await srv.request('tools/call', { name: 'artifact_import', arguments: { path: path.join(work.dir, name) } });
    return `helix://artifact/${(imported.result!.structuredContent as { id: string }).id}`;
  }

  it('holds the client back at the backlog bound without losing an answer, and serves on once it reads', async () => {
    const srv = await start();
    try {
      const uri = await artifactOf(srv, 'page.txt', 64 * 1024);
      const sample = await srv.request('resources/read', { uri });
      const replyBytes = Buffer.byteLength(JSON.stringify(sample)) + 1;
      const before = peakRssMiB(srv.s.child.pid!);
      srv.s.child.stdout!.pause();
      const n = 700;
      for (let i = 0; i < n; i++) srv.w.line(JSON.stringify({ jsonrpc: '2.0', id: `r${i}`, method: 'resources/read', params: { uri } }));
      await srv.s.waitForStderr(
        /R-CAP-MCP-OUTPUT-BACKLOG: The client has \d+ bytes of output unread, over the 33554432-byte bound/,
        120_000,
      );
      const during = peakRssMiB(srv.s.child.pid!);
      srv.s.child.stdout!.resume();
      await eventually(
        () => (srv.w.messages().filter((m) => typeof m.id === 'string' && m.id.startsWith('r')).length === n ? true : undefined),
        120_000,
      );
      const largest = Number(/the client caught up: at most (\d+) bytes were unread/.exec(srv.s.stderr())![1]);
      console.log(
        `stalled reader: ${n} answers of ${replyBytes} bytes; largest unread output ${largest} bytes; server peak RSS +${(during - before).toFixed(1)} MiB while held`,
      );
      // The backlog bound plus the answers of the requests already in flight, never all n.
      expect(largest).toBeLessThanOrEqual(32 * MiB + 64 * replyBytes);
      expect(largest).toBeLessThan(n * replyBytes);
      for (let i = 0; i < n; i++) expect(srv.w.messages().find((m) => m.id === `r${i}`)!.result).toMatchObject({ contents: [{ uri }] });
      await srv.served();
    } finally {
      srv.s.child.stdin!.end();
      await srv.s.exited;
    }
  }, 300_000);

  it('a server stopped while its client reads nothing drops the unread output and exits 0 (ABI-MCP-008)', async () => {
    const srv = await start();
    try {
      const uri = await artifactOf(srv, 'book.txt', MiB);
      srv.s.child.stdout!.pause();
      // 100 answers of 1 MiB: past the 32 MiB bound with requests still waiting.
      for (let i = 0; i < 100; i++) srv.w.line(JSON.stringify({ jsonrpc: '2.0', id: `q${i}`, method: 'resources/read', params: { uri } }));
      await srv.s.waitForStderr(/R-CAP-MCP-OUTPUT-BACKLOG/, 120_000);
      srv.s.child.stdin!.end();
      await srv.s.waitForStderr(/helix serve: stopped\n/, 60_000);
      const code = await Promise.race([srv.s.exited, new Promise((r) => setTimeout(() => r('still running'), 30_000))]);
      expect(code).toBe(0);
      expect(srv.s.stderr()).toMatch(
        /helix serve: stdin closed; stopping\nhelix serve: stopped\nhelix serve: the client left \d+ bytes of output unread; dropped\n$/,
      );
    } finally {
      srv.s.child.stdout!.resume();
      if (srv.s.child.exitCode === null) srv.s.child.kill();
    }
  }, 180_000);
});
