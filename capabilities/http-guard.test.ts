// Tables for http.request's destination rules: URL, origin patterns, private addresses, headers.
import { describe, expect, it } from 'vitest';
import { HelixError } from '../abi/index.js';
import {
  HEADER_LIMITS,
  checkAddresses,
  checkHeaders,
  checkOrigin,
  compileAllowPrivate,
  parseTarget,
  patternMatches,
} from './http-guard.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof HelixError) return err.code;
    throw err;
  }
}

describe('parseTarget', () => {
  it.each([
    ['https://API.Example.org/x', 'https://api.example.org:443', 0],
    ['http://example.org:8080/a?b#c', 'http://example.org:8080', 0],
    ['http://example.org./', 'http://example.org:80', 0],
    ['http://0x7f.1/', 'http://127.0.0.1:80', 4],
    ['http://2130706433:81/', 'http://127.0.0.1:81', 4],
    ['http://[::1]:81/', 'http://[::1]:81', 6],
    ['https://[::ffff:127.0.0.1]/', 'https://[::ffff:7f00:1]:443', 6],
  ])('parseTarget reads %s as origin %s', (url, origin, ipLiteral) => {
    const target = parseTarget(url);
    expect(target.origin).toBe(origin);
    expect(target.ipLiteral).toBe(ipLiteral);
  });

  it.each([
    'not a url',
    '/relative/path',
    'ftp://example.org/',
    'file:///etc/passwd',
    'gopher://example.org:70/',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'https://user:secret@example.org/',
    'https://user@example.org/',
    'https://:secret@example.org/',
  ])('parseTarget refuses %j with I-REQ-HTTP-URL', (url) => {
    expect(codeOf(() => parseTarget(url))).toBe('I-REQ-HTTP-URL');
  });

  it('parseTarget keeps the password of a refused URL out of the message and details', () => {
    try {
      parseTarget('https://user:hunter2@example.org/x');
      expect.unreachable();
    } catch (err) {
      expect(JSON.stringify([(err as HelixError).message, (err as HelixError).details])).not.toContain('hunter2');
    }
  });
});

describe('patternMatches', () => {
  it.each([
    ['https://api.example.org:443', 'https://api.example.org/', true],
    ['https://api.example.org:443', 'https://API.EXAMPLE.ORG:443/x', true],
    ['HTTPS://API.Example.ORG:443', 'https://api.example.org/', true],
    ['https://api.example.org:443', 'http://api.example.org:443/', false],
    ['https://api.example.org:443', 'https://api.example.org:8443/', false],
    ['https://api.example.org:443', 'https://example.org/', false],
    ['https://api.example.org:443', 'https://xapi.example.org/', false],
    ['https://api.example.org:443', 'https://api.example.org.evil.com/', false],
    ['http://example.org:80', 'http://example.org/', true],
    ['http://example.org:80', 'http://example.org./', true],
    ['https://*.example.org:443', 'https://a.example.org/', true],
    ['https://*.example.org:443', 'https://a.b.example.org/', true],
    ['https://*.example.org:443', 'https://example.org/', false],
    ['https://*.example.org:443', 'https://badexample.org/', false],
    ['https://*.example.org:443', 'https://example.org.evil.com/', false],
    ['https://*.0.0.1:443', 'https://127.0.0.1/', false],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/', true],
    ['http://127.0.0.1:8080', 'http://2130706433:8080/', true],
    ['http://127.0.0.1:8080', 'http://127.0.0.2:8080/', false],
    ['https://*.example.org:443', 'https://[::1]/', false],
    ['example.org', 'https://example.org/', false],
    ['https://example.org', 'https://example.org/', false],
  ])('patternMatches(%s, %s) is %s', (pattern, url, expected) => {
    expect(patternMatches(pattern, parseTarget(url))).toBe(expected);
  });
});

describe('checkOrigin', () => {
  const target = parseTarget('https://api.example.org/v1');
  const origin = 'https://api.example.org:443';

  it('checkOrigin passes an origin both the manifest and the policy allow', () => {
    expect(() => checkOrigin(target, [origin], ['https://*.example.org:443'])).not.toThrow();
  });

  it.each([
    [[], [origin], "the manifest's capabilities.network"],
    [[origin], [], "the policy's network.allow"],
    [[], [], "the manifest's capabilities.network nor the policy's network.allow"],
  ])('checkOrigin refuses when the manifest has %j and the policy %j, naming %s', (manifest, policy, named) => {
    try {
      checkOrigin(target, manifest, policy);
      expect.unreachable();
    } catch (err) {
      const e = err as HelixError;
      expect(e.code).toBe('A-AUTH-HTTP-ORIGIN');
      expect(e.message).toContain(origin);
      expect(e.message).toContain(named);
      expect(e.hint).toContain(`Add ${origin} to`);
    }
  });
});

