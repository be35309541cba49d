// MCP checks of messages: batches and invalid messages, unknown methods and tools, bad params and
// values 100,000 levels deep each get their JSON-RPC error, cleanly worded (ABI-MCP-*).
import { expect, type Check } from '../../check.js';
import { CANARY, expectError, LEVELS, refused, serve, show } from './shared.js';

/** The checks of this file, in the report's order. */
export const messageChecks: readonly Check[] = [
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
];
