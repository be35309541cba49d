// Conformance checks: the MCP transport. The real `helix serve` in a child process, spoken to raw
// over stdio as a hostile client would: lines that are not JSON, not UTF-8, too long, never
// ending, split across writes, batches, invalid messages, unknown methods, bad params, values
// 100,000 levels deep, cancellations, a client that stops reading. Each gets the answer JSON-RPC
// 2.0 prescribes (or none), and after each the same server must answer a good tools/call: that is
// this category's survival (the runner's canary covers the in-process host).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { expect, type Check, type CheckContext } from '../check.js';
import { runCli, startServer, type RawServer, type WireMessage } from '../kit/c-cpu-proc.js';
import { abiPrelude } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../kit/toolpack.js';
import { checkDefaultPolicy } from '../runner.js';

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

const MiB = 1024 * 1024;
/** The canary's MCP name: an echo, called after every hostile frame. */
const CANARY = 'conformance-canary';
const LEVELS = 'debug, info, notice, warning, error, critical, alert, emergency';

/** `helix serve` over the check's plugins (its packs and the canary), the check's default policy and a home of its own. */
async function serve(ctx: CheckContext, extra: readonly string[] = []): Promise<RawServer> {
  const policy = path.join(ctx.env.dir, 'serve.policy.yaml');
  writeFileSync(policy, stringify(checkDefaultPolicy(ctx.env)));
  const t0 = performance.now();
  const srv = await startServer(ctx, { plugins: await ctx.pluginsDir(), policy, home: path.join(ctx.env.dir, 'serve-home'), extra });
  ctx.observe('server_start_ms', Math.round(performance.now() - t0));
  return srv;
}

/** Writes a hostile line; its reply: to `id`, or the next one with id null. */
async function refused(srv: RawServer, line: string | Uint8Array, id: string | number | null): Promise<WireMessage> {
  const n = srv.nullReplies().length + 1;
  if (typeof line === 'string') srv.line(line);
  else srv.write(Buffer.concat([line, Buffer.from('\n')]));
  return id === null ? srv.nullReply(n) : srv.reply(id);
}

/** An error as a client should read it: words, once, no McpError prefix, no schema dump, no stack, at most 2,048 characters (ABI-MCP-007). */
function expectClean(what: string, r: WireMessage): void {
  const message = r.error?.message ?? '';
  expect(message.length > 0, `${what}: the error has no message: ${show(r, 300)}`);
  expect(!/MCP error/.test(message), `${what}: the message carries the McpError prefix: ${message.slice(0, 200)}`);
  expect(
    !/"code":\s*"invalid_|"expected":|ZodError|\n\s+at /.test(message),
    `${what}: the message carries a schema dump or a stack: ${message.slice(0, 300)}`,
  );
  expect(message.length <= 2048, `${what}: the message is ${message.length} characters, over 2,048`);
}

/** Fails unless `r` is the JSON-RPC error `code` (and Helix code) with `id`, cleanly worded. */
function expectError(
  what: string,
  r: WireMessage,
  id: string | number | null,
  code: number,
  helixCode?: string,
  message?: RegExp | string,
): void {
  expect(
    r.jsonrpc === '2.0' && r.id === id,
    `${what}: answered with id ${JSON.stringify(r.id)}, not ${JSON.stringify(id)}: ${show(r, 300)}`,
  );
  expect(r.error?.code === code, `${what}: answered ${show(r.error ?? r.result, 300)}, not error ${code}`);
  if (helixCode !== undefined)
    expect(r.error?.data?.code === helixCode, `${what}: data.code is ${String(r.error?.data?.code)}, not ${helixCode}`);
  if (message !== undefined) {
    const ok = typeof message === 'string' ? r.error!.message === message : message.test(r.error!.message);
    expect(ok, `${what}: the message is ${JSON.stringify(r.error!.message)}, not ${String(message)}`);
  }
  expectClean(what, r);
}

/** Peak resident memory of a process so far (VmHWM), in MiB. */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? Number.NaN : Number(m[1]) / 1024;
}

