// The C SDK (sdk-guest/c/helix.h) compiled by clang into real toolpacks and called through the
// real host: the strict JSON parser, the writer, result envelopes, panics, and the capability
// wrappers against the host's real capabilities (LMDB-backed kv and artifacts, log, clock).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importInline } from '../../../host/4-calls/artifacts/prepare-artifact.js';
import { hostStore } from '../../../host/5-host/host.js';
import type { Host } from '../../../host/index.js';
import { artifactBytes, startCHost } from './c-packs.js';

let host: Host;
let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ host, root, cleanup } = await startCHost([
    { id: 'c.probe', program: 'probe.c' },
    {
      id: 'c.copy',
      program: 'copy.c',
      manifest: {
        capabilities: { abiVersion: 2, allow: ['artifact.stat', 'artifact.read', 'artifact.write'] },
        declaredOutputs: [{ role: 'copy', type: 'text', label: 'copied' }],
      },
    },
  ]));
}, 120_000);

afterAll(async () => {
  await cleanup?.();
});

const probe = (input: Record<string, unknown>) => host.call({ tool_id: 'c.probe', input });
const hex = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('hex');
/** What c.probe answers, as these tests read it: each op fills its own fields. */
interface ProbeAnswer {
  ok?: boolean;
  json: string;
  double?: number;
  numbers?: unknown[];
  formatted?: string;
  unix_ms: number;
  unix_s?: number;
  bad_event_code?: string;
  lengths?: number[];
}

async function output(input: Record<string, unknown>): Promise<ProbeAnswer> {
  const r = await probe(input);
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  return r.output as ProbeAnswer;
}

/** The exports of a module built with the C SDK that the host calls. */
interface CExports {
  memory: WebAssembly.Memory;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  execute(ptr: number, len: number): bigint;
}

/** Calls the probe's `execute` straight in the engine, the way the host does, with raw input bytes. */
async function executeRaw(input: Uint8Array): Promise<unknown> {
  const bytes = readFileSync(path.join(root, 'plugins/c-probe/build/c-probe.wasm'));
  const trap = () => {
    throw new Error('capability_call is not offered here');
  };
  const instance = await WebAssembly.instantiate(new WebAssembly.Module(bytes), {
    helix_v1: { capability_call: trap, capability_call_bulk: trap },
  });
  const exports = instance.exports as unknown as CExports;
  const ptr = exports.alloc(input.length);
  new Uint8Array(exports.memory.buffer, ptr, input.length).set(input);
  const packed = BigInt.asUintN(64, exports.execute(ptr, input.length));
  const [outPtr, outLen] = [Number(packed >> 32n), Number(packed & 0xffffffffn)];
  const text = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(exports.memory.buffer, outPtr, outLen));
  exports.dealloc(outPtr, outLen);
  exports.dealloc(ptr, input.length);
  return JSON.parse(text);
}

/**
 * The probe's output straight from `execute`, for numbers beyond ±(2^53-1) (1e21, int64s, any
 * double): the host refuses them in a call's input and output (ABI-JSON-003), so the SDK's
 * parser and writer are checked on them without it.
 */
async function outputRaw(input: Record<string, unknown>): Promise<ProbeAnswer> {
  const envelope = (await executeRaw(Buffer.from(JSON.stringify(input)))) as { status: string; output?: unknown };
  expect(envelope.status).toBe('ok');
  return envelope.output as ProbeAnswer;
}

