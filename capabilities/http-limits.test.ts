// http.request's bounds against real local servers: redirects re-checked hop by hop and capped,
// response bodies capped in bytes, and every wait capped by the call's deadline.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HelixError } from '../abi/index.js';
import { createHttpRequest } from './http.js';
import {
  allowing,
  callHttp,
  httpRefusal,
  startServer,
  testContext,
  type RecordedRequest,
  type TestServer,
} from '../test/helpers/http-test-kit.js';

const call = callHttp;
const refusal = httpRefusal;

/** Writes `piece` every `everyMs` until the client goes away: a body that never ends on its own. */
function dribble(res: ServerResponse, piece: Buffer, everyMs: number): void {
  const timer = setInterval(() => res.write(piece), everyMs);
  res.on('close', () => clearInterval(timer));
}

let main: TestServer;
let other: TestServer;

beforeAll(async () => {
  other = await startServer((req, res) =>
    res.end(JSON.stringify({ method: req.method, headers: req.headers, body: req.body.toString('utf8') })),
  );
  main = await startServer((req: RecordedRequest, res) => {
    const [path = '', query = ''] = req.url.split('?');
    const to = new URLSearchParams(query).get('to') ?? '';
    if (path === '/redirect') res.writeHead(Number(new URLSearchParams(query).get('status') ?? 302), { Location: to }).end();
    else if (path === '/loop') res.writeHead(302, { Location: '/loop' }).end();
    else if (path === '/final') res.end(`final ${req.method} ${req.body.toString('utf8')}`);
    else if (path === '/sized') res.writeHead(200, { 'Content-Length': 2000 }).end(Buffer.alloc(2000, 0x61));
    else if (path === '/endless') dribble(res.writeHead(200, { 'Content-Type': 'text/plain' }), Buffer.alloc(16_384, 0x62), 1);
    else if (path === '/slow-body') dribble(res.writeHead(200, { 'Content-Type': 'text/plain' }), Buffer.from('x'), 50);
    else if (path === '/slow-headers') setTimeout(() => res.end('late'), 30_000).unref();
    else res.writeHead(404).end('not found');
  });
});
afterAll(async () => {
  await main.close();
  await other.close();
});

