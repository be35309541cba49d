// The SDK's helix/v1 plumbing: exports and imports, envelopes, panics, isolation and memory.

import { beforeAll, describe, expect, it } from 'vitest';
import { callOnce, callTool, compileProgram, instantiate, okOutput, readText, unpack } from './harness.js';

let probe: WebAssembly.Module;

beforeAll(async () => {
  probe = await compileProgram('test/assembly/probe.ts');
}, 120_000);

describe('a module built with the SDK', () => {
  it('imports nothing, so AssemblyScript defaults such as env.abort never appear', () => {
    expect(WebAssembly.Module.imports(probe)).toEqual([]);
  });

  it('exports exactly memory, alloc, dealloc, execute and helix_panic', () => {
    const exports = WebAssembly.Module.exports(probe).map((entry) => `${entry.kind}:${entry.name}`);
    expect(exports.sort()).toEqual(
      ['function:alloc', 'function:dealloc', 'function:execute', 'function:helix_panic', 'memory:memory'].sort(),
    );
  });
});

describe('run', () => {
  it('wraps the handler value in an ok envelope', async () => {
    const outcome = await callOnce(probe, { mode: 'echo', value: { a: 1 } });
    expect(outcome).toMatchObject({ kind: 'output', text: '{"status":"ok","output":{"a":1}}' });
  });

  it('answers input that is not an object with an I-REQ-INPUT error envelope', async () => {
    const outcome = await callOnce(probe, '[1,2]');
    expect(outcome.kind === 'output' && outcome.envelope).toEqual({
      status: 'error',
      error: {
        code: 'I-REQ-INPUT',
        message: 'input must be a JSON object',
        details: {},
        hint: "send the tool's parameters as one JSON object",
      },
    });
  });

  it('answers text that is not JSON with an I-REQ-INPUT error envelope naming the offset', async () => {
    const outcome = await callOnce(probe, '{"mode":');
    expect(outcome.kind === 'output' && outcome.envelope.error).toMatchObject({
      code: 'I-REQ-INPUT',
      message: 'input is not valid JSON: unexpected end of input at offset 8',
    });
  });
});

describe('Result', () => {
  it('error builds the four-field error envelope with details and hint', async () => {
    const outcome = await callOnce(probe, { mode: 'error' });
    expect(outcome.kind === 'output' && outcome.text).toBe(
      '{"status":"error","error":{"code":"D-DATA-FORMAT","message":"bad \\"data\\"",' +
        '"details":{"field":"value","position":7},"hint":"fix the data"}}',
    );
  });

  it('capabilityCall builds the terminal capability_call envelope', async () => {
    const outcome = await callOnce(probe, { mode: 'terminal' });
    expect(outcome.kind === 'output' && outcome.envelope).toEqual({
      status: 'capability_call',
      abi_version: 1,
      capability_call: { name: 'kv.get', args: { key: 'k' } },
    });
  });

  it('error cuts a message or hint longer than 4096 characters without splitting a surrogate pair', async () => {
    const outcome = await callOnce(probe, { mode: 'long_error' });
    if (outcome.kind !== 'output') throw new Error('expected an envelope');
    const { message, hint } = outcome.envelope.error ?? {};
    expect(message).toBe(`${'m'.repeat(4094)}\u2026`);
    expect(hint).toBe(`${'h'.repeat(4095)}\u2026`);
  });

  it('error aborts on an empty message, which the host would refuse', async () => {
    const outcome = await callOnce(probe, { mode: 'empty_message' });
    expect(outcome.kind === 'trap' && outcome.panic).toBe('Result.error: the message must not be empty');
  });

  it('error aborts on a code outside the taxonomy', async () => {
    const outcome = await callOnce(probe, { mode: 'bad_code' });
    expect(outcome.kind === 'trap' && outcome.panic).toMatch(/^Result\.error: 'NOT-A-CODE' is not a taxonomy code/);
  });
});

describe('a panic', () => {
  it('traps, and helix_panic returns the message with its source location', async () => {
    const outcome = await callOnce(probe, { mode: 'throw', detail: 'naïve 😀' });
    expect(outcome.kind).toBe('trap');
    if (outcome.kind !== 'trap') return;
    expect(outcome.error).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(outcome.panic).toMatch(/^kaboom: naïve 😀 at test\/assembly\/probe\.ts:\d+:\d+$/);
  });

  it('from a standard library check (index out of range) is recorded the same way', async () => {
    const outcome = await callOnce(probe, { mode: 'bounds', index: 7 });
    expect(outcome.kind === 'trap' && outcome.panic).toMatch(/^Index out of range at ~lib\/array\.ts:\d+:\d+$/);
  });

  it('is cut at 1024 bytes on a character boundary, still valid UTF-8', async () => {
    const outcome = await callOnce(probe, { mode: 'throw', detail: 'é'.repeat(2000) });
    expect(outcome.kind).toBe('trap');
    if (outcome.kind !== 'trap' || outcome.panic === null) throw new Error('no panic message');
    const bytes = Buffer.byteLength(outcome.panic);
    expect(bytes).toBeLessThanOrEqual(1024);
    expect(bytes).toBeGreaterThan(1020);
    expect(outcome.panic.startsWith('kaboom: éé')).toBe(true);
  });

  it('is absent (helix_panic returns 0) until something aborts', async () => {
    const tool = await instantiate(probe);
    expect(tool.helix_panic()).toBe(0n);
    okOutput(callTool(tool, { mode: 'echo' }));
    expect(tool.helix_panic()).toBe(0n);
  });
});

describe('instances', () => {
  it('start fresh: globals changed by one instance are not seen by another', async () => {
    const first = await instantiate(probe);
    const second = await instantiate(probe);
    expect(okOutput(callTool(first, { mode: 'count' }))).toEqual({ calls: 1 });
    expect(okOutput(callTool(first, { mode: 'count' }))).toEqual({ calls: 2 });
    expect(okOutput(callTool(second, { mode: 'count' }))).toEqual({ calls: 1 });
  });

  it('collect garbage during a long call, so memory stays far below what was allocated', async () => {
    const tool = await instantiate(probe);
    // 20,000 rounds allocate about 120 MB of strings and objects.
    expect(okOutput(callTool(tool, { mode: 'churn', rounds: 20_000 }))).toEqual({ kept: '{"s":"xx' });
    expect(tool.memory.buffer.byteLength).toBeLessThan(4 * 1024 * 1024);
  });

  it('reuse freed buffers: alloc and dealloc in a loop do not grow memory', async () => {
    const tool = await instantiate(probe);
    const before = tool.memory.buffer.byteLength;
    for (let i = 0; i < 10_000; i++) tool.dealloc(tool.alloc(64 * 1024), 64 * 1024);
    expect(tool.memory.buffer.byteLength).toBeLessThanOrEqual(before + 2 * 64 * 1024);
  });

  it('hand the host an output buffer that stays readable until dealloc', async () => {
    const tool = await instantiate(probe);
    const input = new TextEncoder().encode('{"mode":"echo","value":"x"}');
    const ptr = tool.alloc(input.length);
    new Uint8Array(tool.memory.buffer, ptr, input.length).set(input);
    const out = unpack(tool.execute(ptr, input.length));
    expect(readText(tool.memory, out.ptr, out.len)).toBe('{"status":"ok","output":"x"}');
    tool.dealloc(out.ptr, out.len);
    tool.dealloc(ptr, input.length);
  });
});
