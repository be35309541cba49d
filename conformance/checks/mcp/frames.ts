// MCP checks of frames: lines that are not JSON or not UTF-8, past the message bound, huge or never
// ending, split across writes or joined in one: each gets the answer JSON-RPC 2.0 prescribes (or
// none) with the server's memory bounded, and the same server answers the next good call.
import { expect, type Check } from '../../check.js';
import { CANARY, expectError, MiB, peakRssMiB, refused, serve, show, stream } from './shared.js';

/** The checks of this file, in the report's order. */
export const frameChecks: readonly Check[] = [
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
];