describe('http.request redirects', () => {
  it('http.request follows an allowed redirect and reports the final URL', async () => {
    const result = await call({ url: `${main.origin}/redirect?to=/final` }, allowing([main.origin]));
    expect(result.status).toBe(200);
    expect(result.body).toBe('final GET ');
    expect(result.url).toBe(`${main.origin}/final`);
  });

  it('http.request turns a POST into a GET on 303 and keeps it on 307', async () => {
    const see = await call(
      { method: 'POST', url: `${main.origin}/redirect?status=303&to=/final`, body: 'payload' },
      allowing([main.origin]),
    );
    expect(see.body).toBe('final GET ');
    const keep = await call(
      { method: 'POST', url: `${main.origin}/redirect?status=307&to=/final`, body: 'payload' },
      allowing([main.origin]),
    );
    expect(keep.body).toBe('final POST payload');
  });

  it('http.request drops Authorization and Cookie when a redirect leaves the origin', async () => {
    const to = encodeURIComponent(`${other.origin}/echo`);
    const result = await call(
      { url: `${main.origin}/redirect?to=${to}`, headers: { Authorization: 'Bearer secret', Cookie: 'a=b', 'X-Keep': 'yes' } },
      allowing([main.origin, other.origin]),
    );
    const echo = JSON.parse(result.body) as { headers: Record<string, string> };
    expect(echo.headers['x-keep']).toBe('yes');
    expect(echo.headers.authorization).toBeUndefined();
    expect(echo.headers.cookie).toBeUndefined();
  });

  it('http.request refuses a redirect to an origin outside the manifest, naming the hop', async () => {
    const before = other.hits.length;
    const err = await refusal({ url: `${main.origin}/redirect?to=${encodeURIComponent(`${other.origin}/x`)}` }, allowing([main.origin]));
    expect(err.code).toBe('A-AUTH-HTTP-REDIRECT');
    expect(err.details).toMatchObject({
      hop: 1,
      from: `${main.origin}/redirect?to=${encodeURIComponent(`${other.origin}/x`)}`,
      to: `${other.origin}/x`,
      refused: 'A-AUTH-HTTP-ORIGIN',
    });
    expect(err.message).toContain(`refused redirect 1 from ${main.origin}`);
    expect(err.hint).toContain(other.origin);
    expect(other.hits.length).toBe(before);
  });

  it.each([
    ['a private address', 'http://169.254.169.254:80/latest/meta-data/', 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['a URL with userinfo', 'http://user:pw@169.254.169.254:80/', 'I-REQ-HTTP-URL'],
    ['another scheme', 'file:///etc/passwd', 'I-REQ-HTTP-URL'],
  ])('http.request refuses a redirect to %s even when both lists allow its origin', async (_label, to, refused) => {
    const ctx = allowing([main.origin, 'http://169.254.169.254:80']);
    const err = await refusal({ url: `${main.origin}/redirect?to=${encodeURIComponent(to)}` }, ctx);
    expect(err.code).toBe('A-AUTH-HTTP-REDIRECT');
    expect(err.details).toMatchObject({ hop: 1, refused });
    expect(JSON.stringify(err.toWire())).not.toContain('user:pw');
  });

  it('http.request stops a redirect loop after the policy maxRedirects', async () => {
    const before = main.hits.length;
    const err = await refusal({ url: `${main.origin}/loop` }, allowing([main.origin], { maxRedirects: 3 }));
    expect(err.code).toBe('R-UPSTREAM-HTTP-REDIRECT-LIMIT');
    expect(err.details).toMatchObject({ redirects: 3, max_redirects: 3 });
    expect(main.hits.length - before).toBe(4);
  });
});

describe('http.request response size', () => {
  it('http.request refuses a body whose Content-Length is over max_response_bytes', async () => {
    const err = await refusal({ url: `${main.origin}/sized`, max_response_bytes: 1000 }, allowing([main.origin]));
    expect(err.code).toBe('R-CAP-HTTP-RESPONSE-TOO-LARGE');
    expect(err.details).toMatchObject({ limit_bytes: 1000, content_length: 2000 });
  });

  it('http.request caps max_response_bytes by the policy maxResponseBytes', async () => {
    const err = await refusal(
      { url: `${main.origin}/sized`, max_response_bytes: 10_000_000 },
      allowing([main.origin], { maxResponseBytes: 1500 }),
    );
    expect(err.details).toMatchObject({ limit_bytes: 1500 });
    expect((await call({ url: `${main.origin}/sized`, max_response_bytes: 2000 }, allowing([main.origin]))).body).toHaveLength(2000);
  });

  it('http.request stops reading a chunked body without Content-Length as soon as it passes the limit', async () => {
    const err = await refusal({ url: `${main.origin}/endless`, max_response_bytes: 100_000 }, allowing([main.origin]));
    expect(err.code).toBe('R-CAP-HTTP-RESPONSE-TOO-LARGE');
    const read = (err.details as { read_bytes: number }).read_bytes;
    expect(read).toBeGreaterThan(100_000);
    expect(read).toBeLessThan(100_000 + 128 * 1024);
  });

  it('http.request does not apply the limit to the Content-Length of a HEAD response', async () => {
    const result = await call({ method: 'HEAD', url: `${main.origin}/sized`, max_response_bytes: 10 }, allowing([main.origin]));
    expect(result.status).toBe(200);
    expect(result.body).toBe('');
  });
});

describe('http.request deadline', () => {
  it('http.request fails a body that dribbles past the deadline with R-TIMEOUT-001, on time', async () => {
    const started = Date.now();
    const err = await refusal({ url: `${main.origin}/slow-body` }, allowing([main.origin], { timeoutMs: 400 }));
    expect(err.code).toBe('R-TIMEOUT-001');
    expect(err.details).toMatchObject({ phase: 'reading the response body' });
    expect(Date.now() - started).toBeLessThan(400 + 2000);
  });

  it('http.request fails a server that never answers with R-TIMEOUT-001', async () => {
    const started = Date.now();
    const err = await refusal({ url: `${main.origin}/slow-headers` }, allowing([main.origin], { timeoutMs: 300 }));
    expect(err.code).toBe('R-TIMEOUT-001');
    expect(err.details).toMatchObject({ phase: 'waiting for the response headers' });
    expect(Date.now() - started).toBeLessThan(300 + 2000);
  });

  it('http.request fails a DNS lookup that outlasts the deadline with R-TIMEOUT-001', async () => {
    const hanging = createHttpRequest({ resolve: () => new Promise(() => undefined) });
    const url = 'https://slow-dns.test:443';
    const err = await refusal({ url: `${url}/` }, testContext({ manifest: [url], allow: [url], timeoutMs: 200 }), hanging);
    expect(err.code).toBe('R-TIMEOUT-001');
    expect(err.details).toMatchObject({ phase: 'resolving slow-dns.test' });
  });

  it('http.request fails at once when the deadline has already passed', async () => {
    const err = await refusal({ url: `${main.origin}/final` }, allowing([main.origin], { timeoutMs: -1 }));
    expect(err.code).toBe('R-TIMEOUT-001');
  });

  it('http.request stops when the call is cancelled, passing on the broker reason when it is a HelixError', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new HelixError('R-CAP-CALL-LIMIT')), 100);
    const err = await refusal(
      { url: `${main.origin}/slow-body` },
      testContext({ manifest: [main.origin], allow: [main.origin], allowPrivate: ['127.0.0.1'], signal: controller.signal }),
    );
    expect(err.code).toBe('R-CAP-CALL-LIMIT');
    const plain = new AbortController();
    setTimeout(() => plain.abort(), 100);
    const cancelled = await refusal({ url: `${main.origin}/slow-headers` }, allowing([main.origin], { signal: plain.signal }));
    expect(cancelled.code).toBe('R-TIMEOUT-001');
    expect(cancelled.details).toMatchObject({ cancelled: true });
  });
});
