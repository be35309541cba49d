// The stdio transport over real Node streams: broken lines are answered and the next served; a
// client behind on reading gets no new work and loses notifications, never answers; requests in
// flight are bounded; a result that cannot be serialized still gets an answer; a broken pipe ends it.
import { PassThrough, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StdioTransport } from './stdio-transport.js';

/** A stdout the client never reads: writes are held until `release` lets them through. */
function stalledStdout(): { stdout: Writable; release: () => void; written: () => string[] } {
  let held: Array<() => void> = [];
  const lines: string[] = [];
  const stdout = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      held.push(cb);
    },
  });
  const release = (): void => {
    while (held.length > 0) {
      const now = held;
      held = [];
      for (const cb of now) cb();
    }
  };
  return { stdout, release, written: () => lines };
}

/** A transport over a PassThrough stdin and a collecting stdout, started. */
async function open(options: { maxMessageBytes?: number; maxBacklogBytes?: number; maxInFlight?: number; stdout?: Writable } = {}) {
  const stdin = new PassThrough();
  const out: string[] = [];
  const stdout =
    options.stdout ??
    new Writable({
      write: (c: Buffer, _e, cb) => {
        out.push(...c.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
  const log: string[] = [];
  const t = new StdioTransport({
    stdin,
    stdout,
    maxMessageBytes: options.maxMessageBytes ?? 1024,
    maxBacklogBytes: options.maxBacklogBytes,
    maxInFlight: options.maxInFlight,
    log: (l) => log.push(l),
  });
  const received: JSONRPCMessage[] = [];
  let closed = 0;
  t.onmessage = (m) => received.push(m);
  t.onclose = () => (closed += 1);
  await t.start();
  return { t, stdin, out, log, received, closed: () => closed };
}
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const notification = (bytes: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: 'n'.repeat(bytes) },
});
const response = (id: number, bytes: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { text: 'r'.repeat(bytes) } });

describe('StdioTransport (ABI-MCP-001 .. ABI-MCP-004, ABI-MCP-008, ABI-MCP-009)', () => {
  it('StdioTransport answers each broken line, keeps serving, and delivers the good lines between', async () => {
    const s = await open({ maxMessageBytes: 1024 });
    s.stdin.write('not json\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    s.stdin.write(`{"jsonrpc":"2.0","id":2,"method":"x","params":{"s":"${'a'.repeat(2000)}"}}\r\n`);
    s.stdin.write('[1]\n{"jsonrpc":"2.0","id":3,"method":"ping"}\r\n');
    await tick();
    expect(s.received).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ]);
    expect(s.out.map((l) => JSON.parse(l) as { id: unknown; error: { code: number } }).map((r) => [r.id, r.error.code])).toEqual([
      [null, -32700],
      [2, -32600],
      [null, -32600],
    ]);
    expect(s.log).toHaveLength(3);
    expect(s.closed()).toBe(0);
  });

  it('StdioTransport rejects a message bound out of range, naming the option', () => {
    expect(() => new StdioTransport({ maxMessageBytes: 10 })).toThrow(
      'options.maxMessageBytes must be an integer from 1024 to 268435456 bytes, got 10',
    );
    expect(() => new StdioTransport({ maxMessageBytes: 2 ** 30 })).toThrow(RangeError);
  });

  it('StdioTransport sheds notifications and holds new requests while the client is behind, then catches up', async () => {
    const { stdout, release, written } = stalledStdout();
    const s = await open({ stdout, maxBacklogBytes: 10_000 });
    // The first send waits for a drain that only release() brings.
    const first = s.t.send(response(1, 12_000));
    const behind = s.t.backlogBytes;
    expect(behind).toBeGreaterThan(10_000);
    await s.t.send(notification(100));
    expect(s.t.backlogBytes).toBe(behind);
    expect(s.log).toEqual([
      expect.stringMatching(
        /^R-CAP-MCP-OUTPUT-BACKLOG: The client has \d+ bytes of output unread, over the 10000-byte bound: until it reads, its new requests wait and notifications are dropped\.$/,
      ),
    ]);
    s.stdin.write('{"jsonrpc":"2.0","id":5,"method":"ping"}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    await tick();
    expect(s.received).toEqual([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    release();
    await first;
    await tick();
    expect(s.received.map((m) => ('id' in m ? m.id : (m as { method: string }).method))).toEqual(['notifications/initialized', 5]);
    expect(s.log[1]).toMatch(/^the client caught up: at most \d+ bytes were unread; 1 notification\(s\) dropped$/);
    expect(written()).toHaveLength(1);
    expect(s.closed()).toBe(0);
  });

  it('StdioTransport starts at most maxInFlight requests and the next as each is answered or cancelled', async () => {
    const s = await open({ maxInFlight: 2 });
    const ping = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`;
    s.stdin.write(ping(1) + ping(2) + ping(3) + ping(4) + ping(5));
    await tick();
    const ids = (): unknown[] => s.received.filter((m) => 'id' in m).map((m) => (m as { id: unknown }).id);
    expect(ids()).toEqual([1, 2]);
    await s.t.send({ jsonrpc: '2.0', id: 1, result: {} });
    expect(ids()).toEqual([1, 2, 3]);
    // A waiting request that is cancelled never starts; an in-flight one frees its place (MCP sends no answer).
    s.stdin.write('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}\n');
    s.stdin.write('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n');
    await tick();
    expect(ids()).toEqual([1, 2, 3, 5]);
    expect(s.t.inFlight).toBe(2);
  });

  it('StdioTransport holds stdin once the waiting requests pass one message of bytes', async () => {
    const s = await open({ maxInFlight: 1, maxMessageBytes: 1024 });
    const ping = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"pad":"${'p'.repeat(350)}"}}\n`;
    s.stdin.write(ping(1) + ping(2) + ping(3) + ping(4) + ping(5));
    await tick();
    expect(s.stdin.isPaused()).toBe(true);
    await s.t.send({ jsonrpc: '2.0', id: 1, result: {} });
    expect(s.stdin.isPaused()).toBe(true);
    await s.t.send({ jsonrpc: '2.0', id: 2, result: {} });
    expect(s.stdin.isPaused()).toBe(false);
  });

  it('StdioTransport answers 20,000 waiting requests that are refused at once without recursing', async () => {
    const s = await open({ maxInFlight: 1, maxMessageBytes: 4 * 1024 * 1024 });
    let refused = 0;
    s.t.onmessage = (m) => {
      if ('id' in m && m.id !== 0) {
        refused += 1;
        void s.t.send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
      }
    };
    const lines = ['{"jsonrpc":"2.0","id":0,"method":"ping"}'];
    for (let id = 1; id <= 20_000; id++) lines.push(`{"jsonrpc":"2.0","id":${id},"method":"x"}`);
    s.stdin.write(`${lines.join('\n')}\n`);
    await tick();
    expect(refused).toBe(0);
    await s.t.send({ jsonrpc: '2.0', id: 0, result: {} });
    expect(refused).toBe(20_000);
    expect(s.t.inFlight).toBe(0);
  });

  it('StdioTransport answers a result that cannot be serialized with -32603 instead of leaving the request open', async () => {
    const s = await open();
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    await s.t.send({ jsonrpc: '2.0', id: 7, result: { deep } } as JSONRPCMessage);
    await s.t.send({ jsonrpc: '2.0', id: 8, result: { n: 10n } } as unknown as JSONRPCMessage);
    const replies = s.out.map((l) => JSON.parse(l) as { id: number; error: { code: number; message: string } });
    expect(replies.map((r) => [r.id, r.error.code])).toEqual([
      [7, -32603],
      [8, -32603],
    ]);
    expect(replies[0]!.error.message).toMatch(
      /^Internal error: the result could not be serialized \(Maximum call stack size exceeded\)\.$/,
    );
  });

  it('StdioTransport ends the connection when stdin ends', async () => {
    const s = await open();
    s.stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await new Promise((r) => s.stdin.once('end', r));
    await tick();
    expect(s.received).toHaveLength(1);
    expect(s.closed()).toBe(1);
  });

  it('StdioTransport ends the connection when stdout breaks', async () => {
    const stdout = new Writable({ write: (_c, _e, cb) => cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
    const s = await open({ stdout });
    const errors: string[] = [];
    s.t.onerror = (e) => errors.push(e.message);
    await s.t.send(response(1, 10));
    await tick();
    expect(errors).toEqual(['write EPIPE']);
    expect(s.closed()).toBe(1);
  });
});
