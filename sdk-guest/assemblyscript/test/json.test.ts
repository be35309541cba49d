// The SDK's JSON parser and writer, compiled to wasm and driven through a probe tool.

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { callOnce, callTool, compileProgram, instantiate, okOutput } from './harness.js';

let probe: WebAssembly.Module;

beforeAll(async () => {
  probe = await compileProgram('test/assembly/probe.ts');
}, 120_000);

/** Sends `{"mode":"echo","value":<valueJson>}` verbatim and returns the output envelope text. */
async function echoText(valueJson: string): Promise<string> {
  const outcome = await callOnce(probe, `{"mode":"echo","value":${valueJson}}`);
  if (outcome.kind !== 'output') throw new Error(`trap: ${outcome.panic}`);
  return outcome.text;
}

/** What the probe's parse mode answers: the value parsed, or the error and where it was found. */
type ParseResult = { ok: true; value: unknown } | { ok: false; error: string; position: number };

async function parseResult(text: string, maxDepth = 128): Promise<ParseResult> {
  return okOutput<ParseResult>(await callOnce(probe, { mode: 'parse', text, max_depth: maxDepth }));
}

describe('the JSON round trip', () => {
  it('reproduces strings, integers, literals and nesting byte for byte as JSON.stringify writes them', async () => {
    const value = {
      escapes: '"\\/\b\f\n\r\t\u0000\u001f\u007f',
      unicode: 'é 中文 😀 \u2028',
      lone: '\ud800 and \udfff',
      ints: [0, -1, 42, 9007199254740991, -9007199254740991],
      literals: [true, false, null],
      nested: { a: [[[]], {}], b: { c: { d: 'e' } } },
      '': 'empty key',
    };
    const text = await echoText(JSON.stringify(value));
    expect(text).toBe(JSON.stringify({ status: 'ok', output: value }));
  });

  it('decodes every escape form, including \\u surrogate pairs written as two escapes', async () => {
    const text = await echoText('"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00E9\\uD83D\\uDE00\\ud800x"');
    expect(JSON.parse(text).output).toBe('"\\/\b\f\n\r\tAé😀\ud800x');
  });

  it('keeps the first position and the last value of a duplicated key, as JSON.parse does', async () => {
    const text = await echoText('{"a":1,"b":2,"a":3}');
    expect(text).toBe('{"status":"ok","output":{"a":3,"b":2}}');
  });

  it('converts number literals to the same doubles JavaScript does', async () => {
    const literals = [
      '0',
      '-0',
      '1E+2',
      '-0.0e-0',
      '0.1',
      '1e21',
      '1.5e-7',
      '5e-324',
      '2.2250738585072014e-308',
      '1.7976931348623157e308',
      '9007199254740993',
      '123456789012345678901234567890',
      '0.30000000000000004',
      '1e-400',
      '4.9406564584124654e-324',
      '2.225073858507201e-308',
      '1.00000000000000011102230246251565404236316680908203125',
    ];
    const text = await echoText(`[${literals.join(',')}]`);
    // Through JSON.stringify, as the writer does: -0 prints as 0.
    const expected = literals.map((literal) => JSON.parse(JSON.stringify(JSON.parse(literal))));
    expect(JSON.parse(text).output).toEqual(expected);
  });

  it('round-trips arbitrary doubles exactly (property)', async () => {
    const tool = await instantiate(probe);
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 20 }), (values) => {
        const input = JSON.stringify(values);
        const output = okOutput(callTool(tool, `{"mode":"echo","value":${input}}`));
        expect(output).toEqual(JSON.parse(input));
      }),
      { numRuns: Number(process.env.HELIX_PROPERTY_RUNS ?? 300) },
    );
  });

  it('rounds long decimal mantissas with large exponents exactly as JavaScript does (property)', async () => {
    const tool = await instantiate(probe);
    const literal = fc
      .tuple(fc.stringMatching(/^-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?$/), fc.integer({ min: -360, max: 320 }))
      .map(([mantissa, exponent]) => `${mantissa}e${exponent}`)
      .filter((text) => Number.isFinite(Number(text)));
    fc.assert(
      fc.property(fc.array(literal, { minLength: 1, maxLength: 10 }), (literals) => {
        const output = okOutput(callTool(tool, `{"mode":"echo","value":[${literals.join(',')}]}`));
        expect(output).toEqual(literals.map((text) => JSON.parse(JSON.stringify(Number(text)))));
      }),
      { numRuns: Number(process.env.HELIX_PROPERTY_RUNS ?? 300) },
    );
  });

  it('round-trips arbitrary JSON documents (property)', async () => {
    const tool = await instantiate(probe);
    fc.assert(
      // 'binary' strings cover every code point, lone surrogates included.
      fc.property(fc.json({ maxDepth: 6, stringUnit: 'binary' }), (json) => {
        const output = okOutput(callTool(tool, `{"mode":"echo","value":${json}}`));
        expect(JSON.stringify(output)).toBe(JSON.stringify(JSON.parse(json)));
      }),
      { numRuns: Number(process.env.HELIX_PROPERTY_RUNS ?? 300) },
    );
  });

  it('stringify then parse inside the guest gives back the same document', async () => {
    const value = { a: [1, 2.5, -3e-9, 'x\n'], b: { c: null, d: true }, e: '😀' };
    const output = okOutput(await callOnce(probe, { mode: 'reparse', value }));
    expect(output).toEqual(value);
  });
});

