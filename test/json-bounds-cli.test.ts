// The JSON bounds (ABI-JSON-*) from outside the process: `helix call` prints exactly one envelope
// with the right exit code, and `helix serve` answers a real MCP client (the SDK's, and raw
// JSON-RPC lines for literals a JavaScript client cannot write, such as 1e400) and keeps serving.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope, type RunRecord } from '../abi/index.js';
import { getRun } from '../host/4-calls/runs/run-store.js';
import { openStore } from '../host/3-store/open-store.js';
import { bytesInput } from './helpers/bytes-guest-wat.js';
import { aPointer, capabilityRequest, jsonToolpacks, nestedArrays, nestedObjects, okEnvelope } from './helpers/json-tools.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { CLI, eventually, serveRaw, serveWithClient, type RawServe, type Served } from './fixtures/mcp/serve.js';

const exec = promisify(execFile);
const work = tempDir('helix-json-cli-');
let plugins: { dir: string; cleanup: () => void };

beforeAll(async () => {
  plugins = await toolpacksDir(jsonToolpacks());
}, 120_000);
afterAll(() => {
  plugins?.cleanup();
  work.cleanup();
});

/** The runs' status in a store no process holds open now. */
async function runsIn(home: string, ids: readonly string[]): Promise<RunRecord['status'][]> {
  const store = openStore(home);
  try {
    return ids.map((id) => getRun(store, id)!.status);
  } finally {
    await store.close();
  }
}

