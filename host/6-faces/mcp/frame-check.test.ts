// The verdict on each stdio frame: JSON-RPC 2.0 messages pass, broken requests are answered
// (-32700, -32600, -32602) with the id when it is a valid one, broken notifications and responses
// only logged, and nothing deep or large is ever serialized back.
import { describe, expect, it } from 'vitest';
import { checkFrame, checkValue, type Verdict } from './frame-check.js';
import { FrameReader } from './frame-reader.js';

const frame = (text: string, max = 1 << 20): Verdict => {
  const frames = new FrameReader(max).push(Buffer.from(`${text}\n`, 'utf8'));
  return checkFrame(frames[0]!, max);
};
const reply = (v: Verdict): { id: unknown; code: number; message: string; data: { code: string } } => {
  if (v.kind !== 'reply') throw new Error(`expected a reply, got ${v.kind}`);
  return { id: v.id, code: v.error.code, message: v.error.message, data: v.error.data as { code: string } };
};

describe('checkFrame (ABI-MCP-003 .. ABI-MCP-006)', () => {
  it('checkFrame hands on requests, notifications and responses of JSON-RPC 2.0', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":[1]}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":5,"result":{}}',
      '{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m"}}',
    ]) {
      expect(frame(text).kind).toBe('message');
    }
  });

  it('checkFrame answers a line that is not JSON, or not UTF-8, with -32700 and id null', () => {
    expect(reply(frame('this is not json'))).toMatchObject({ id: null, code: -32700, data: { code: 'I-REQ-MCP-PARSE' } });
    expect(reply(frame('{"jsonrpc":"2.0","id":1,"method":"ping"'))).toMatchObject({
      id: null,
      code: -32700,
      message: expect.stringMatching(/^Parse error \(stdin line 1\): the line is not JSON/),
    });
    const bad = new FrameReader(100).push(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]));
    expect(reply(checkFrame(bad[0]!, 100))).toMatchObject({
      id: null,
      code: -32700,
      message: 'Parse error (stdin line 1): the line is not valid UTF-8.',
    });
  });

  it('checkFrame answers what is not a JSON-RPC 2.0 request with -32600, echoing a valid id', () => {
    expect(reply(frame('{"jsonrpc":"1.0","id":2,"method":"ping"}'))).toMatchObject({
      id: 2,
      code: -32600,
      message: 'Invalid request (stdin line 1): jsonrpc must be "2.0", not "1.0".',
    });
    expect(reply(frame('{"id":"k","method":"ping"}'))).toMatchObject({
      id: 'k',
      code: -32600,
      message: expect.stringContaining('jsonrpc must be "2.0", not missing'),
    });
    expect(reply(frame('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}'))).toMatchObject({
      id: null,
      code: -32600,
      message: expect.stringContaining('id must be a string or an integer, not an object'),
    });
    expect(reply(frame('{"jsonrpc":"2.0","id":1.5,"method":"ping"}'))).toMatchObject({ id: null, code: -32600 });
    expect(reply(frame('{"jsonrpc":"2.0","id":null,"method":"ping"}'))).toMatchObject({ id: null, code: -32600 });
    expect(reply(frame('{"jsonrpc":"2.0","id":4}'))).toMatchObject({
      id: 4,
      code: -32600,
      message: expect.stringContaining('the message has no method'),
    });
    expect(reply(frame('{"jsonrpc":"2.0","id":4,"method":7}'))).toMatchObject({
      id: 4,
      code: -32600,
      message: expect.stringContaining('method must be a string, not the number 7'),
    });
    expect(reply(frame('{"jsonrpc":"2.0","id":4,"method":"ping","extra":1}'))).toMatchObject({
      id: 4,
      code: -32600,
      message: expect.stringContaining('unexpected member "extra"'),
    });
    expect(reply(frame('"just a string"'))).toMatchObject({ id: null, code: -32600, data: { code: 'I-REQ-MCP-INVALID-MESSAGE' } });
  });

  it('checkFrame answers a batch array with one -32600 and id null: MCP has no batching', () => {
    expect(reply(frame('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'))).toMatchObject({
      id: null,
      code: -32600,
      message: expect.stringContaining('a batch array of 2 messages'),
      data: { code: 'I-REQ-MCP-BATCH' },
    });
  });

  it('checkFrame answers bad params of any request with -32602 in words, and only logs a notification', () => {
    expect(reply(frame('{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}'))).toMatchObject({
      id: 3,
      code: -32602,
      message: 'Invalid params of ping: params must be an object, not an array.',
    });
    expect(reply(frame('{"jsonrpc":"2.0","id":3,"method":"x","params":{"_meta":{"progressToken":{}}}}'))).toMatchObject({
      id: 3,
      code: -32602,
      message: 'Invalid params of x: params._meta.progressToken must be a string or a number, not an object.',
    });
    expect(frame('{"jsonrpc":"2.0","method":"notifications/x","params":5}')).toMatchObject({
      kind: 'ignore',
      why: expect.stringContaining('a notification gets no reply'),
    });
  });

  it('checkFrame never answers a response, even a broken one', () => {
    expect(frame('{"jsonrpc":"2.0","id":{"x":1},"result":{}}')).toMatchObject({ kind: 'ignore' });
    expect(frame('{"jsonrpc":"1.0","id":1,"error":{}}')).toMatchObject({ kind: 'ignore' });
  });

  it('checkFrame skips blank lines', () => {
    expect(frame('')).toEqual({ kind: 'blank' });
    expect(frame(' \t ')).toEqual({ kind: 'blank' });
  });

  it('checkFrame answers an oversize request with its id, and only logs an oversize notification or response', () => {
    const big = (text: string): Verdict => frame(text, 1024);
    const pad = 'a'.repeat(2000);
    expect(reply(big(`{"jsonrpc":"2.0","method":"tools/call","params":{"s":"${pad}"},"id":"r1"}`))).toMatchObject({
      id: 'r1',
      code: -32600,
      message: expect.stringMatching(/^Invalid request \(stdin line 1 is \d+ bytes, over the 1024-byte bound \(--max-message-bytes\)\)/),
      data: { code: 'I-REQ-MCP-MESSAGE-TOO-LARGE' },
    });
    expect(reply(big(`[${pad}]`))).toMatchObject({ id: null, code: -32600 });
    expect(big(`{"jsonrpc":"2.0","method":"notifications/message","params":{"s":"${pad}"}}`)).toMatchObject({
      kind: 'ignore',
      why: expect.stringContaining('a notification, dropped unread'),
    });
    expect(big(`{"jsonrpc":"2.0","id":1,"result":{"s":"${pad}"}}`)).toMatchObject({
      kind: 'ignore',
      why: expect.stringContaining('a response, dropped unread'),
    });
  });

  it('checkValue describes 100,000-deep values without recursing into them', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(checkValue({ jsonrpc: '2.0', id: deep, method: 'ping' }, 1)).toMatchObject({ kind: 'reply', id: null });
    expect(checkValue({ jsonrpc: deep, id: 1, method: 'ping' }, 1)).toMatchObject({ kind: 'reply', id: 1 });
    expect(checkValue({ jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: deep } } }, 1)).toMatchObject({
      kind: 'reply',
      error: { code: -32602 },
    });
    expect(checkValue({ jsonrpc: '2.0', id: 1, method: 'x', params: { deep } }, 1)).toMatchObject({ kind: 'message' });
  });
});
