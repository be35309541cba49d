// The JSON bounds (ABI-JSON-001 to -005): the text scan and the value walk, case by case and as
// properties: they agree on every text, never throw, never recurse, and report the first breach.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzRuns, smallDoc, writeDoc } from '../test/helpers/json-arbitraries.js';
import { checkJsonValue, jsonPointer, MAX_JSON_DEPTH, scanJsonText, type JsonBoundsOptions, type JsonViolation } from './json-bounds.js';

const brief = (v: JsonViolation | undefined): { kind: string; pointer: string } | undefined =>
  v === undefined ? undefined : { kind: v.kind, pointer: v.pointer };
/** Both checks on one text: the scan of the text, the walk of what JSON.parse makes of it. */
const both = (text: string, options?: JsonBoundsOptions) => ({
  scan: brief(scanJsonText(text, options)),
  walk: brief(checkJsonValue(JSON.parse(text), options)),
});
const nested = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('the depth bound (ABI-JSON-001)', () => {
  it('accepts 64 levels of arrays and objects and refuses 65, naming the container that goes deeper', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(both(nested(64))).toEqual({ scan: undefined, walk: undefined });
    const over = { kind: 'depth', pointer: `${'/0'.repeat(64)}` };
    expect(both(nested(65))).toEqual({ scan: over, walk: over });
    expect(scanJsonText(nested(65))!.problem).toBe('arrays and objects nested deeper than 64 levels');
  });

  it('bounds each member of an envelope, so the envelope itself may nest one level more', () => {
    const ok = `{"output":${nested(64)}}`;
    expect(both(ok, { envelope: true })).toEqual({ scan: undefined, walk: undefined });
    expect(both(ok)).toEqual({
      scan: { kind: 'depth', pointer: `/output${'/0'.repeat(63)}` },
      walk: { kind: 'depth', pointer: `/output${'/0'.repeat(63)}` },
    });
    expect(brief(scanJsonText(`{"output":${nested(65)}}`, { envelope: true }))).toEqual({
      kind: 'depth',
      pointer: `/output${'/0'.repeat(64)}`,
    });
  });

  it('scans a million levels of text and walks 200,000 levels of objects without recursing', () => {
    expect(brief(scanJsonText(nested(1_000_000)))?.kind).toBe('depth');
    let deep: unknown = 0;
    for (let i = 0; i < 200_000; i += 1) deep = { a: deep };
    expect(brief(checkJsonValue(deep))).toEqual({ kind: 'depth', pointer: '/a'.repeat(64) });
  });

  it('is not fooled by brackets, quotes and backslashes inside strings', () => {
    const text = `{"s":"[[[[\\"{{{\\\\","t":[${nested(3)}],"u\\"[":${nested(62)}}`;
    expect(both(text)).toEqual({ scan: undefined, walk: undefined });
    expect(both(text, { maxDepth: 4 })).toEqual({
      scan: { kind: 'depth', pointer: '/t/0/0/0' },
      walk: { kind: 'depth', pointer: '/t/0/0/0' },
    });
  });
});

describe('numbers (ABI-JSON-003)', () => {
  it('refuses non-finite numbers and integers beyond ±(2^53-1), quoting the literal', () => {
    // Every double of magnitude 2^53 or more is an integer, so 1.5e300 is refused with them.
    for (const literal of [
      '1e400',
      '-1e400',
      '9007199254740992',
      '9007199254740993',
      '-9007199254740992',
      '1e20',
      '1.5e300',
      '18446744073709551615',
      '9007199254740991.9',
    ]) {
      const r = both(`{"n":[0,${literal}]}`);
      expect(r, literal).toEqual({ scan: { kind: 'number', pointer: '/n/1' }, walk: { kind: 'number', pointer: '/n/1' } });
      expect(scanJsonText(`[${literal}]`)!.problem).toContain(literal);
    }
    expect(checkJsonValue([Number.NaN])).toMatchObject({ kind: 'number', pointer: '/0', problem: 'NaN, which is not a JSON number' });
  });

  it('keeps fractions and integers within ±(2^53-1) as IEEE doubles', () => {
    for (const literal of [
      '9007199254740991',
      '-9007199254740991',
      '0.1',
      '1.5e-300',
      '1e-400',
      '-0',
      '4503599627370495.5',
      '1E2',
      '9.007199254740991e15',
    ]) {
      expect(both(`[${literal}]`), literal).toEqual({ scan: undefined, walk: undefined });
    }
  });
});