describe('helix call', () => {
  const home = path.join(work.dir, 'cli-home');
  let files = 0;
  /** Runs `helix call TOOL` with the input as --input text, or (file: true) as --input-file. */
  async function helixCall(
    tool: string,
    input: string,
    file = false,
  ): Promise<{ code: number; envelope: ResponseEnvelope; stderr: string }> {
    let source = ['--input', input];
    if (file) {
      files += 1;
      const name = path.join(work.dir, `input-${files}.json`);
      writeFileSync(name, input);
      source = ['--input-file', name];
    }
    const result = await exec(process.execPath, [CLI, 'call', tool, '--toolpacks', plugins.dir, '--home', home, '--compact', ...source], {
      maxBuffer: 64 << 20,
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    const lines = result.stdout.trim().split('\n');
    expect(lines, `stdout: ${result.stdout.slice(0, 300)} stderr: ${result.stderr.slice(0, 300)}`).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    return { code: result.code, envelope: ResponseEnvelopeSchema.parse(JSON.parse(lines[0]!)), stderr: result.stderr };
  }
  const hostile: string[] = [];

  it('refuses an input 1,600 and 100,000 levels deep with one I-REQ-JSON-DEPTH envelope, exit 2 (ABI-JSON-001)', async () => {
    for (const [text, file] of [
      [nestedObjects(1600), false],
      [nestedObjects(100_000), true],
    ] as const) {
      const r = await helixCall('j.echo', text, file);
      expect(r.code).toBe(2);
      expect(r.envelope).toMatchObject({
        status: 'invalid_request',
        run_id: null,
        error: { code: 'I-REQ-JSON-DEPTH', details: { pointer: aPointer('/input', 64) } },
      });
    }
  }, 60_000);

  it('refuses 1e400 and both large integers with I-REQ-JSON-NUMBER, quoting the literal, exit 2 (ABI-JSON-003)', async () => {
    for (const literal of ['1e400', '9007199254740993', '9007199254740992']) {
      const r = await helixCall('j.echo', `{"n":${literal}}`);
      expect(r.code).toBe(2);
      expect(r.envelope).toMatchObject({
        status: 'invalid_request',
        run_id: null,
        error: { code: 'I-REQ-JSON-NUMBER', details: { pointer: '/input/n' } },
      });
      expect(r.envelope.error!.message).toBe(
        `At /input/n, the request has the number ${literal}, ${literal === '1e400' ? 'which is not finite' : 'beyond ±9007199254740991 (2^53-1), where a double no longer keeps integers exact'}.`,
      );
    }
  }, 60_000);

  it('cuts a pointer to 512 characters after prefixing /input, as host.call does (ABI-JSON-007)', async () => {
    const r = await helixCall('j.echo', `{"${'k'.repeat(600)}\\ud800":1}`);
    expect(r.code).toBe(2);
    expect(r.envelope).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-JSON-VALUE' } });
    const pointer = String(r.envelope.error!.details.pointer);
    expect(pointer).toHaveLength(512);
    expect(pointer).toMatch(/^\/input\/k+…$/);
  }, 60_000);

  it('refuses an input file that is not UTF-8 rather than reading U+FFFD into it (ABI-JSON-007)', async () => {
    const name = path.join(work.dir, 'latin1.json');
    writeFileSync(name, Buffer.from([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]));
    const r = await exec(process.execPath, [
      CLI,
      'call',
      'j.echo',
      '--toolpacks',
      plugins.dir,
      '--home',
      home,
      '--compact',
      '--input-file',
      name,
    ]).catch((e: { code: number; stdout: string }) => e);
    expect((r as { code: number }).code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'invalid_request',
      error: { code: 'I-REQ-JSON', message: `${name} is not UTF-8 text.` },
    });
  }, 60_000);

  it('ends a guest output 1,600 and 100,000 levels deep with one S-TOOL-OUTPUT-DEPTH envelope, exit 1, the run failed (ABI-JSON-002)', async () => {
    for (const output of [nestedObjects(1600), `{"v":${nestedArrays(100_000)}}`]) {
      const r = await helixCall('j.out', JSON.stringify(bytesInput(okEnvelope(output))), true);
      expect(r.code).toBe(1);
      expect(r.envelope).toMatchObject({ status: 'terminal_error', error: { code: 'S-TOOL-OUTPUT-DEPTH' } });
      hostile.push(r.envelope.run_id!);
    }
  }, 60_000);

  it('ends a capability request 1,600 levels deep to a forbidden capability with S-TOOL-CAPABILITY-DEPTH, exit 1 (ABI-JSON-006)', async () => {
    const r = await helixCall('j.req', JSON.stringify(bytesInput(capabilityRequest('kv.put', nestedObjects(1600)))), true);
    expect(r.code).toBe(1);
    expect(r.envelope).toMatchObject({
      status: 'terminal_error',
      error: { code: 'S-TOOL-CAPABILITY-DEPTH', details: { pointer: aPointer('/args', 64) } },
    });
    hostile.push(r.envelope.run_id!);
  }, 60_000);

  it('leaves every such run recorded failed, and the next call succeeds', async () => {
    expect(await runsIn(home, hostile)).toEqual(hostile.map(() => 'failed'));
    const r = await helixCall('j.echo', '{"after":true}');
    expect(r).toMatchObject({ code: 0, envelope: { status: 'success', output: { after: true } } });
  }, 60_000);
});

describe('helix serve', () => {
  const home = path.join(work.dir, 'serve-home');
  let served: Served;
  const hostile: string[] = [];
  beforeAll(async () => {
    served = await serveWithClient(['--toolpacks', plugins.dir, '--home', home], { cwd: work.dir });
  }, 60_000);
  afterAll(async () => {
    await served?.close();
  });
  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    (await served.client.callTool({ name, arguments: args })) as CallToolResult;
  /** The server answers a well-behaved call on the same connection. */
  async function expectServing(): Promise<void> {
    const r = await call('j-echo', { alive: hostile.length });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ alive: hostile.length });
  }

  it('answers an input 1,600 levels deep with an I-REQ-JSON-DEPTH error result and keeps serving (ABI-JSON-001)', async () => {
    const r = await call('j-echo', JSON.parse(nestedObjects(1600)));
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({
      status: 'invalid_request',
      error: { code: 'I-REQ-JSON-DEPTH', details: { pointer: aPointer('/input', 64) } },
    });
    await expectServing();
  });

  it('answers both large integers a JavaScript client sends with I-REQ-JSON-NUMBER (ABI-JSON-003)', async () => {
    // biome-ignore lint/correctness/noPrecisionLoss: 2^53 + 1 as a JavaScript client writes it; it leaves the client as 2^53
    for (const n of [9007199254740993, 9007199254740992]) {
      const r = await call('j-echo', { n });
      expect(r.structuredContent).toMatchObject({
        status: 'invalid_request',
        error: { code: 'I-REQ-JSON-NUMBER', details: { pointer: '/input/n' } },
      });
    }
    await expectServing();
  });

  it('answers guest outputs 1,600 and 100,000 levels deep with S-TOOL-OUTPUT-DEPTH and keeps serving (ABI-JSON-002)', async () => {
    for (const output of [nestedObjects(1600), `{"v":${nestedArrays(100_000)}}`]) {
      const r = await call('j-out', bytesInput(okEnvelope(output)));
      expect(r.structuredContent).toMatchObject({ status: 'terminal_error', error: { code: 'S-TOOL-OUTPUT-DEPTH' } });
      hostile.push(r._meta!['helix/run_id'] as string);
      await expectServing();
    }
  });

  it('ends a run whose capability request to a forbidden capability is 1,600 levels deep, and keeps serving (ABI-JSON-006)', async () => {
    const r = await call('j-req', bytesInput(capabilityRequest('kv.put', nestedObjects(1600))));
    expect(r.structuredContent).toMatchObject({ status: 'terminal_error', error: { code: 'S-TOOL-CAPABILITY-DEPTH' } });
    hostile.push(r._meta!['helix/run_id'] as string);
    await expectServing();
  });

  it('leaves every such run recorded failed, none running', async () => {
    await served.close();
    expect(await runsIn(home, hostile)).toEqual(hostile.map(() => 'failed'));
  });
});