describe('helix_run (the execute glue), called directly', () => {
  it('answers input that is not a JSON object, or not JSON, with I-REQ-INPUT naming the problem', async () => {
    expect(await executeRaw(Buffer.from('[1,2]'))).toEqual({
      status: 'error',
      error: {
        code: 'I-REQ-INPUT',
        message: 'input must be a JSON object',
        details: {},
        hint: "send the tool's parameters as one JSON object",
      },
    });
    expect(await executeRaw(Buffer.from('{"op":'))).toMatchObject({
      status: 'error',
      error: { code: 'I-REQ-INPUT', message: 'input is not valid JSON: unexpected end of input at offset 6' },
    });
    expect(await executeRaw(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toMatchObject({
      error: { code: 'I-REQ-INPUT', message: 'input is not valid JSON: invalid UTF-8 in a string at offset 2' },
    });
  });

  it('runs the handler on an object, and the envelope is exactly the ok shape', async () => {
    expect(await executeRaw(Buffer.from('{"op":"parse","hex":"5b5d"}'))).toEqual({
      status: 'ok',
      output: { ok: true, kind: 'array', json: '[]' },
    });
  });
});

describe('JSON parser', () => {
  it('reads every kind of value, escapes and UTF-8 as JSON.parse does', async () => {
    const text =
      '{"a":[1,-2.5e3,true,false,null,{}],"s":"q\\"b\\\\s\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00 é😀","e":[],"n":{"x":{"y":"z"}},"":0}';
    const out = await output({ op: 'parse', hex: hex(text) });
    expect(out).toEqual({ ok: true, kind: 'object', json: JSON.stringify(JSON.parse(text)) });
  });

  it('keeps whitespace-only differences out and reads scalars at the top level', async () => {
    for (const text of [' \t\r\n[ 1 , "x" ] \n', '"top"', '0', '-0.5', 'null']) {
      const out = await output({ op: 'parse', hex: hex(text) });
      expect(out.json).toBe(JSON.stringify(JSON.parse(text)));
    }
  });

  it('turns a lone surrogate escape into U+FFFD, since UTF-8 has no form for it', async () => {
    const out = await output({ op: 'parse', hex: hex('["\\ud800x","\\udc00"]') });
    expect(JSON.parse(out.json)).toEqual(['\ufffdx', '\ufffd']);
  });

  const refusals: Array<[string, string | Uint8Array, string, number]> = [
    ['empty input', '', 'unexpected end of input', 0],
    ['an unclosed object', '{"a":1', 'unterminated object', 6],
    ['a trailing comma in an object', '{"a":1,}', 'expected a string key', 7],
    ['a trailing comma in an array', '[1,]', 'unexpected character', 3],
    ['an unquoted key', '{a:1}', 'expected a string key', 1],
    ['a missing colon', '{"a" 1}', "expected ':' after an object key", 5],
    ['a bad separator', '[1;2]', "expected ',' or ']' in an array", 2],
    ['a leading zero', '01', 'leading zeros are not allowed', 1],
    ['a bare minus', '-', 'a number needs digits', 1],
    ['a fraction without digits', '1.', "a fraction needs digits after '.'", 2],
    ['an exponent without digits', '1e+', 'an exponent needs digits', 3],
    ['a leading plus', '+1', 'unexpected character', 0],
    ['NaN', 'NaN', 'unexpected character', 0],
    ['a truncated literal', 'tru', 'unexpected character', 0],
    ['single quotes', "'a'", 'unexpected character', 0],
    ['text after the value', '1 2', 'unexpected text after the JSON value', 2],
    ['a raw tab in a string', '"a\tb"', 'unescaped control character in a string', 2],
    ['an unknown escape', '"\\x"', 'invalid escape in a string', 2],
    ['a short \\u escape', '"\\u12"', '\\u escape needs four hex digits', 5],
    ['an unterminated string', '"abc', 'unterminated string', 4],
    ['an overlong UTF-8 encoding', Uint8Array.from([0x22, 0xc0, 0x80, 0x22]), 'invalid UTF-8 in a string', 1],
    ['a UTF-8 encoded surrogate', Uint8Array.from([0x22, 0xed, 0xa0, 0x80, 0x22]), 'invalid UTF-8 in a string', 1],
    ['a byte that never starts UTF-8', Uint8Array.from([0x22, 0x61, 0xf5, 0x22]), 'invalid UTF-8 in a string', 2],
    ['a cut UTF-8 sequence', Uint8Array.from([0x22, 0xe2, 0x82, 0x22]), 'invalid UTF-8 in a string', 1],
    ['a non-ASCII byte outside strings', Uint8Array.from([0x5b, 0xc3, 0xa9, 0x5d]), 'unexpected character', 1],
  ];
  it.each(refusals)('refuses %s with the reason and the byte offset', async (_name, text, error, offset) => {
    expect(await output({ op: 'parse', hex: hex(text) })).toEqual({ ok: false, error, offset });
  });

  it('accepts nesting up to 128 levels and refuses 129', async () => {
    expect((await output({ op: 'parse', hex: hex('['.repeat(128) + ']'.repeat(128)) })).ok).toBe(true);
    expect(await output({ op: 'parse', hex: hex('['.repeat(129) + ']'.repeat(129)) })).toEqual({
      ok: false,
      error: 'nesting deeper than the limit',
      offset: 128,
    });
  });

  it('reads int64 integers exactly, at both ends of the range', async () => {
    const cases: Array<[string, string]> = [
      ['9223372036854775807', '9223372036854775807'],
      ['-9223372036854775808', '-9223372036854775808'],
      ['9007199254740993', '9007199254740993'],
      ['-0', '0'],
    ];
    for (const [text, exact] of cases) {
      const out = await outputRaw({ op: 'number', text });
      expect(out).toEqual({ is_integer: true, int64: exact, double: JSON.parse(text) === 0 ? 0 : Number(text) });
    }
    // One past the range: no exact int64, the double still correctly rounded.
    expect(await outputRaw({ op: 'number', text: '9223372036854775808' })).toEqual({ is_integer: false, double: 2 ** 63 });
    // A float with an integral value within 2^53 converts; a fraction does not.
    expect(await outputRaw({ op: 'number', text: '1.5e3' })).toEqual({ is_integer: false, int64: '1500', double: 1500 });
    expect(await outputRaw({ op: 'number', text: '2.5' })).toEqual({ is_integer: false, double: 2.5 });
  });

  it('rounds decimals correctly, including halfway cases, subnormals and long digit strings', async () => {
    const texts = [
      '9007199254740993', // halfway between two doubles: ties to even
      '2.2250738585072011e-308', // just below the smallest normal
      '2.2250738585072014e-308',
      '4.9406564584124654e-324',
      '2.4703282292062328e-324', // just above half the smallest subnormal: rounds up
      '1e-400',
      '1.7976931348623157e308',
      '0.1000000000000000055511151231257827021181583404541015625',
      '123456789012345678901234567890e-10',
      '3.14159265358979323846264338327950288419716939937510582097494459',
      '7.2057594037927933e16',
      `1${'0'.repeat(400)}e-400`,
    ];
    let seed = 20240611;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 40; i++) {
      const digits = `${1 + Math.floor(random() * 9)}${Array.from({ length: Math.floor(random() * 25) }, () => Math.floor(random() * 10)).join('')}`;
      // Exponents from far below the subnormals up to just inside the largest finite double.
      texts.push(`${digits}e${Math.floor(random() * (640 - digits.length)) - 330}`);
    }
    for (const text of texts) {
      const out = await outputRaw({ op: 'number', text });
      expect({ text, double: out.double }).toEqual({ text, double: Number(text) });
    }
  });
});

describe('JSON writer', () => {
  it('escapes strings as JSON.stringify does, and replaces invalid UTF-8 with U+FFFD', async () => {
    const controls = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const text = Buffer.concat([controls, Buffer.from('"\\/\x7fé😀 plain')]);
    const r = await probe({ op: 'escape', hex: hex(text) });
    expect(r.output).toEqual({ string: text.toString('utf8') });
    const bad = Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x63, 0xed, 0xa0, 0x80, 0xe2, 0x82]);
    expect(await output({ op: 'escape', hex: hex(bad) })).toEqual({ string: 'a\ufffdb\ufffdc\ufffd\ufffd\ufffd\ufffd\ufffd' });
  });

  it('writes numbers in the shortest form that reads back, as JSON.stringify does', async () => {
    const numbers = [0, 0.1, 0.25, 1e21, 1e-7, 123456.789, -2.5e-300, 5e-324, 1.7976931348623157e308, 2 ** 53 + 2, 100, 1 / 3];
    const view = new DataView(new ArrayBuffer(8));
    let seed = 77n;
    while (numbers.length < 300) {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
      view.setBigUint64(0, seed);
      const x = view.getFloat64(0);
      if (Number.isFinite(x)) numbers.push(x);
    }
    const out = await outputRaw({ op: 'numbers', numbers });
    expect(JSON.stringify(out.numbers)).toBe(JSON.stringify(numbers));
    expect(out.formatted).toBe('0.25|-42|s|ab|7|ff|z|%');
  });

  it('aborts on a value without its key, and the host reports the panic', async () => {
    const r = await probe({ op: 'writer_misuse' });
    expect(r.error?.code).toBe('S-TOOL-TRAP');
    expect(r.error?.details.panic).toBe('helix_writer: a value in an object needs a key first');
  });
});