describe('compileAllowPrivate and checkAddresses', () => {
  it('compileAllowPrivate refuses entries that are not hosts, domains, IPs or ranges', () => {
    expect(codeOf(() => compileAllowPrivate(['10.0.0.0/33']))).toBe('P-PRECOND-POLICY-INVALID');
    expect(codeOf(() => compileAllowPrivate(['http://x']))).toBe('P-PRECOND-POLICY-INVALID');
    expect(codeOf(() => compileAllowPrivate(['999.1.1.1']))).toBe('P-PRECOND-POLICY-INVALID');
    expect(compileAllowPrivate(['db.internal', '*.corp', '10.0.0.0/8', 'fd00::/8', '127.0.0.1']).ranges).toHaveLength(3);
  });

  it.each([
    ['http://api.example.org/', ['93.184.216.34', '2606:2800:220:1::1'], [], undefined],
    ['http://api.example.org/', ['93.184.216.34', '10.0.0.1'], [], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://localhost/', ['127.0.0.1', '::1'], [], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://localhost/', ['127.0.0.1', '::1'], ['127.0.0.1'], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://localhost/', ['127.0.0.1', '::1'], ['127.0.0.0/8', '::1'], undefined],
    ['http://localhost/', ['127.0.0.1', '::1'], ['localhost'], undefined],
    ['http://db.corp/', ['10.1.1.1'], ['*.corp'], undefined],
    ['http://corp/', ['10.1.1.1'], ['*.corp'], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://metadata/', ['169.254.169.254'], ['10.0.0.0/8'], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://mapped/', ['::ffff:127.0.0.1'], [], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://mapped/', ['::ffff:127.0.0.1'], ['127.0.0.1'], undefined],
    ['http://v6/', ['fd00::5'], ['fd00::/8'], undefined],
    ['http://10.0.0.5/', ['10.0.0.5'], ['10.0.0.0/24'], undefined],
    ['http://10.0.0.5/', ['10.0.0.5'], ['10.0.1.0/24'], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
    ['http://weird/', ['not-an-ip'], [], 'A-AUTH-HTTP-PRIVATE-ADDRESS'],
  ])('checkAddresses on %s resolving to %j with allowPrivate %j gives %s', (url, addresses, allowPrivate, code) => {
    expect(codeOf(() => checkAddresses(parseTarget(url), addresses, compileAllowPrivate(allowPrivate)))).toBe(code);
  });

  it('checkAddresses names the host, the address and its range, and hints at allowPrivate', () => {
    try {
      checkAddresses(parseTarget('http://metadata.example/'), ['169.254.169.254'], compileAllowPrivate([]));
      expect.unreachable();
    } catch (err) {
      const e = err as HelixError;
      expect(e.message).toContain('metadata.example resolves to 169.254.169.254, which is link-local (169.254.0.0/16)');
      expect(e.details).toMatchObject({ host: 'metadata.example', address: '169.254.169.254', kind: 'link-local' });
      expect(e.hint).toContain('network.allowPrivate');
    }
  });
});

describe('checkHeaders', () => {
  it('checkHeaders returns the headers with lowercase names', () => {
    expect(checkHeaders({ Accept: 'application/json', 'X-Trace': 'a\tb', Authorization: 'Bearer x' })).toEqual({
      accept: 'application/json',
      'x-trace': 'a\tb',
      authorization: 'Bearer x',
    });
  });

  it.each([
    ['a Host header', { Host: 'evil.example' }],
    ['a Content-Length header', { 'Content-Length': '0' }],
    ['a Transfer-Encoding header', { 'transfer-encoding': 'chunked' }],
    ['a Connection header', { Connection: 'close' }],
    ['an Upgrade header', { Upgrade: 'websocket' }],
    ['a TE header', { TE: 'trailers' }],
    ['an Expect header', { Expect: '100-continue' }],
    ['CRLF in a value', { 'X-A': 'b\r\nX-Injected: 1' }],
    ['LF in a value', { 'X-A': 'b\nX-Injected: 1' }],
    ['CR in a value', { 'X-A': 'b\rc' }],
    ['NUL in a value', { 'X-A': 'b\u0000c' }],
    ['a non-Latin-1 value', { 'X-A': 'euro \u20ac' }],
    ['CRLF in a name', { 'X-A\r\nX-Injected': '1' }],
    ['a space in a name', { 'bad name': '1' }],
    ['a pseudo-header', { ':authority': 'evil' }],
    ['an empty name', { '': '1' }],
    ['a name given twice in different case', { Accept: 'a', accept: 'b' }],
    ['an overlong value', { 'X-Long': 'v'.repeat(HEADER_LIMITS.valueChars + 1) }],
    ['too many headers', Object.fromEntries(Array.from({ length: HEADER_LIMITS.count + 1 }, (_, i) => [`x-h${i}`, '1']))],
    [
      'too many characters in all',
      Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`x-h${i}`, 'v'.repeat(HEADER_LIMITS.valueChars)])),
    ],
  ])('checkHeaders refuses %s with I-REQ-HTTP-HEADER', (_label, headers) => {
    expect(codeOf(() => checkHeaders(headers))).toBe('I-REQ-HTTP-HEADER');
  });
});
