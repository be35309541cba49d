// http.request against real local servers: what it lets through, what it refuses before a
// single byte leaves the host, and that the connection goes only to the address it checked.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpRequest } from './http.js';
import { allowing, callHttp, httpRefusal, startServer, testContext, type TestServer } from '../test/helpers/http-test-kit.js';
import type { ResolvedAddress, Resolver } from './http-transport.js';

const call = callHttp;
const refusal = httpRefusal;

/** A fake DNS: names map to fixed answers, and every question is counted. */
function fakeDns(answers: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const found = answers[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

let server: TestServer;
let origin: string;

beforeAll(async () => {
  server = await startServer((req, res) => {
    if (req.url === '/binary') {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(Buffer.from([0xff, 0x00, 0x80, 0xfe, 0x41]));
    } else {
      const echo = { method: req.method, url: req.url, host: req.headers.host, body: req.body.toString('base64'), headers: req.headers };
      res.writeHead(201, { 'Content-Type': 'application/json', 'X-Server': 'Test' }).end(JSON.stringify(echo));
    }
  });
  origin = server.origin;
});
afterAll(() => server.close());

describe('http.request to allowed destinations', () => {
  it('http.request returns status, lowercase headers and a UTF-8 body for an allowed GET', async () => {
    const result = await call({ url: `${origin}/hello?x=1` }, allowing([origin]));
    expect(result.status).toBe(201);
    expect(result.headers['x-server']).toBe('Test');
    expect(result.body_encoding).toBe('utf8');
    expect(result.url).toBe(`${origin}/hello?x=1`);
    expect(JSON.parse(result.body)).toMatchObject({ method: 'GET', url: '/hello?x=1', host: `127.0.0.1:${server.port}` });
  });

  it('http.request sends a POST body and headers, and the host sets Content-Length itself', async () => {
    const result = await call(
      { method: 'POST', url: `${origin}/items`, headers: { 'Content-Type': 'application/json' }, body: '{"a":"é"}' },
      allowing([origin]),
    );
    const echo = JSON.parse(result.body) as { method: string; body: string; headers: Record<string, string> };
    expect(echo.method).toBe('POST');
    expect(Buffer.from(echo.body, 'base64').toString('utf8')).toBe('{"a":"é"}');
    expect(echo.headers['content-type']).toBe('application/json');
    expect(echo.headers['content-length']).toBe(String(Buffer.byteLength('{"a":"é"}')));
  });

  it('http.request decodes a base64 request body and returns a binary response as base64', async () => {
    const sent = await call(
      { method: 'PUT', url: `${origin}/blob`, body: Buffer.from([0, 1, 254, 255]).toString('base64'), body_encoding: 'base64' },
      allowing([origin]),
    );
    expect(Buffer.from((JSON.parse(sent.body) as { body: string }).body, 'base64')).toEqual(Buffer.from([0, 1, 254, 255]));
    const got = await call({ url: `${origin}/binary` }, allowing([origin]));
    expect(got.body_encoding).toBe('base64');
    expect(Buffer.from(got.body, 'base64')).toEqual(Buffer.from([0xff, 0x00, 0x80, 0xfe, 0x41]));
  });

  it('http.request refuses a GET with a body and a body that is not base64', async () => {
    expect((await refusal({ url: `${origin}/`, body: 'x' }, allowing([origin]))).code).toBe('I-REQ-HTTP-BODY');
    expect(
      (await refusal({ method: 'POST', url: `${origin}/`, body: 'not base64!', body_encoding: 'base64' }, allowing([origin]))).code,
    ).toBe('I-REQ-HTTP-BODY');
  });
});

describe('http.request refuses destinations before connecting', () => {
  it('http.request refuses an origin missing from the manifest, and one missing from the policy', async () => {
    const before = server.hits.length;
    const notInManifest = await refusal({ url: `${origin}/` }, testContext({ manifest: [], allow: [origin], allowPrivate: ['127.0.0.1'] }));
    expect(notInManifest.code).toBe('A-AUTH-HTTP-ORIGIN');
    expect(notInManifest.message).toContain("not in the manifest's capabilities.network");
    const notInPolicy = await refusal({ url: `${origin}/` }, testContext({ manifest: [origin], allow: [], allowPrivate: ['127.0.0.1'] }));
    expect(notInPolicy.code).toBe('A-AUTH-HTTP-ORIGIN');
    expect(notInPolicy.hint).toBe(`Add http://127.0.0.1:${server.port} to the policy's network.allow if the tool should reach it.`);
    expect(server.hits.length).toBe(before);
  });

  it('http.request refuses 127.0.0.1 when the policy does not list it in allowPrivate', async () => {
    const before = server.hits.length;
    const err = await refusal({ url: `${origin}/` }, testContext({ manifest: [origin], allow: [origin] }));
    expect(err.code).toBe('A-AUTH-HTTP-PRIVATE-ADDRESS');
    expect(err.message).toContain('127.0.0.1 is loopback (127.0.0.0/8)');
    expect(server.hits.length).toBe(before);
  });

  it('http.request refuses localhost, which the system resolver maps to loopback', async () => {
    const local = `http://localhost:${server.port}`;
    const err = await refusal({ url: `${local}/` }, testContext({ manifest: [local], allow: [local] }));
    expect(err.code).toBe('A-AUTH-HTTP-PRIVATE-ADDRESS');
    expect(err.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1), which is loopback/);
  });

  it.each([
    ['loopback.test', ['::1'], 'loopback'],
    ['private.test', ['10.0.0.7'], 'private'],
    ['metadata.test', ['169.254.169.254'], 'link-local'],
    ['mapped.test', ['::ffff:127.0.0.1'], 'loopback'],
    ['ula.test', ['fd00::1'], 'unique local'],
    ['cgnat.test', ['100.64.1.1'], 'carrier-grade NAT'],
    ['mixed.test', ['93.184.216.34', '192.168.1.10'], 'private'],
  ])('http.request refuses %s resolving to %j as %s', async (host, addresses, kind) => {
    const dns = fakeDns({ [host]: addresses });
    const cap = createHttpRequest({ resolve: dns });
    const url = `https://${host}:443`;
    const err = await refusal({ url: `${url}/` }, testContext({ manifest: [url], allow: [url] }), cap);
    expect(err.code).toBe('A-AUTH-HTTP-PRIVATE-ADDRESS');
    expect(err.details).toMatchObject({ host, kind });
  });

  it.each(['http://10.0.0.1:80', 'http://169.254.169.254:80', 'http://0.0.0.0:80'])(
    'http.request refuses the IP literal %s even when both lists allow it',
    async (url) => {
      const err = await refusal({ url: `${url}/latest/meta-data/` }, testContext({ manifest: [url], allow: [url] }));
      expect(err.code).toBe('A-AUTH-HTTP-PRIVATE-ADDRESS');
    },
  );

  it('http.request refuses IPv6 literals such as [::1], which no origin pattern can name', async () => {
    const err = await refusal({ url: `http://[::1]:${server.port}/` }, allowing([origin]));
    expect(err.code).toBe('A-AUTH-HTTP-ORIGIN');
  });

  it('http.request refuses header injection and host-owned headers without sending anything', async () => {
    const before = server.hits.length;
    const attempts: Record<string, string>[] = [
      { 'X-A': 'b\r\nX-Injected: 1' },
      { Host: 'evil.example' },
      { 'Transfer-Encoding': 'chunked' },
      { 'X-A\nB': 'c' },
    ];
    for (const headers of attempts) {
      expect((await refusal({ url: `${origin}/`, headers }, allowing([origin]))).code).toBe('I-REQ-HTTP-HEADER');
    }
    expect(server.hits.length).toBe(before);
  });

  it('http.request refuses a URL with userinfo and keeps the password out of the error', async () => {
    const err = await refusal({ url: `http://user:hunter2@127.0.0.1:${server.port}/` }, allowing([origin]));
    expect(err.code).toBe('I-REQ-HTTP-URL');
    expect(JSON.stringify(err.toWire())).not.toContain('hunter2');
  });

  it('http.request reports a name that does not resolve as R-UPSTREAM-HTTP-DNS', async () => {
    const url = 'https://nowhere.test:443';
    const err = await refusal(
      { url: `${url}/` },
      testContext({ manifest: [url], allow: [url] }),
      createHttpRequest({ resolve: fakeDns({}) }),
    );
    expect(err.code).toBe('R-UPSTREAM-HTTP-DNS');
    expect(err.details).toMatchObject({ host: 'nowhere.test', cause_code: 'ENOTFOUND' });
  });

  it('http.request reports a refused connection as R-UPSTREAM-HTTP-NETWORK', async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const err = await refusal({ url: `${closed.origin}/` }, allowing([closed.origin]));
    expect(err.code).toBe('R-UPSTREAM-HTTP-NETWORK');
    expect(err.details).toMatchObject({ cause_code: 'ECONNREFUSED' });
  });
});

