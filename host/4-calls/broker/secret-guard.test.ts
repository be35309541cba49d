// The secret guard's forms, search and redaction (ABI-SECRET-002), its check of a stream of
// pieces (ABI-SECRET-004) and the sealing of a run's result (ABI-SECRET-006/007), as properties
// over random secrets, surroundings and cuts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SecretWriteRules } from '../policy/rules.js';
import { sealResult } from './seal-result.js';
import { secretForms, MIN_ENCODED_SECRET_BYTES } from './secret-forms.js';
import { GuardedStream, SecretGuard } from './secret-guard.js';

const REFUSE: SecretWriteRules = { kv: 'refuse', artifacts: 'refuse', log: 'refuse', output: 'refuse' };
const REDACT: SecretWriteRules = { kv: 'redact', artifacts: 'redact', log: 'redact', output: 'redact' };
const guardOf = (secret: string, rules = REFUSE): SecretGuard => {
  const g = new SecretGuard(rules);
  g.add('key', secret);
  return g;
};
// Printable secrets long enough for the encoded forms, with the characters encoders treat specially.
const secrets = fc
  .string({ unit: fc.constantFrom(...'abcXYZ019 "\\/+=%~ä€😀'.split(/(?:)/u)), minLength: 6, maxLength: 40 })
  .filter((s) => Buffer.byteLength(s) >= MIN_ENCODED_SECRET_BYTES);
const bytes = fc.uint8Array({ maxLength: 7 });

describe('secretForms', () => {
  it('ABI-SECRET-002: base64 and base64url of any surroundings, padded or not, hold a form of the secret', () => {
    fc.assert(
      fc.property(secrets, bytes, bytes, (secret, before, after) => {
        const whole = Buffer.concat([before, Buffer.from(secret), after]);
        const guard = guardOf(secret);
        for (const text of [whole.toString('base64'), whole.toString('base64url'), whole.toString('base64').replace(/=+$/, '')]) {
          expect(guard.findInText(`x${text}y`)?.encoding).toMatch(/^base64(url)?@[012]$/);
        }
      }),
    );
  });

  it('ABI-SECRET-002: hex, percent and JSON escapes of the secret are forms of it', () => {
    fc.assert(
      fc.property(secrets, (secret) => {
        const guard = guardOf(secret);
        const b = Buffer.from(secret);
        for (const text of [
          b.toString('hex'),
          b.toString('hex').toUpperCase(),
          encodeURIComponent(secret),
          JSON.stringify(secret),
          new URLSearchParams({ q: secret }).toString(),
        ]) {
          expect(guard.findInText(text), text).toBeDefined();
        }
      }),
    );
  });

  it('ABI-SECRET-002: a secret shorter than 6 bytes is looked for raw only', () => {
    expect(secretForms('abc12').map((f) => f.encoding)).toEqual(['raw']);
    expect(secretForms('')).toEqual([]);
  });
});

describe('SecretGuard', () => {
  it('redacts every form in text, bytes and JSON (object keys too), and finds none afterwards', () => {
    fc.assert(
      fc.property(secrets, fc.string(), (secret, noise) => {
        const guard = guardOf(secret);
        const b = Buffer.from(secret);
        const text = [
          noise,
          secret,
          b.toString('base64'),
          noise,
          b.toString('hex'),
          encodeURIComponent(secret),
          JSON.stringify(secret),
        ].join(' ');
        expect(guard.findInText(guard.redactText(text))).toBeUndefined();
        expect(guard.findInBytes(guard.redactBytes(Buffer.from(text)))).toBeUndefined();
        const json = guard.redactJson({ [text]: [text, { k: text }] });
        expect(guard.findInJson(json)).toBeUndefined();
      }),
    );
  });

  it('names the JSON Pointer of a hit, with the key that carries it redacted and escaped', () => {
    const guard = guardOf('hunter2-secret');
    expect(guard.findInJson({ a: [1, { 'b/c': 'x hunter2-secret' }] }, '/value')).toEqual({
      secret: 'key',
      encoding: 'raw',
      path: '/value/a/1/b~1c',
    });
    expect(guard.findInJson({ 'my hunter2-secret': 1 }, '/v')).toMatchObject({ path: '/v/my [secret:key]' });
    expect(() => guard.admitJson('kv', { a: 'hunter2-secret' }, 'kv.put', '/value')).toThrow(
      expect.objectContaining({ code: 'A-AUTH-SECRET-WRITE', details: expect.objectContaining({ path: '/value/a', where: 'kv.put' }) }),
    );
  });
});