describe('JSONParser', () => {
  it('accepts surrounding whitespace of all four kinds', async () => {
    expect(await parseResult(' \t\n\r{"a" : [ 1 , 2 ] }\r\n')).toEqual({ ok: true, value: { a: [1, 2] } });
  });

  it.each([
    ['', 'unexpected end of input', 0],
    ['{"a":1,}', 'expected a string key', 7],
    ['[1,]', "unexpected character ']'", 3],
    ['[1 2]', "expected ',' or ']' in an array", 3],
    ['{"a" 1}', "expected ':' after an object key", 5],
    ['{a:1}', 'expected a string key', 1],
    ['01', 'leading zeros are not allowed', 1],
    ['1.', "a fraction needs digits after '.'", 2],
    ['.5', "unexpected character '.'", 0],
    ['+1', "unexpected character '+'", 0],
    ['-', 'a number needs digits', 1],
    ['1e', 'an exponent needs digits', 2],
    ['1e+', 'an exponent needs digits', 3],
    ['"\\x"', "invalid escape 'x'", 2],
    ['"\\u12"', '\\u escape needs four hex digits', 5],
    ['"\\u12G4"', '\\u escape needs four hex digits', 5],
    ['"abc', 'unterminated string', 4],
    ['"a\u0001b"', 'unescaped control character in a string', 2],
    ['tru', "unexpected character 't'", 0],
    ['nul', "unexpected character 'n'", 0],
    ['NaN', "unexpected character 'N'", 0],
    ['1 2', 'unexpected text after the JSON value', 2],
    ["'a'", "unexpected character '''", 0],
    ['\u00e9', 'unexpected character U+00E9', 0],
    ['\u{1F600}', 'unexpected character U+1F600', 0],
    ['"\u00e9\\x"', "invalid escape 'x'", 4],
    ['["\u00e9",x]', "unexpected character 'x'", 6],
    ['[', 'unexpected end of input', 1],
    ['{"a":1', 'unterminated object', 6],
  ])('rejects %j with "%s" at byte offset %i', async (text, error, position) => {
    expect(await parseResult(text)).toEqual({ ok: false, error, position });
  });

  it('accepts nesting up to the depth limit and refuses one level more', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    expect((await parseResult(nested(128))).ok).toBe(true);
    expect(await parseResult(nested(129))).toEqual({ ok: false, error: 'nesting deeper than 128', position: 128 });
    expect((await parseResult(nested(400), 400)).ok).toBe(true);
  });
});

describe('JSONObject accessors', () => {
  it('return typed values, fallbacks for absent or mistyped keys, and keys in insertion order', async () => {
    const value = { s: 'text', n: 2.5, i: 42, f: 1.5, big: 2 ** 60, b: true, o: {}, a: [10, 20, 30], z: null };
    const output = okOutput(await callOnce(probe, { mode: 'accessors', value }));
    expect(output).toEqual({
      s: { v: 'text' },
      n: 2.5,
      i: 42,
      i_frac: -1,
      i_big: -1,
      b: true,
      missing_bool: true,
      has_o: true,
      s_is_not_object: true,
      a_len: 3,
      a_second: 20,
      a_out_of_range_is_null: true,
      null_is_value: true,
      keys: ['s', 'n', 'i', 'f', 'big', 'b', 'o', 'a', 'z'],
    });
  });
});

describe('JSONWriter', () => {
  it('writes compact JSON with correct commas, escapes and number forms', async () => {
    const outcome = await callOnce(probe, { mode: 'writer' });
    const output = okOutput<{ written: unknown; buffer_length: number }>(outcome);
    expect(output.written).toEqual({
      empty_object: {},
      empty_array: [],
      nested: [1, { k: null }, []],
      numbers: [0.1, 0, 1e21, 1.5e-7, -1234.5, -9007199254740991],
      text: 'tab\t quote" slash\\ nul\u0000 bell\u0007 eé 😀 lone\ud800',
      raw: { pre: true },
      bools: [true, false],
    });
    expect(output.buffer_length).toBe(1000);
    if (outcome.kind !== 'output') throw new Error('unreachable');
    expect(outcome.text).toContain('"text":"tab\\t quote\\" slash\\\\ nul\\u0000 bell\\u0007 eé 😀 lone\\ud800"');
    expect(outcome.text).toContain('"numbers":[0.1,0,1e+21,1.5e-7,-1234.5,-9007199254740991]');
  });

  it('refuses NaN by aborting with a message the host can report', async () => {
    const outcome = await callOnce(probe, { mode: 'nan' });
    expect(outcome.kind).toBe('trap');
    if (outcome.kind === 'trap') expect(outcome.panic).toMatch(/^JSONWriter: NaN and Infinity have no JSON form/);
  });
});
