// The SDK's capability binding against a stand-in host that implements helix_v1.capability_call.

import { beforeAll, describe, expect, it } from 'vitest';
import { callTool, compileProgram, instantiate, okOutput, readText, type ToolExports } from './harness.js';

let module: WebAssembly.Module;

beforeAll(async () => {
  module = await compileProgram('test/assembly/capability-probe.ts');
}, 120_000);

/** A capability request as the guest writes it (abi/ABI.md, capability_call). */
interface CapabilityRequest {
  abi_version: number;
  name: string;
  args?: unknown;
}

/** A stand-in broker: records each request and answers via the guest's own alloc, as the host does. */
async function withHost(answer: (request: CapabilityRequest) => unknown): Promise<{ tool: ToolExports; requests: CapabilityRequest[] }> {
  const requests: CapabilityRequest[] = [];
  let tool: ToolExports | undefined;
  const imports = {
    helix_v1: {
      capability_call(ptr: number, len: number): bigint {
        if (!tool) throw new Error('called before instantiation finished');
        const request = JSON.parse(readText(tool.memory, ptr, len)) as CapabilityRequest;
        requests.push(request);
        const bytes = new TextEncoder().encode(JSON.stringify(answer(request)));
        const out = tool.alloc(bytes.length);
        new Uint8Array(tool.memory.buffer, out, bytes.length).set(bytes);
        return (BigInt(out) << 32n) | BigInt(bytes.length);
      },
    },
  };
  tool = await instantiate(module, imports);
  return { tool, requests };
}

describe('capabilityCall', () => {
  it('is the only import of a module that uses it', () => {
    expect(WebAssembly.Module.imports(module)).toEqual([{ module: 'helix_v1', name: 'capability_call', kind: 'function' }]);
  });

  it('sends the versioned request and returns the parsed result of an ok response', async () => {
    const { tool, requests } = await withHost((request) => ({
      status: 'ok',
      abi_version: 1,
      capability_result: { name: request.name, result: { unix_ms: 1700000000000, echo: request.args } },
    }));
    const output = okOutput(callTool(tool, { name: 'clock.now_unix', args: { tz: 'UTC', n: [1, 2] } }));
    expect(requests).toEqual([{ abi_version: 1, name: 'clock.now_unix', args: { tz: 'UTC', n: [1, 2] } }]);
    expect(output).toEqual({ ok: true, result: { unix_ms: 1700000000000, echo: { tz: 'UTC', n: [1, 2] } } });
  });

  it('reports the code, message and hint of an error response', async () => {
    const { tool } = await withHost(() => ({
      status: 'error',
      abi_version: 1,
      error: { code: 'A-AUTH-FORBIDDEN', message: 'forbidden', hint: 'ask for a grant' },
    }));
    const output = okOutput(callTool(tool, { name: 'secrets.get' }));
    expect(output).toEqual({ ok: false, code: 'A-AUTH-FORBIDDEN', message: 'forbidden', hint: 'ask for a grant' });
  });

  it('returns the raw response text through the low-level binding', async () => {
    const { tool, requests } = await withHost((request) => ({
      status: 'ok',
      abi_version: 1,
      capability_result: { name: request.name, result: 'é😀' },
    }));
    const output = okOutput<{ response: { capability_result: { result: unknown } } }>(callTool(tool, { name: 'log.emit', raw: true }));
    expect(requests[0]).toEqual({ abi_version: 1, name: 'log.emit', args: { raw: true } });
    expect(output.response.capability_result.result).toBe('é😀');
  });

  it('frees every response buffer, so many calls do not grow memory', async () => {
    const big = 'x'.repeat(256 * 1024);
    const { tool } = await withHost((request) => ({
      status: 'ok',
      abi_version: 1,
      capability_result: { name: request.name, result: big },
    }));
    okOutput(callTool(tool, { name: 'artifact.read' }));
    const after = tool.memory.buffer.byteLength;
    for (let i = 0; i < 50; i++) okOutput(callTool(tool, { name: 'artifact.read' }));
    expect(tool.memory.buffer.byteLength).toBeLessThanOrEqual(after * 2);
  });

  it('aborts with a clear message when the host answers outside the ABI', async () => {
    const { tool } = await withHost(() => ({ status: 'maybe' }));
    const outcome = callTool(tool, { name: 'kv.get' });
    expect(outcome.kind === 'trap' && outcome.panic).toBe('capability_call: response status is neither ok nor error');
  });
});