describe('http.request pins the connection to the checked address', () => {
  it('http.request resolves once and connects to that answer, even if DNS would now say otherwise', async () => {
    // The first answer is checked and allowed; a second lookup would get a refused address.
    const calls: string[] = [];
    const rebinding: Resolver = async (hostname) => {
      calls.push(hostname);
      return [{ address: calls.length === 1 ? '127.0.0.1' : '10.9.9.9', family: 4 }];
    };
    const url = `http://pinned.test:${server.port}`;
    const result = await call({ url: `${url}/pin` }, allowing([url]), createHttpRequest({ resolve: rebinding }));
    expect(calls).toEqual(['pinned.test']);
    expect(JSON.parse(result.body)).toMatchObject({ url: '/pin', host: `pinned.test:${server.port}` });
  });
});

// Needs the openssl command (Debian's openssl package; .ci/run installs it when missing).
describe('http.request over HTTPS with a pinned address', () => {
  let tls: { key: string; cert: string };
  let secure: TestServer;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'helix-http-tls-'));
    try {
      const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
      const subject = ['-subj', '/CN=pinned.test', '-addext', 'subjectAltName=DNS:pinned.test'];
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '1',
          ...subject,
        ],
        { stdio: 'ignore' },
      );
      tls = { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    secure = await startServer((req, res) => res.end(`sni=${req.servername ?? ''} host=${req.headers.host ?? ''}`), tls);
  });
  afterAll(() => secure.close());

  it('http.request sends the host name as SNI and verifies the certificate against it', async () => {
    const url = `https://pinned.test:${secure.port}`;
    const cap = createHttpRequest({ resolve: fakeDns({ 'pinned.test': ['127.0.0.1'] }), tls: { ca: tls.cert } });
    const result = await call({ url: `${url}/` }, allowing([url]), cap);
    expect(result.body).toBe(`sni=pinned.test host=pinned.test:${secure.port}`);
  });

  it('http.request refuses a certificate that does not chain to a trusted root', async () => {
    const url = `https://pinned.test:${secure.port}`;
    const cap = createHttpRequest({ resolve: fakeDns({ 'pinned.test': ['127.0.0.1'] }) });
    const err = await refusal({ url: `${url}/` }, allowing([url]), cap);
    expect(err.code).toBe('R-UPSTREAM-HTTP-NETWORK');
  });
});
