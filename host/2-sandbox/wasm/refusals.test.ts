// Tests that decodeModule and instrumentModule refuse malformed and unsupported modules with a
// WasmDecodeError whose offset and reason point at the problem.

import { describe, expect, it } from 'vitest';
import { decodeModule, instrumentModule, WasmDecodeError } from './index.js';
import { binary, body, leb, section, wat } from '../../../test/helpers/wasm.js';

const header = 8;
const voidType = section(1, [1, 0x60, 0, 0]);
const oneFunc = section(3, [1, 0]);
/** A module whose only function's code is `code`; the code starts 5 bytes before its end. */
const withCode = (...code: number[]) => binary(voidType, oneFunc, section(10, [1, ...body(...code)]));
/** Offset of the first code byte in `withCode` (header, type 6 bytes, function 4, code id/size/count/body size/locals). */
const codeStart = header + 6 + 4 + 5;

interface Refusal {
  name: string;
  bytes: Uint8Array;
  reason: string;
  offset: number;
}

const refusals: Refusal[] = [
  { name: 'bad magic', bytes: Uint8Array.of(0x00, 0x61, 0x73, 0x6e, 1, 0, 0, 0), reason: 'magic header not detected', offset: 0 },
  { name: 'bad version', bytes: Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 2, 0, 0, 0), reason: 'unknown binary version', offset: 4 },
  { name: 'empty input', bytes: new Uint8Array(0), reason: 'magic header not detected', offset: 0 },
  { name: 'truncated LEB', bytes: binary(section(1, [0x80])), reason: 'unexpected end', offset: header + 2 },
  {
    name: 'overlong LEB',
    bytes: binary(section(1, [0x80, 0x80, 0x80, 0x80, 0x80, 0x00])),
    reason: 'integer representation too long',
    offset: header + 2,
  },
  {
    name: 'LEB with bits past 32',
    bytes: binary(section(1, [0xff, 0xff, 0xff, 0xff, 0x1f])),
    reason: 'integer too large',
    offset: header + 2,
  },
  { name: 'section past the end', bytes: binary([1, 9, 0]), reason: 'runs past the end of the module', offset: header },
  { name: 'unknown section id', bytes: binary(section(14, [])), reason: 'unknown section id 14', offset: header },
  {
    name: 'section out of order',
    bytes: binary(section(5, [1, 0, 1]), section(4, [1, 0x70, 0, 1])),
    reason: 'table section out of order',
    offset: header + 5,
  },
  { name: 'duplicate section', bytes: binary(voidType, voidType), reason: 'duplicate type section', offset: header + 6 },
  {
    name: 'section size mismatch',
    bytes: binary(section(1, [1, 0x60, 0, 0, 0])),
    reason: 'type section size mismatch',
    offset: header + 6,
  },
  { name: 'unknown opcode', bytes: withCode(0x27, 0x0b), reason: 'unknown opcode 0x27', offset: codeStart },
  { name: 'GC opcode', bytes: withCode(0xfb, 0x01, 0x0b), reason: 'unsupported opcode 0xfb 0x01 (GC proposal)', offset: codeStart },
  {
    name: 'stringref opcode',
    bytes: withCode(0xfb, 0x80, 0x01, 0x0b),
    reason: 'unsupported opcode 0xfb 0x80 (stringref proposal)',
    offset: codeStart,
  },
  { name: 'ref.eq', bytes: withCode(0xd3, 0x0b), reason: 'GC proposal', offset: codeStart },
  { name: 'unassigned SIMD opcode', bytes: withCode(0xfd, 0x9a, 0x01, 0x0b), reason: 'unknown opcode 0xfd 0x9a', offset: codeStart },
  { name: 'unknown atomic opcode', bytes: withCode(0xfe, 0x04, 0x0b), reason: 'unknown opcode 0xfe 0x04', offset: codeStart },
  { name: 'unknown misc opcode', bytes: withCode(0xfc, 0x12, 0x0b), reason: 'unknown opcode 0xfc 0x12', offset: codeStart },
  { name: 'GC rec type', bytes: binary(section(1, [1, 0x4e, 0])), reason: 'rec, GC proposal', offset: header + 3 },
  { name: 'GC sub type', bytes: binary(section(1, [1, 0x50, 0])), reason: 'GC proposal', offset: header + 3 },
  { name: 'GC value type', bytes: binary(section(1, [1, 0x60, 1, 0x6e, 0])), reason: 'value type 0x6e (GC proposal)', offset: header + 5 },
  { name: 'stringref value type', bytes: binary(section(1, [1, 0x60, 1, 0x67, 0])), reason: 'stringref proposal', offset: header + 5 },
  { name: 'body without end', bytes: withCode(0x01), reason: 'unexpected end', offset: codeStart + 1 },
  { name: 'code after the final end', bytes: withCode(0x0b, 0x01), reason: 'operators remaining', offset: codeStart + 1 },
  { name: 'else outside if', bytes: withCode(0x05, 0x0b), reason: 'else without a matching if', offset: codeStart },
  { name: 'branch to a missing label', bytes: withCode(0x0c, 0x01, 0x0b), reason: 'unknown label 1', offset: codeStart + 1 },
  {
    name: 'function and code count mismatch',
    bytes: binary(voidType, section(3, [2, 0, 0]), section(10, [1, ...body(0x0b)])),
    reason: 'function and code section have inconsistent lengths',
    offset: header + 6 + 5 + 2,
  },
  { name: 'missing code section', bytes: binary(voidType, oneFunc), reason: 'inconsistent lengths', offset: header + 10 },
  {
    name: 'data count mismatch',
    bytes: binary(section(5, [1, 0, 1]), section(12, [2]), section(11, [1, 1, 0])),
    reason: 'data count mismatch',
    offset: header + 5 + 3 + 2,
  },
  {
    name: 'memory.init without a data count section',
    bytes: binary(voidType, oneFunc, section(5, [1, 0, 1]), section(10, [1, ...body(0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 8, 0, 0, 0x0b)])),
    reason: 'data count section required',
    offset: header + 6 + 4 + 5 + 5 + 8,
  },
  { name: 'custom page sizes', bytes: binary(section(5, [1, 0x08, 1, 1])), reason: 'custom-page-sizes proposal', offset: header + 3 },
  {
    name: 'shared memory without maximum',
    bytes: binary(section(5, [1, 0x02, 1])),
    reason: 'shared memory must have a maximum',
    offset: header + 3,
  },
  // ABI-ALLOC-006: a count past the engine's limit is refused before any entry is read.
  ...(
    [
      [1, 'types', 1_000_000],
      [2, 'imports', 100_000],
      [3, 'functions', 1_000_000],
      [4, 'tables', 100_000],
      [5, 'memories', 100_000],
      [6, 'globals', 1_000_000],
      [7, 'exports', 100_000],
    ] as const
  ).map(([id, kind, limit]) => ({
    name: `more ${kind} than the engine allows (ABI-ALLOC-006)`,
    bytes: binary(section(id, leb(limit + 1))),
    reason: `${limit + 1} ${kind}, more than the engine's limit of ${limit}`,
    offset: header + 2,
  })),
];

