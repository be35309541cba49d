// The method guard between a transport and the SDK's Server, driven by the SDK's real Client over
// its in-memory transport against a real host: unknown methods -32601, bad params -32602 in words,
// one McpError prefix, task metadata ignored, and the server serving on after each.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, EmptyResultSchema, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoModule } from '../../../test/helpers/guest-wat.js';
import { toolpacksDir, tempDir } from '../../../test/helpers/toolpack.js';
import { createHost, type Host } from '../../5-host/host.js';
import { REQUEST_SCHEMAS, requestError } from './method-guard.js';
import { createMcpServer, type HelixMcpServer } from './server.js';

const home = tempDir('helix-mcp-guard-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;
let mcp: HelixMcpServer;
let client: Client;

beforeAll(async () => {
  plugins = await toolpacksDir([{ id: 'guard.echo', module: echoModule() }]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
  mcp = createMcpServer(host);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  client = new Client({ name: 'guard-test', version: '1' });
  await client.connect(clientSide);
}, 120_000);
afterAll(async () => {
  await client?.close();
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

/** The McpError a request fails with. */
const refusal = (p: Promise<unknown>): Promise<McpError> =>
  p.then(
    () => {
      throw new Error('expected a protocol error');
    },
    (e: unknown) => e as McpError,
  );
const echoWorks = async (n: number): Promise<void> => {
  const r = await client.callTool({ name: 'guard-echo', arguments: { n } });
  expect(r.structuredContent).toEqual({ n });
};

describe('method guard (ABI-MCP-005, ABI-MCP-006, ABI-MCP-007)', () => {
  it('REQUEST_SCHEMAS lists exactly the request methods the server has handlers for', () => {
    const handlers = (mcp.server as unknown as { _requestHandlers: Map<string, unknown> })._requestHandlers;
    expect([...REQUEST_SCHEMAS.keys()].sort()).toEqual([...handlers.keys()].sort());
  });

  it('an unknown method is -32601 naming it and the methods there are', async () => {
    const err = await refusal(client.request({ method: 'tools/run', params: {} }, EmptyResultSchema));
    expect(err.code).toBe(-32601);
    expect(err.message).toBe(
      'MCP error -32601: Method not found: "tools/run"; this server answers initialize, ping, tools/list, tools/call, resources/list, resources/templates/list, resources/read, logging/setLevel.',
    );
    expect(err.data).toMatchObject({ code: 'I-REQ-MCP-METHOD', hint: expect.any(String) });
    await echoWorks(1);
  });

  it('bad tools/call params are -32602 naming the field, with one McpError prefix and no zod dump', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 5 }, 'params.name must be a string, not the number 5'],
      [{ name: 'guard-echo', arguments: 'n=1' }, 'params.arguments must be an object, not "n=1"'],
      [{ arguments: {} }, 'params.name is required'],
    ];
    for (const [params, words] of cases) {
      const err = await refusal(client.request({ method: 'tools/call', params }, CallToolResultSchema));
      expect(err.code).toBe(-32602);
      expect(err.message).toBe(`MCP error -32602: Invalid params of tools/call: ${words}.`);
      expect(err.data).toMatchObject({ code: 'I-REQ-MCP-PARAMS', details: { method: 'tools/call', violations: [{ message: words }] } });
    }
    await echoWorks(2);
  });

  it('an unknown log level is -32602 listing the levels', async () => {
    const err = await refusal(client.request({ method: 'logging/setLevel', params: { level: 'verbose' } }, EmptyResultSchema));
    expect(err.code).toBe(-32602);
    expect(err.message).toBe(
      'MCP error -32602: Invalid params of logging/setLevel: params.level must be one of debug, info, notice, warning, error, critical, alert, emergency.',
    );
    await echoWorks(3);
  });

  it('an unknown tool keeps its -32602 with the McpError prefix once', async () => {
    const err = await refusal(client.callTool({ name: 'no-such-tool', arguments: {} }));
    expect(err.message).toBe('MCP error -32602: Unknown tool: no-such-tool');
  });

  it('a tools/call with task metadata runs as a normal call, since the server offers no tasks', async () => {
    const r = await client.request(
      { method: 'tools/call', params: { name: 'guard-echo', arguments: { n: 4 }, task: { ttl: 60_000 } } },
      CallToolResultSchema,
    );
    expect(r.structuredContent).toEqual({ n: 4 });
  });

  it('requestError describes 100,000-deep params without recursing into them', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(requestError('tools/list', { method: 'tools/list', params: { cursor: deep } })).toMatchObject({
      code: -32602,
      message: 'Invalid params of tools/list: params.cursor must be a string, not an array.',
    });
    expect(requestError('tools/call', { method: 'tools/call', params: { name: 'x', arguments: { deep } } })).toBeUndefined();
  });
});