describe('GuardedStream', () => {
  /** The text cut into pieces at `cuts`. */
  const cut = (text: Buffer, cuts: number[]): Buffer[] => {
    const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
    return [0, ...at].map((from, i) => text.subarray(from, [...at, text.length][i]));
  };

  it('ABI-SECRET-004: refuses a piece that completes a form however the stream is cut, and passes on no form', () => {
    fc.assert(
      fc.property(
        secrets,
        fc.constantFrom('raw', 'base64', 'hex'),
        fc.string(),
        fc.string(),
        fc.array(fc.nat(), { maxLength: 6 }),
        (secret, enc, before, after, cuts) => {
          const form = enc === 'raw' ? secret : Buffer.from(secret).toString(enc as BufferEncoding);
          const pieces = cut(Buffer.from(`${before}${form}${after}`), cuts);
          const stream = new GuardedStream(guardOf(secret), 'refuse');
          const passed: Uint8Array[] = [];
          let refused = false;
          for (const [i, p] of pieces.entries()) {
            const r = stream.next(p, i === pieces.length - 1);
            if ('hit' in r) {
              refused = true;
              break;
            }
            passed.push(...r.pieces);
          }
          expect(refused).toBe(true);
          expect(Buffer.concat(passed).includes(Buffer.from(form))).toBe(false);
        },
      ),
    );
  });

  it('ABI-SECRET-004: redacts across pieces: the stream passes on exactly the redacted whole', () => {
    fc.assert(
      fc.property(secrets, fc.string(), fc.string(), fc.array(fc.nat(), { maxLength: 6 }), (secret, before, after, cuts) => {
        const guard = guardOf(secret, REDACT);
        const whole = Buffer.from(`${before}${secret}${after}${secret}`);
        const pieces = cut(whole, cuts);
        const stream = new GuardedStream(guard, 'redact');
        const passed = pieces.flatMap((p, i) => {
          const r = stream.next(p, i === pieces.length - 1);
          return 'pieces' in r ? r.pieces : [];
        });
        expect(Buffer.concat(passed).toString()).toBe(guard.redactText(whole.toString()));
      }),
    );
  });
});

describe('sealResult', () => {
  it('ABI-SECRET-006: refuses an output carrying the secret under refuse, redacts it under redact', () => {
    const result = { status: 'success' as const, output: { token: 'hunter2-secret' }, warnings: [] };
    expect(sealResult(guardOf('hunter2-secret'), result)).toMatchObject({
      status: 'terminal_error',
      error: { code: 'A-AUTH-SECRET-WRITE', details: { path: '/output/token', where: 'output' } },
    });
    expect(sealResult(guardOf('hunter2-secret', REDACT), result)).toEqual({ ...result, output: { token: '[secret:key]' } });
  });

  it('ABI-SECRET-007: withholds a guest error code made of the secret, and keeps a lengthened message within bounds', () => {
    const guard = guardOf('S-TOOL-ZZ9', REDACT);
    const coded = sealResult(guard, {
      status: 'terminal_error',
      error: { code: 'S-TOOL-ZZ9', message: 'see S-TOOL-ZZ9', details: {} },
      warnings: [],
    });
    expect(coded).toMatchObject({
      status: 'terminal_error',
      error: { code: 'A-AUTH-SECRET-WRITE', details: { path: '/error/code', tool_message: 'see [secret:key]' } },
    });
    const short = guardOf('a', REDACT);
    const long = sealResult(short, {
      status: 'terminal_error',
      error: { code: 'S-TOOL-X', message: 'a'.repeat(4000), details: {} },
      warnings: [],
    });
    expect(long.error!.message.length).toBeLessThanOrEqual(4096);
  });
});