describe('results and panics', () => {
  it('builds the error envelope with code, message, details and hint, and the class sets the status', async () => {
    const r = await probe({
      op: 'error',
      code: 'R-UPSTREAM-HTTP-DNS',
      message: 'no such host "x"',
      hint: 'check it',
      details: { host: 'x', n: [1] },
    });
    expect(r.status).toBe('retryable_error');
    expect(r.error).toMatchObject({
      code: 'R-UPSTREAM-HTTP-DNS',
      message: 'no such host "x"',
      hint: 'check it',
      details: { host: 'x', n: [1] },
    });
  });

  it('cuts a message longer than 4096 bytes on a character boundary, with an ellipsis', async () => {
    const r = await probe({ op: 'error', code: 'D-DATA-FORMAT', message: 'é'.repeat(3000), hint: 'h' });
    const message = r.error!.message;
    expect(message.endsWith('é…')).toBe(true);
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(4096);
    expect(message.slice(0, -1)).toBe('é'.repeat(message.length - 1));
  });

  it.each(['I-REQ', 'X-FOO-BAR', 'I-REQ-lower', 'I-REQ--DOUBLE', 'I-REQ-TRAILING-', 'S-TOOL-SPACE X'])(
    'refuses the error code %s as a bug in the tool (a reported panic)',
    async (code) => {
      const r = await probe({ op: 'error', code, message: 'm', hint: 'h' });
      expect(r.error?.code).toBe('S-TOOL-TRAP');
      expect(r.error?.details.panic).toBe(`helix_error: '${code}' is not a taxonomy code (CLASS-SUBCODE, e.g. I-REQ-INPUT)`);
    },
  );

  it('refuses an empty message', async () => {
    const r = await probe({ op: 'error', code: 'D-DATA-FORMAT', message: '', hint: 'h' });
    expect(r.error?.details.panic).toBe('helix_error: the message must not be empty');
  });

  it('reports helix_abort, HELIX_ASSERT and running out of memory with their messages', async () => {
    const aborted = await probe({ op: 'abort' });
    expect(aborted.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { panic: 'probe: deliberate abort é' } });
    const asserted = await probe({ op: 'assert', n: 0 });
    expect(asserted.error?.details.panic).toMatch(/^assertion failed: n > 0 at src\/main\.c:\d+$/);
    expect((await probe({ op: 'assert', n: 1 })).output).toBe(true);
    const oom = await probe({ op: 'oom' });
    expect(oom.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { panic: 'out of memory' } });
  });

  it('answers an unknown op with I-REQ-INPUT from the tool itself', async () => {
    const r = await probe({ op: 'nope' });
    expect(r.error).toMatchObject({ code: 'I-REQ-INPUT', message: 'unknown op nope' });
  });

  it('returns a terminal capability call whose result becomes the output', async () => {
    const before = Date.now();
    const out = await output({ op: 'terminal' });
    expect(out.unix_ms).toBeGreaterThanOrEqual(before);
    expect(out.unix_s).toBe(Math.floor(out.unix_ms / 1000));
  });
});

