// http.request and secrets.get through the C SDK's wrappers, against a local HTTP server and a
// policy that grants the network origin and the secret: the real broker, guard and journal.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../../../host/index.js';
import { startCHost } from './c-packs.js';

const TOKEN = 'c-sdk-token-\u00e9';
let server: Server;
let origin: string;
let host: Host;
let cleanup: () => Promise<void>;
const received: Array<{ method: string; probe: string | undefined; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      received.push({ method: req.method ?? '', probe: req.headers['x-probe'] as string | undefined, body });
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Test': 'yes' });
      res.end(req.url === '/missing' ? 'nothing here' : `hello ${req.method} é`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.HELIX_C_TEST_TOKEN = TOKEN;
  const policy = [
    'version: 1',
    'tools: { allow: ["*"] }',
    'grants:',
    '  c.net: ["http.request", "secrets.get.api_token"]',
    'secrets:',
    '  api_token: { env: HELIX_C_TEST_TOKEN }',
    'network:',
    `  allow: ["${origin}"]`,
    '  allowPrivate: ["127.0.0.1"]',
    '',
  ].join('\n');
  ({ host, cleanup } = await startCHost(
    [
      {
        id: 'c.net',
        program: 'net.c',
        manifest: { capabilities: { abiVersion: 1, allow: ['http.request', 'secrets.get.api_token'], network: [origin] } },
      },
    ],
    policy,
  ));
}, 120_000);

afterAll(async () => {
  await cleanup?.();
  await new Promise((resolve) => server?.close(resolve));
  delete process.env.HELIX_C_TEST_TOKEN;
});

describe('http.request through helix_http_*', () => {
  it('GET: status, UTF-8 body, a header found in any case, the final URL', async () => {
    const r = await host.call({ tool_id: 'c.net', input: { op: 'http', url: `${origin}/hello` } });
    expect(r.error, JSON.stringify(r.error)).toBeUndefined();
    expect(r.output).toEqual({ status: 200, body: 'hello GET é', body_encoding: 'utf8', x_test: 'yes', url: `${origin}/hello` });
  });

  it('POST with headers and a body reaches the server; a 404 is still an ok call', async () => {
    const r = await host.call({ tool_id: 'c.net', input: { op: 'http', method: 'POST', url: `${origin}/missing`, body: '{"q":1}' } });
    expect(r.output).toMatchObject({ status: 404, body: 'nothing here' });
    expect(received.at(-1)).toEqual({ method: 'POST', probe: 'c', body: '{"q":1}' });
  });

  it('an origin outside the manifest and policy keeps its A-AUTH code', async () => {
    const r = await host.call({ tool_id: 'c.net', input: { op: 'http', url: 'http://127.0.0.2:9/x' } });
    expect(r.error?.code).toBe('A-AUTH-HTTP-ORIGIN');
    expect(r.error?.message).toMatch(/^http\.request: /);
  });
});

describe('secrets.get through helix_secrets_get', () => {
  it('reads the granted secret', async () => {
    const r = await host.call({ tool_id: 'c.net', input: { op: 'secret', name: 'api_token', expected: TOKEN } });
    expect(r.output).toEqual({ matches: true, length: Buffer.byteLength(TOKEN) });
  });

  it('another secret name is forbidden, with the same answer as any unknown capability', async () => {
    const r = await host.call({ tool_id: 'c.net', input: { op: 'secret', name: 'other', expected: '' } });
    expect(r.error).toMatchObject({ code: 'A-AUTH-FORBIDDEN', message: 'secrets.get: forbidden' });
  });
});