describe('member names and strings (ABI-JSON-004)', () => {
  it('refuses the member name __proto__, written plainly or escaped', () => {
    for (const text of ['{"a":{"__proto__":1}}', '{"a":{"\\u005f_proto__":1}}']) {
      expect(both(text), text).toEqual({ scan: { kind: 'key', pointer: '/a/__proto__' }, walk: { kind: 'key', pointer: '/a/__proto__' } });
    }
    expect(both('{"constructor":{"prototype":1},"__proto_":0}')).toEqual({ scan: undefined, walk: undefined });
  });

  it('refuses lone surrogates, escaped or raw, in strings and names; a pair is fine', () => {
    expect(both('["\\ud83d\\ude00","😀"]')).toEqual({ scan: undefined, walk: undefined });
    for (const text of ['["ok","\\ud800"]', '["ok","x\\udfff"]'])
      expect(both(text), text).toEqual({ scan: { kind: 'string', pointer: '/1' }, walk: { kind: 'string', pointer: '/1' } });
    expect(brief(scanJsonText('["ok","raw \ud800"]'))).toEqual({ kind: 'string', pointer: '/1' });
    // The report itself stays Unicode text: the lone surrogate is U+FFFD in the pointer.
    expect(both('{"\\udc00":1}')).toEqual({ scan: { kind: 'string', pointer: '/\ufffd' }, walk: { kind: 'string', pointer: '/\ufffd' } });
  });

  it('writes pointers as RFC 6901 says and cuts long ones (ABI-JSON-007)', () => {
    expect(jsonPointer(['a/b', 'm~n', 3, ''])).toBe('/a~1b/m~0n/3/');
    expect(both('{"a/b":{"m~n":[1e400]}}').scan).toEqual({ kind: 'number', pointer: '/a~1b/m~0n/0' });
    const long = scanJsonText(`{"${'k'.repeat(5000)}":1e400}`)!;
    expect(long.pointer).toHaveLength(512);
    expect(long.pointer.endsWith('…')).toBe(true);
  });
});

describe('values that are not JSON data (ABI-JSON-005)', () => {
  it('refuses each kind by name and pointer', () => {
    class Point {
      x = 1;
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.me = [cyclic];
    const shared = { s: 1 };
    const accessor = Object.defineProperty({}, 'g', { get: () => 1, enumerable: true });
    const hidden = Object.defineProperty({}, 'h', { value: 1, enumerable: false });
    const named = Object.assign([1], { extra: true });
    const cases: Array<[unknown, string, RegExp]> = [
      [{ v: 1n }, '/v', /^a BigInt/],
      [{ v: undefined }, '/v', /^undefined/],
      [{ v: Symbol('s') }, '/v', /^a symbol/],
      [{ v: new Map() }, '/v', /^a Map/],
      [{ v: new Point() }, '/v', /^a Point/],
      [{ v: new Uint8Array(2) }, '/v', /^a Uint8Array/],
      [{ v: new Proxy([], {}) }, '/v', /^a Proxy/],
      [{ v: accessor }, '/v/g', /^a getter or setter/],
      [{ v: hidden }, '/v/h', /^a non-enumerable property/],
      // biome-ignore lint/suspicious/noSparseArray: the hole is the value under test
      [{ v: [0, , 2] }, '/v/1', /^a hole in an array/],
      [{ v: named }, '/v', /^an array with named properties/],
      [cyclic, '/me/0', /^a cycle back to the root/],
      [{ a: shared, b: shared }, '/b', /^an object also found at \/a/],
    ];
    for (const [value, pointer, problem] of cases) {
      const v = checkJsonValue(value);
      expect(v, pointer).toMatchObject({ kind: 'value', pointer });
      expect(v!.problem).toMatch(problem);
    }
    expect(checkJsonValue(Object.create(null))).toBeUndefined();
  });

  it('turns an exception thrown while reading into the violation', () => {
    const hostile = Object.defineProperty([0], 'length', { value: 1 });
    expect(checkJsonValue(hostile)).toBeUndefined();
    const throwing = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw new Error('boom');
        },
      },
    );
    expect(checkJsonValue({ t: throwing })).toMatchObject({ kind: 'value', pointer: '/t' });
  });
});

describe('properties', () => {
  it('the scan of a text and the walk of its parse find the same first violation', () => {
    fc.assert(
      fc.property(smallDoc, fc.integer({ min: 1, max: 6 }), fc.boolean(), (d, maxDepth, envelope) => {
        const text = writeDoc(d);
        const r = both(text, { maxDepth, envelope });
        expect(r.scan).toEqual(r.walk);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('the scan never throws on any text, and what passes both checks survives JSON exactly', () => {
    const jsonish = fc.string({
      unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', '1', '9', 'e', '-', '.', 'u', 'd', '8', '0', 'a', ' ', '\ud800'),
      maxLength: 80,
    });
    fc.assert(
      fc.property(jsonish, (text) => void scanJsonText(text, { maxDepth: 3 })),
      { numRuns: fuzzRuns(300) },
    );
    const anything = fc.anything({
      maxDepth: 3,
      withBigInt: true,
      withMap: true,
      withSet: true,
      withDate: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withBoxedValues: true,
    });
    fc.assert(
      fc.property(anything, (value) => {
        if (checkJsonValue(value) !== undefined) return;
        const text = JSON.stringify(value);
        expect(scanJsonText(text)).toBeUndefined();
        expect(JSON.parse(text)).toEqual(unsignedZeros(value));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

/** The value with -0 as 0: the one number JSON cannot carry as it is (JSON.stringify(-0) is "0"). */
function unsignedZeros(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(unsignedZeros);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unsignedZeros(v)]));
  }
  return value;
}
