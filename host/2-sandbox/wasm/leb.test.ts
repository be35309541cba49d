// Tests of the LEB128 reader and writer: round trips at the edges of each width, and the
// spec's limits on length and unused bits.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WasmDecodeError } from './errors.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';

const read = (bytes: number[], f: (r: Reader) => number) => f(new Reader(Uint8Array.from(bytes), 0, bytes.length));

describe('LEB128 reader and writer', () => {
  it('Writer.u32 and Reader.u32 round-trip every unsigned 32-bit value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        const bytes = new Writer().u32(n).finish();
        expect(read([...bytes], (r) => r.u32())).toBe(n);
      }),
    );
  });

  it('Writer.s64 and Reader.s64 round-trip signed 64-bit values exactly up to 2^53', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
        const bytes = [...new Writer().s64(n).finish()];
        expect(bytes.length).toBeLessThanOrEqual(10);
        const value = read(bytes, (r) => r.s64());
        if (n >= -(2n ** 53n) && n <= 2n ** 53n) expect(value).toBe(Number(n));
      }),
      // Values near -2^53 once lost their low bit to float rounding before the sign was applied.
      { examples: [[-(2n ** 53n) + 1n], [-(2n ** 53n) + 3n], [2n ** 53n - 1n], [-(2n ** 52n) - 1n]] },
    );
  });

  it('Reader.s32 reads the extremes and refuses unused bits that are not sign copies', () => {
    expect(read([0x80, 0x80, 0x80, 0x80, 0x78], (r) => r.s32())).toBe(-(2 ** 31));
    expect(read([0xff, 0xff, 0xff, 0xff, 0x07], (r) => r.s32())).toBe(2 ** 31 - 1);
    expect(read([0x7f], (r) => r.s32())).toBe(-1);
    expect(() => read([0xff, 0xff, 0xff, 0xff, 0x4f], (r) => r.s32())).toThrowError(/integer too large/);
    expect(() => read([0x80, 0x80, 0x80, 0x80, 0x80, 0x00], (r) => r.s32())).toThrowError(/representation too long/);
  });

  it('Reader.s33 reads block-type indices and the negative one-byte type codes', () => {
    expect(read([0x40], (r) => r.s33())).toBe(-64);
    expect(read([0xff, 0xff, 0xff, 0xff, 0x0f], (r) => r.s33())).toBe(2 ** 32 - 1);
    expect(() => read([0xff, 0xff, 0xff, 0xff, 0x2f], (r) => r.s33())).toThrowError(/integer too large/);
  });

  it('Reader.u64 refuses a tenth byte above 1', () => {
    expect(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], (r) => r.u64())).toBe(2 ** 64);
    expect(() => read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], (r) => r.u64())).toThrowError(WasmDecodeError);
  });
});