describe('capability wrappers against the real host', () => {
  it('kv: put, get, get of a missing key, list, delete, get after delete', async () => {
    const value = { a: [1, 'x', null], b: { c: 2.5 } };
    const out = await output({ op: 'kv', key: 'k1', value });
    expect(out).toEqual({ got: value, absent_is_null: true, keys: ['k1'], deleted: true, gone_after_delete: true });
  });

  it('log and clock: a line is emitted, a bad event name is refused by the host, the time is now', async () => {
    const before = Date.now();
    const out = await output({ op: 'log_clock' });
    expect(out.bad_event_code).toBe('I-REQ-CAPABILITY-ARGS');
    expect(out.unix_ms).toBeGreaterThanOrEqual(before);
    expect(out.unix_ms).toBeLessThanOrEqual(Date.now());
    expect(out.unix_s).toBe(Math.floor(out.unix_ms / 1000));
  });

  it('a capability off the allowlist is forbidden, and the code passes through to the caller', async () => {
    const r = await probe({ op: 'forbidden' });
    expect(r.error).toMatchObject({ code: 'A-AUTH-FORBIDDEN', message: 'secrets.get api_token: forbidden' });
  });

  it('arguments the tool built wrong become S-TOOL-CAPABILITY-REQUEST, keeping the original code', async () => {
    const r = await probe({ op: 'bad_args' });
    expect(r.error?.code).toBe('S-TOOL-CAPABILITY-REQUEST');
    expect(r.error?.details.capability_code).toBe('I-REQ-CAPABILITY-ARGS');
    expect(r.error?.message).toMatch(/^kv\.put: /);
  });

  it('artifact stat and the line reader: CRLF, empty lines, a last line without LF, characters across pieces', async () => {
    const text = 'first é line\r\n\r\nsecond 😀😀 line\nthird\r\n\nlast without newline';
    const record = await importInline(hostStore(host), text, { label: 'lines.txt' });
    const expected = text.split('\n').map((line) => Buffer.byteLength(line.replace(/\r$/, '')));
    for (const piece of [3, 5, 7, 1 << 20]) {
      const out = await output({ op: 'stat_lines', artifact: record.id, piece });
      expect({ piece, lengths: out.lengths }).toEqual({ piece, lengths: expected });
      expect(out).toMatchObject({ lines: expected.length, size: Buffer.byteLength(text), sha256: record.sha256, is_gzip: false });
    }
    const zipped = await importInline(hostStore(host), gzipSync(text), { label: 'lines.txt.gz' });
    const out = await output({ op: 'stat_lines', artifact: zipped.id, piece: 4 });
    expect(out).toMatchObject({ lengths: expected, is_gzip: true });
  });

  it('the line reader refuses a line over its limit with I-REQ-TOO-LARGE, reported as a tool request fault', async () => {
    const record = await importInline(hostStore(host), `short\n${'x'.repeat(100)}\n`, { label: 'long.txt' });
    const r = await probe({ op: 'stat_lines', artifact: record.id, piece: 16, max_line: 50 });
    expect(r.error?.code).toBe('S-TOOL-CAPABILITY-REQUEST');
    expect(r.error?.details.capability_code).toBe('I-REQ-TOO-LARGE');
    expect(r.error?.message).toMatch(/line 2 of art_\w+ is longer than 50 bytes/);
  });

  it('a missing artifact keeps its precondition code', async () => {
    const r = await probe({ op: 'stat_lines', artifact: 'art_00000000000000000000000000' });
    expect(r.error?.code).toBe('P-PRECOND-ARTIFACT-NOT-FOUND');
  });

  it('artifact read and write round trip: 3 MB of multi-byte text through small and default pieces', async () => {
    const lines: string[] = [];
    for (let i = 0, size = 0; size < 3_000_000; i++) {
      lines.push(`${i}\té😀 ${'ACGT'.repeat(i % 50)}\t"quoted"\\${i % 7 === 0 ? '\r' : ''}`);
      size += lines[i]!.length + 1;
    }
    const text = `${lines.join('\n')}\n`;
    const expected = Buffer.from(text.replace(/\r\n/g, '\n'));
    const record = await importInline(hostStore(host), text, { label: 'big.txt' });
    for (const [piece, flushEvery, bulkWriter] of [
      [1 << 20, 0, false],
      [65_537, 997, false],
      [1 << 20, 0, true],
      [65_537, 997, true],
    ] as const) {
      const r = await host.call({
        tool_id: 'c.copy',
        input: { artifact: record.id, piece, flush_every: flushEvery, bulk_writer: bulkWriter },
      });
      expect(r.error, JSON.stringify(r.error)).toBeUndefined();
      const out = r.output as { copy: string; lines: number; pieces: number; size: number };
      expect(out.lines).toBe(lines.length);
      expect(out.pieces).toBeGreaterThan(5);
      expect(out.size).toBe(expected.length);
      expect((await artifactBytes(host, out.copy)).equals(expected)).toBe(true);
    }
  }, 120_000);

  it('binary artifacts round trip as bytes: every byte value, several pieces, a piece of one byte', async () => {
    const bytes = Buffer.alloc(1_500_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 9)) & 0xff;
    const zipped = gzipSync(bytes);
    const cases: Array<[Buffer, string, number, Buffer]> = [
      [bytes, 'bytes.bin', 1 << 20, bytes],
      // The host stores gzip of binary content as type gzip, not as compressed: copied verbatim.
      [zipped, 'bytes.bin.gz', 1000, zipped],
      [bytes.subarray(0, 2), 'two.bin', 1, bytes.subarray(0, 2)],
    ];
    for (const [stored, label, piece, want] of cases) {
      const record = await importInline(hostStore(host), stored, { label });
      for (const mode of [{ bytes: true }, { bulk: true }]) {
        const r = await host.call({ tool_id: 'c.copy', input: { artifact: record.id, piece, ...mode } });
        expect(r.error, JSON.stringify(r.error)).toBeUndefined();
        const out = r.output as { copy: string; size: number };
        expect(out.size).toBe(want.length);
        expect((await artifactBytes(host, out.copy)).equals(want)).toBe(true);
      }
    }
  }, 120_000);
});