/** Writes `bytes` to the server's stdin in `chunk`-sized pieces, waiting for drain (bounded). */
async function stream(srv: RawServer, total: number, chunk: number, fill: string): Promise<void> {
  const stdin = srv.child.stdin!;
  const piece = Buffer.alloc(chunk, fill);
  for (let sent = 0; sent < total; sent += chunk) {
    const part = sent + chunk <= total ? piece : piece.subarray(0, total - sent);
    if (!stdin.write(part)) {
      await Promise.race([
        new Promise((r) => stdin.once('drain', r)),
        new Promise((_, reject) => setTimeout(() => reject(new Error('stdin did not drain within 20 s')), 20_000)),
      ]);
    }
  }
}

const SPIN_PACK = {
  id: 'mcp.spin',
  module: `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (loop $l (br $l)) (i64.const 0)))`,
  manifest: { timeoutMs: 20_000, limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000_000 } },
};

export const mcpChecks: readonly Check[] = [
  {
    id: 'mcp.not-json-not-utf8',
    title: 'Lines that are not JSON, not UTF-8, or binary garbage are answered -32700 with id null, and the server serves on',
    category: 'mcp',
    abi: ['ABI-MCP-003', 'ABI-MCP-007'],
    engines: ['helix'],
    expected:
      'each of: text, a truncated object, invalid UTF-8 inside a JSON string, 4 KiB of random bytes (newlines removed), a NUL-laden line: -32700 I-REQ-MCP-PARSE, id null, a clean message; a good tools/call answers after each',
    async run(ctx) {
      const srv = await serve(ctx);
      const random = Buffer.from(
        Array.from({ length: 4096 }, (_, i) => ((i * 2654435761) >>> 13) & 0xff).map((b) => (b === 0x0a || b === 0x0d ? 0x20 : b)),
      );
      const lines: Array<[string, string | Uint8Array]> = [
        ['text', 'this is not json'],
        ['a truncated object', '{"jsonrpc":"2.0","id":"t","method":"ping"'],
        [
          'invalid UTF-8 in a string',
          Buffer.concat([
            Buffer.from('{"jsonrpc":"2.0","id":"u8","method":"ping","params":{"x":"'),
            Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
            Buffer.from('"}}'),
          ]),
        ],
        ['4 KiB of binary garbage', random],
        ['NUL bytes', Buffer.from([0, 0, 0, 0x7b, 0, 0x7d])],
      ];
      for (const [what, line] of lines) {
        const r = await refused(srv, line, null);
        expectError(what, r, null, -32700, 'I-REQ-MCP-PARSE');
        ctx.observe(what, r.error?.message);
        await srv.served(CANARY);
      }
      expect(
        !srv.messages().some((m) => m.id === 'u8' || m.id === 't'),
        'a line that is not valid UTF-8 JSON was answered by its id, as if it had been read',
      );
    },
  },
  {
    id: 'mcp.message-bound',
    title:
      'The message bound is exact: a line of the bound passes (LF or CRLF), one byte more is refused with its id; a long notification is dropped; blank lines skipped',
    category: 'mcp',
    abi: ['ABI-MCP-001', 'ABI-MCP-002', 'ABI-MCP-007'],
    engines: ['helix'],
    expected:
      'with --max-message-bytes 1024: a 1,024-byte ping is answered {} with LF and with CRLF; a 1,025-byte one -32600 I-REQ-MCP-MESSAGE-TOO-LARGE naming 1025 and 1024 with its id; one whose only ids are inside params and inside a string is answered with id null; a 2 KB notification gets no answer; blank lines none; a good tools/call answers after',
    async run(ctx) {
      const srv = await serve(ctx, ['--max-message-bytes', '1024']);
      expect(
        srv.stderr().includes('messages: up to 1024 bytes a line (--max-message-bytes)'),
        'the startup log does not state the bound of 1024 bytes',
      );
      const ping = (id: string, bytes: number): string => {
        const head = `{"jsonrpc":"2.0","id":"${id}","method":"ping","params":{"pad":"`;
        return `${head}${'p'.repeat(bytes - head.length - 3)}"}}`;
      };
      expect(Buffer.byteLength(ping('x1', 1024)) === 1024, 'the test line is not 1024 bytes');
      srv.line(ping('x1', 1024));
      expect(JSON.stringify((await srv.reply('x1')).result) === '{}', 'a line of exactly the bound was not answered');
      srv.line(ping('x2', 1024), '\r\n');
      expect(JSON.stringify((await srv.reply('x2')).result) === '{}', 'a line of exactly the bound ended by CRLF was not answered');
      srv.line(ping('x3', 1025));
      const over = await srv.reply('x3');
      expectError('1,025 bytes', over, 'x3', -32600, 'I-REQ-MCP-MESSAGE-TOO-LARGE', /is 1025 bytes, over the 1024-byte bound/);
      // Neither a request nor a notification at its top level: its only id is inside params, and one in a string.
      const inner = `{"jsonrpc":"2.0","params":{"id":"inner","pad":"\\"id\\":\\"fake\\",${'q'.repeat(1100)}"}}`;
      const innerReply = await refused(srv, inner, null);
      expectError('an id only inside params', innerReply, null, -32600, 'I-REQ-MCP-MESSAGE-TOO-LARGE');
      const before = srv.messages().length;
      srv.line(`{"jsonrpc":"2.0","method":"notifications/x","params":{"pad":"${'n'.repeat(2000)}"}}`);
      srv.write('\n\n\r\n');
      await srv.served(CANARY);
      expect(
        srv.messages().length === before + 1,
        `the long notification or the blank lines were answered: ${show(srv.messages().slice(before), 400)}`,
      );
      ctx.observe('refusal', over.error);
    },
  },
  {
    id: 'mcp.huge-line-bounded-memory',
    title: 'A 48 MiB line is refused as it streams, never held whole: the server stays within a few MiB and serves on',
    category: 'mcp',
    abi: ['ABI-MCP-002'],
    engines: ['helix'],
    expected:
      'with --max-message-bytes 65536: a tools/call line of 48 MiB with its id at the end is answered -32600 I-REQ-MCP-MESSAGE-TOO-LARGE naming 50,331,648 bytes and that id; the server peak RSS grows by less than 40 MiB (the line held whole would take 48 MiB as bytes alone); a good tools/call answers after',
    async run(ctx) {
      const srv = await serve(ctx, ['--max-message-bytes', '65536']);
      const pid = srv.child.pid!;
      const before = peakRssMiB(pid);
      const pre = `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"${CANARY}","arguments":{"pad":"`;
      const post = '"}},"id":"huge"}';
      const total = 48 * MiB;
      srv.write(pre);
      await stream(srv, total - pre.length - post.length, 256 * 1024, 'x');
      srv.write(`${post}\n`);
      const r = await srv.reply('huge', 60_000);
      const after = peakRssMiB(pid);
      ctx.observe('server_peak_rss_mib', { before: Math.round(before * 10) / 10, after: Math.round(after * 10) / 10 });
      expectError('48 MiB line', r, 'huge', -32600, 'I-REQ-MCP-MESSAGE-TOO-LARGE');
      expect(
        r.error?.data?.details !== undefined && (r.error.data.details as Record<string, unknown>).bytes === total,
        `the refusal does not name the line's length ${total}: ${JSON.stringify(r.error?.data?.details)}`,
      );
      expect(after - before < 40, `the server grew by ${(after - before).toFixed(1)} MiB while a 48 MiB line streamed past it`);
      await srv.served(CANARY);
    },
  },
  {
    id: 'mcp.never-ending-line',
    title:
      'A line that never ends does not grow the server nor stop it: when its newline finally comes it is refused, and the server serves on',
    category: 'mcp',
    abi: ['ABI-MCP-002'],
    engines: ['helix'],
    expected:
      'with --max-message-bytes 4096: 128 MiB of a ping line without newline leave the server alive and answering nothing; its peak RSS grows by less than 16 MiB between the 32nd and the 128th MiB (bounded, not held) and by less than 64 MiB in all; the newline brings -32600 I-REQ-MCP-MESSAGE-TOO-LARGE with the id found at the head of the line; a good tools/call answers after',
    async run(ctx) {
      const srv = await serve(ctx, ['--max-message-bytes', '4096']);
      const pid = srv.child.pid!;
      const before = peakRssMiB(pid);
      const marks: Record<string, number> = {};
      srv.write('{"jsonrpc":"2.0","id":"endless","method":"ping","params":{"pad":"');
      for (let mib = 4; mib <= 128; mib += 4) {
        await stream(srv, 4 * MiB, 64 * 1024, 'z');
        expect(srv.alive(), `the server exited while the line streamed (${mib} MiB)`);
        if (mib % 32 === 0) marks[`${mib}MiB`] = Math.round(peakRssMiB(pid) * 10) / 10;
      }
      expect(
        srv.messages().every((m) => m.id !== 'endless'),
        'the server answered the line before it ended',
      );
      srv.write('"}}\n');
      const r = await srv.reply('endless', 30_000);
      expectError('a 128 MiB line', r, 'endless', -32600, 'I-REQ-MCP-MESSAGE-TOO-LARGE');
      ctx.observe('server_peak_rss_mib', { before: Math.round(before * 10) / 10, ...marks });
      const late = marks['128MiB']! - marks['32MiB']!;
      expect(
        late < 16,
        `the server grew by ${late.toFixed(1)} MiB while the 32nd to the 128th MiB of the line streamed: it holds the line`,
      );
      expect(
        marks['128MiB']! - before < 64,
        `the server grew by ${(marks['128MiB']! - before).toFixed(1)} MiB while a 128 MiB line streamed`,
      );
      await srv.served(CANARY);
    },
  },
  {
    id: 'mcp.split-and-joined-frames',
    title: 'Frames split across many writes, several frames in one write, CRLF and blank lines are each read as one message',
    category: 'mcp',
    abi: ['ABI-MCP-001'],
    engines: ['helix'],
    expected:
      'a tools/call written one byte at a time (a multi-byte character split between writes) is answered once with its arguments intact; three pings in one write (LF, CRLF, blank lines between) are answered once each; a good tools/call answers after',
    async run(ctx) {
      const srv = await serve(ctx);
      const args = { text: 'héllo → ✓ 𝄞', n: 42 };
      const frame = Buffer.from(
        `${JSON.stringify({ jsonrpc: '2.0', id: 'split', method: 'tools/call', params: { name: CANARY, arguments: args } })}\r\n`,
      );
      for (const byte of frame) {
        srv.write(Buffer.from([byte]));
        await new Promise((r) => setImmediate(r));
      }
      const r = await srv.reply('split');
      expect(JSON.stringify(r.result?.structuredContent) === JSON.stringify(args), `the split frame's call answered ${show(r, 300)}`);
      srv.write(
        '{"jsonrpc":"2.0","id":"j1","method":"ping"}\n\n{"jsonrpc":"2.0","id":"j2","method":"ping"}\r\n\r\n{"jsonrpc":"2.0","id":"j3","method":"ping"}\n',
      );
      for (const id of ['j1', 'j2', 'j3'])
        expect(JSON.stringify((await srv.reply(id)).result) === '{}', `ping ${id} of the joined write was not answered {}`);
      await srv.served(CANARY);
      for (const id of ['split', 'j1', 'j2', 'j3']) {
        const count = srv.messages().filter((m) => m.id === id).length;
        expect(count === 1, `${id} was answered ${count} times`);
      }
    },
  },
  {
    id: 'mcp.batch-and-invalid-messages',
    title:
      'A batch is refused once with none of its members run; JSON that is not a JSON-RPC 2.0 message is refused -32600; an invalid response gets no answer',
    category: 'mcp',
    abi: ['ABI-MCP-004', 'ABI-MCP-007'],
    engines: ['helix'],
    expected:
      'a batch of two tools/calls: one -32600 I-REQ-MCP-BATCH with id null, neither call answered nor run; an empty batch the same; jsonrpc "1.0" (id kept), an object id, a fractional id, a null id, no method, a number method, an extra member, a bare number: -32600 I-REQ-MCP-INVALID-MESSAGE; a response to no request and an error response: no answer; a good tools/call answers after each',
    async run(ctx) {
      const srv = await serve(ctx);
      const batch = JSON.stringify([
        { jsonrpc: '2.0', id: 'b1', method: 'tools/call', params: { name: CANARY, arguments: { b: 1 } } },
        { jsonrpc: '2.0', id: 'b2', method: 'ping' },
      ]);
      expectError('a batch', await refused(srv, batch, null), null, -32600, 'I-REQ-MCP-BATCH', /batch array of 2 messages/);
      expectError('an empty batch', await refused(srv, '[]', null), null, -32600, 'I-REQ-MCP-BATCH');
      await srv.served(CANARY);
      const cases: Array<[string, string, string | number | null, string?]> = [
        ['jsonrpc "1.0"', '{"jsonrpc":"1.0","id":"v1","method":"ping"}', 'v1', 'I-REQ-MCP-INVALID-MESSAGE'],
        ['no jsonrpc', '{"id":"v0","method":"ping"}', 'v0', 'I-REQ-MCP-INVALID-MESSAGE'],
        ['an object id', '{"jsonrpc":"2.0","id":{"k":1},"method":"ping"}', null, 'I-REQ-MCP-INVALID-MESSAGE'],
        ['a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', null, 'I-REQ-MCP-INVALID-MESSAGE'],
        ['a null id', '{"jsonrpc":"2.0","id":null,"method":"ping"}', null, 'I-REQ-MCP-INVALID-MESSAGE'],
        ['no method', '{"jsonrpc":"2.0","id":"m1"}', 'm1'],
        ['a number method', '{"jsonrpc":"2.0","id":"m2","method":7}', 'm2', 'I-REQ-MCP-INVALID-MESSAGE'],
        ['an extra member', '{"jsonrpc":"2.0","id":"e1","method":"ping","extra":true}', 'e1', 'I-REQ-MCP-INVALID-MESSAGE'],
        ['a bare number', '5', null, 'I-REQ-MCP-INVALID-MESSAGE'],
        ['a string', '"ping"', null, 'I-REQ-MCP-INVALID-MESSAGE'],
      ];
      const seen: Record<string, string | undefined> = {};
      for (const [what, line, id, helixCode] of cases) {
        const r = await refused(srv, line, id);
        expectError(what, r, id, -32600, helixCode);
        seen[what] = r.error?.message;
        await srv.served(CANARY);
      }
      ctx.observe('messages', seen);
      const before = srv.messages().length;
      srv.line('{"jsonrpc":"2.0","id":"nobody","result":{"x":1}}');
      srv.line('{"jsonrpc":"2.0","id":"nobody2","error":{"code":-32000,"message":"no"}}');
      srv.line('{"jsonrpc":"2.0","result":{"x":1}}');
      await srv.served(CANARY);
      expect(srv.messages().length === before + 1, `responses were answered: ${show(srv.messages().slice(before), 400)}`);
      expect(!srv.messages().some((m) => m.id === 'b1' || m.id === 'b2'), 'a member of the batch was answered');
    },
  },
  {
    id: 'mcp.unknown-method-and-tool',
    title:
      'An unknown method is answered -32601 listing the methods served; a tools/call of an unknown tool -32602; a 100 KB method name gets a bounded message',
    category: 'mcp',
    abi: ['ABI-MCP-006', 'ABI-MCP-007'],
    engines: ['helix'],
    expected:
      'tools/run: -32601 I-REQ-MCP-METHOD naming it, data.details.methods listing initialize, ping, tools/list, tools/call; a 100,000-character method: -32601 with a message of at most 2,048 characters; tools/call of no-such-tool: -32602 "Unknown tool: no-such-tool"; a toolpack id in its dotted form (not its MCP name): -32602; a good tools/call answers after each',
    async run(ctx) {
      const srv = await serve(ctx);
      const r = await refused(srv, '{"jsonrpc":"2.0","id":"u1","method":"tools/run","params":{}}', 'u1');
      expectError(
        'tools/run',
        r,
        'u1',
        -32601,
        'I-REQ-MCP-METHOD',
        /^Method not found: "tools\/run"; this server answers initialize, ping, tools\/list, tools\/call/,
      );
      const methods = (r.error?.data?.details as { methods?: string[] } | undefined)?.methods ?? [];
      expect(
        ['initialize', 'ping', 'tools/list', 'tools/call'].every((m) => methods.includes(m)),
        `data.details.methods is ${JSON.stringify(methods)}`,
      );
      await srv.served(CANARY);
      const long = await refused(srv, JSON.stringify({ jsonrpc: '2.0', id: 'u2', method: `x/${'m'.repeat(100_000)}` }), 'u2');
      expectError('a 100 KB method', long, 'u2', -32601, 'I-REQ-MCP-METHOD');
      ctx.observe('long_method_message_chars', long.error?.message.length);
      await srv.served(CANARY);
      const unknown = await refused(
        srv,
        '{"jsonrpc":"2.0","id":"t1","method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}',
        't1',
      );
      expectError('an unknown tool', unknown, 't1', -32602, undefined, 'Unknown tool: no-such-tool');
      const dotted = await refused(
        srv,
        '{"jsonrpc":"2.0","id":"t2","method":"tools/call","params":{"name":"conformance.canary","arguments":{}}}',
        't2',
      );
      expectError('a dotted tool id', dotted, 't2', -32602, undefined, 'Unknown tool: conformance.canary');
      ctx.observe('methods', methods);
      await srv.served(CANARY);
    },
  },
  {
    id: 'mcp.bad-params',
    title: 'Params that do not match the method are answered -32602 naming each field in words; a broken notification gets no answer',
    category: 'mcp',
    abi: ['ABI-MCP-005', 'ABI-MCP-007'],
    engines: ['helix'],
    expected:
      'params "x": -32602 I-REQ-MCP-PARAMS "Invalid params of ping: params must be an object, not \\"x\\"."; name 5, arguments "n=1", level "verbose": their exact messages, data.details.violations listing each as {path, message}, never -32603; notifications/cancelled with an object requestId: no answer, a line on stderr; a good tools/call answers after each',
    async run(ctx) {
      const srv = await serve(ctx);
      const cases: Array<[string, string, string, string]> = [
        [
          'params not an object',
          '{"jsonrpc":"2.0","id":"p1","method":"ping","params":"x"}',
          'p1',
          'Invalid params of ping: params must be an object, not "x".',
        ],
        [
          'a number tool name',
          '{"jsonrpc":"2.0","id":"n1","method":"tools/call","params":{"name":5}}',
          'n1',
          'Invalid params of tools/call: params.name must be a string, not the number 5.',
        ],
        [
          'arguments as a string',
          `{"jsonrpc":"2.0","id":"a1","method":"tools/call","params":{"name":"${CANARY}","arguments":"n=1"}}`,
          'a1',
          'Invalid params of tools/call: params.arguments must be an object, not "n=1".',
        ],
        [
          'an unknown log level',
          '{"jsonrpc":"2.0","id":"l1","method":"logging/setLevel","params":{"level":"verbose"}}',
          'l1',
          `Invalid params of logging/setLevel: params.level must be one of ${LEVELS}.`,
        ],
        [
          'a cursor that is an array',
          '{"jsonrpc":"2.0","id":"c1","method":"tools/list","params":{"cursor":[1,2]}}',
          'c1',
          'Invalid params of tools/list: params.cursor must be a string, not an array.',
        ],
      ];
      for (const [what, line, id, message] of cases) {
        const r = await refused(srv, line, id);
        expectError(what, r, id, -32602, 'I-REQ-MCP-PARAMS', message);
        const violations = (r.error?.data?.details as { violations?: Array<{ path: unknown; message: unknown }> } | undefined)?.violations;
        expect(
          Array.isArray(violations) &&
            violations.length > 0 &&
            violations.every((v) => typeof v.path === 'string' && typeof v.message === 'string'),
          `${what}: data.details.violations is ${JSON.stringify(violations)}`,
        );
        await srv.served(CANARY);
      }
      const before = srv.messages().length;
      srv.line('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}');
      await srv.served(CANARY);
      expect(srv.messages().length === before + 1, 'the broken notification was answered');
      expect(
        /notification notifications\/cancelled dropped: params\.requestId must be a string or a number, not an object/.test(srv.stderr()),
        'the broken notification was not logged on stderr',
      );
    },
  },
  {
    id: 'mcp.deep-values',
    title: 'Values 100,000 levels deep in params, id, a notification and a response crash nothing',
    category: 'mcp',
    abi: ['ABI-MCP-010'],
    engines: ['helix'],
    expected:
      'tools/list with a cursor of 100,000 nested arrays: -32602 naming it an array; tools/call of an unknown tool with 100,000-deep arguments: -32602 Unknown tool; ping with deep _meta: {}; a deep id: -32600 with id null; a deep progress notification and a deep response: no answer; a good tools/call answers after',
    async run(ctx) {
      const srv = await serve(ctx);
      const depth = 100_000;
      const arrays = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const objects = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const cursor = await refused(srv, `{"jsonrpc":"2.0","id":"d1","method":"tools/list","params":{"cursor":${arrays}}}`, 'd1');
      expectError(
        'a deep cursor',
        cursor,
        'd1',
        -32602,
        undefined,
        'Invalid params of tools/list: params.cursor must be a string, not an array.',
      );
      const unknown = await refused(
        srv,
        `{"jsonrpc":"2.0","id":"d2","method":"tools/call","params":{"name":"no-such-tool","arguments":${objects}}}`,
        'd2',
      );
      expectError('deep arguments', unknown, 'd2', -32602, undefined, 'Unknown tool: no-such-tool');
      const ping = await refused(srv, `{"jsonrpc":"2.0","id":"d3","method":"ping","params":{"_meta":{"deep":${objects}}}}`, 'd3');
      expect(JSON.stringify(ping.result) === '{}', `a ping with deep _meta answered ${show(ping, 300)}`);
      const id = await refused(srv, `{"jsonrpc":"2.0","id":${objects},"method":"ping"}`, null);
      expectError('a deep id', id, null, -32600);
      srv.line(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${arrays},"progress":1}}`);
      srv.line(`{"jsonrpc":"2.0","id":"nobody","result":{"deep":${objects}}}`);
      await srv.served(CANARY);
      expect(!srv.messages().some((m) => m.id === 'nobody'), 'the deep response was answered');
      ctx.observe('server_alive', srv.alive());
    },
  },
  {
    id: 'mcp.cancellation',
    title:
      'A tools/call cancelled in flight gets no answer, frees its place, and the server serves on; a cancellation of nothing is harmless',
    category: 'mcp',
    abi: ['ABI-MCP-009'],
    engines: ['helix'],
    expected:
      'a call of an endless loop (20 s deadline, a trillion units of fuel) cancelled by notifications/cancelled after 300 ms is never answered (watched 2 s) and its run, read by `helix runs list` in another process, has ended; a good tools/call answers while and after; cancelling an unknown id and a finished one gets no answer',
    packs: () => [SPIN_PACK],
    async run(ctx) {
      const srv = await serve(ctx);
      srv.line(JSON.stringify({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'mcp-spin', arguments: { n: 1 } } }));
      await new Promise((r) => setTimeout(r, 300));
      await srv.served(CANARY);
      srv.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'conformance' } }));
      const t0 = performance.now();
      await srv.served(CANARY);
      ctx.observe('served_after_cancel_ms', Math.round(performance.now() - t0));
      await new Promise((r) => setTimeout(r, 2000));
      expect(
        !srv.messages().some((m) => m.id === 'slow'),
        `the cancelled call was answered: ${show(
          srv.messages().find((m) => m.id === 'slow'),
          300,
        )}`,
      );
      // The cancelled run ended (it did not spin on to its 20 s deadline): the store, read by the CLI as another process.
      const runs = await runCli(ctx, ['runs', 'list', '--tool', 'mcp.spin', '--json'], path.join(ctx.env.dir, 'serve-home'));
      expect(runs.code === 0, `helix runs list exited ${String(runs.code)}: ${runs.stderr.slice(-300)}`);
      const records = JSON.parse(runs.stdout) as Array<{ status: string; error?: { code?: string } | null }>;
      ctx.observe(
        'cancelled_run',
        records.map((r) => ({ status: r.status, code: r.error?.code })),
      );
      expect(records.length === 1 && records[0]!.status !== 'running', `the cancelled call's run is ${show(records, 300)}, not ended`);
      const before = srv.messages().length;
      srv.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'never-sent' } }));
      srv.line(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }));
      await srv.served(CANARY);
      expect(srv.messages().length === before + 1, 'a cancellation of nothing was answered');
      ctx.observe('stderr_tail', srv.stderr().split('\n').slice(-6).join('\n'));
    },
  },
  {
    id: 'mcp.stalled-reader',
    title: 'A client that stops reading is held back at the backlog bound without losing an answer, and is served once it reads',
    category: 'mcp',
    abi: ['ABI-MCP-008', 'ABI-MCP-009'],
    engines: ['helix'],
    expected:
      'with stdout unread, resources/read of a 1 MiB artifact sent 8 at a time: the server logs R-CAP-MCP-OUTPUT-BACKLOG over the 33,554,432-byte bound; once read, every answer arrives whole, the most unread output it logs is at most 32 MiB plus 64 answers and less than all of them; a good tools/call answers after',
    async run(ctx) {
      const srv = await serve(ctx);
      const file = path.join(ctx.env.importRoot, 'book.txt');
      writeFileSync(file, 'acgt'.repeat(MiB / 4));
      const imported = await srv.request('tools/call', { name: 'artifact_import', arguments: { path: file } }, 30_000);
      const id = (imported.result?.structuredContent as { id?: string } | undefined)?.id;
      expect(typeof id === 'string', `artifact_import answered ${show(imported, 300)}`);
      const uri = `helix://artifact/${id}`;
      const sample = await srv.request('resources/read', { uri }, 30_000);
      expect(sample.result !== undefined, `resources/read answered ${show(sample, 300)}`);
      const replyBytes = Buffer.byteLength(JSON.stringify(sample)) + 1;
      srv.child.stdout!.pause();
      // Requests keep coming while the client reads nothing: the server notes the episode when a
      // request arrives with more than 32 MiB unread.
      let n = 0;
      const deadline = Date.now() + 60_000;
      while (!/R-CAP-MCP-OUTPUT-BACKLOG: The client has \d+ bytes of output unread, over the 33554432-byte bound/.test(srv.stderr())) {
        expect(
          Date.now() < deadline && srv.alive() && n < 200,
          `the server never logged R-CAP-MCP-OUTPUT-BACKLOG after ${n} requests (answers of ${replyBytes} bytes); stderr: ${srv.stderr().slice(-600)}`,
        );
        for (let k = 0; k < 8; k++, n++)
          srv.line(JSON.stringify({ jsonrpc: '2.0', id: `r${n}`, method: 'resources/read', params: { uri } }));
        await new Promise((r) => setTimeout(r, 100));
      }
      srv.child.stdout!.resume();
      for (let i = 0; i < n; i++) {
        const r = await srv.reply(`r${i}`, 60_000);
        const text = (r.result?.contents as Array<{ text?: string }> | undefined)?.[0]?.text;
        expect(text?.length === MiB, `answer r${i} is not whole (${String(text?.length)} characters): ${show(r, 200)}`);
      }
      const caught = /the client caught up: at most (\d+) bytes were unread/.exec(srv.stderr());
      const largest = caught === null ? Number.NaN : Number(caught[1]);
      ctx.observe('backlog', { reply_bytes: replyBytes, answers: n, largest_unread: largest });
      expect(caught !== null, `the end of the backlog episode was not logged; stderr: ${srv.stderr().slice(-600)}`);
      expect(largest <= 32 * MiB + 64 * replyBytes && largest < n * replyBytes, `unread output reached ${largest} bytes`);
      await srv.served(CANARY);
    },
  },
];