describe('helix serve, raw JSON-RPC lines', () => {
  let raw: RawServe;
  let id = 1;
  /** Writes one line and waits for the reply with its id. */
  async function request(line: (id: number) => string): Promise<{ result?: CallToolResult; error?: unknown }> {
    id += 1;
    const mine = id;
    raw.child.stdin!.write(`${line(mine)}\n`);
    return eventually(
      () =>
        raw
          .stdout()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id?: number; result?: CallToolResult; error?: unknown })
          .find((m) => m.id === mine),
      30_000,
    );
  }
  const toolsCall = (args: string) => (n: number) =>
    `{"jsonrpc":"2.0","id":${n},"method":"tools/call","params":{"name":"j-echo","arguments":${args}}}`;
  beforeAll(async () => {
    raw = serveRaw(['--toolpacks', plugins.dir, '--home', path.join(work.dir, 'raw-home')], { cwd: work.dir });
    await request((n) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: n,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    );
    raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }, 60_000);
  afterAll(async () => {
    raw?.child.stdin?.end();
    await raw?.exited;
  });

  it('answers 1e400 and 9007199254740993 as written on the wire with I-REQ-JSON-NUMBER, __proto__ with I-REQ-JSON-VALUE, then a good call (ABI-JSON-003, -004)', async () => {
    for (const literal of ['1e400', '-1e400', '9007199254740993']) {
      const r = await request(toolsCall(`{"n":${literal}}`));
      expect(r.result, literal).toMatchObject({
        isError: true,
        structuredContent: { status: 'invalid_request', error: { code: 'I-REQ-JSON-NUMBER', details: { pointer: '/input/n' } } },
      });
    }
    // A nested one reaches the host; a top-level one, which the SDK's schema would drop, is refused by the transport.
    const proto = await request(toolsCall('{"a":{"__proto__":{"n":1}}}'));
    expect(proto.result).toMatchObject({
      isError: true,
      structuredContent: { error: { code: 'I-REQ-JSON-VALUE', details: { pointer: '/input/a/__proto__' } } },
    });
    const top = await request(toolsCall('{"__proto__":{"n":1}}'));
    expect(top.error).toMatchObject({
      code: -32602,
      data: { code: 'I-REQ-MCP-PARAMS', details: { pointer: '/params/arguments/__proto__' } },
    });
    expect((top.error as { message: string }).message).toMatch(/params\.arguments has a member named "__proto__"/);
    const good = await request(toolsCall('{"n":1}'));
    expect(good.result).toMatchObject({ structuredContent: { n: 1 } });
    expect(raw.child.exitCode).toBeNull();
  });
});