describe('decodeModule refusals', () => {
  for (const r of refusals) {
    it(`decodeModule refuses ${r.name} with its reason and offset`, () => {
      let error: unknown;
      try {
        decodeModule(r.bytes);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(WasmDecodeError);
      const e = error as WasmDecodeError;
      expect(e.name).toBe('WasmDecodeError');
      expect(e.reason).toContain(r.reason);
      expect(e.offset).toBe(r.offset);
      expect(e.message).toBe(`offset 0x${r.offset.toString(16)}: ${e.reason}`);
    });
  }

  it('decodeModule accepts padded but in-range LEBs, which toolchains emit', () => {
    expect(() => decodeModule(binary(section(1, [0x81, 0x80, 0x80, 0x80, 0x00, 0x60, 0, 0])))).not.toThrow();
  });

  it("instrumentModule refuses a module whose added exports would pass the engine's export limit, before building them (ABI-ALLOC-006)", () => {
    const globals = 100_000;
    const entries = Array.from({ length: globals }, () => [0x7f, 1, 0x41, 0, 0x0b]).flat();
    const bytes = binary(section(6, [...leb(globals), ...entries]));
    expect(() => decodeModule(bytes)).not.toThrow();
    expect(() => instrumentModule(bytes, { maxMemoryPages: 1 })).toThrowError(
      "100000 mutable globals: with the module's 0 exports the instrumented module would have 100001, more than the engine's limit of 100000 exports",
    );
  });

  it('instrumentModule refuses a module that already exports a reserved __helix_ name', async () => {
    const bytes = await wat('(module (global (export "__helix_fuel") (mut i64) (i64.const 0)))');
    const nameOffset = Buffer.from(bytes).indexOf('__helix_fuel') - 1; // the name's length byte
    expect(() => instrumentModule(bytes, { maxMemoryPages: 1 })).toThrowError(WasmDecodeError);
    try {
      instrumentModule(bytes, { maxMemoryPages: 1 });
    } catch (e) {
      expect((e as WasmDecodeError).reason).toContain('reserved export name "__helix_fuel"');
      expect((e as WasmDecodeError).offset).toBe(nameOffset);
    }
  });
});
