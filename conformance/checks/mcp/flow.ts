// MCP checks of flow: a cancelled call ends its run, and a client that stops reading cannot make
// the server hold unbounded memory or stop serving.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, type Check } from '../../check.js';
import { runCli } from '../../kit/c-cpu-proc.js';
import { CANARY, MiB, serve, show, SPIN_PACK } from './shared.js';

/** The checks of this file, in the report's order. */
export const flowChecks: readonly Check[] = [
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
