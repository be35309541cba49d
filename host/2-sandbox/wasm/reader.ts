// A bounds-checked cursor over module bytes with the LEB128 forms of the binary format; every
// read that would cross its end or break an encoding rule throws a WasmDecodeError.

import { WasmDecodeError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A cursor over `bytes[pos, end)`; offsets are absolute in the module. */
export class Reader {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    pos: number,
    public end: number,
  ) {
    this.pos = pos;
  }

  /** Throws a WasmDecodeError at `offset` (the current position by default). */
  fail(reason: string, offset: number = this.pos): never {
    throw new WasmDecodeError(offset, reason);
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  u8(): number {
    if (this.pos >= this.end) this.fail('unexpected end');
    return this.bytes[this.pos++]!;
  }

  peek(): number {
    if (this.pos >= this.end) this.fail('unexpected end');
    return this.bytes[this.pos]!;
  }

  /** Skips `n` bytes, refusing to cross the end. */
  skip(n: number): void {
    if (n > this.end - this.pos) this.fail('unexpected end');
    this.pos += n;
  }

  u32(): number {
    return this.leb(32, false);
  }

  s32(): number {
    return this.leb(32, true);
  }

  /** A signed 33-bit integer (block types, heap types). */
  s33(): number {
    return this.leb(33, true);
  }

  /** An unsigned 64-bit integer as a number (exact up to 2^53, which covers every real size). */
  u64(): number {
    return this.leb(64, false);
  }

  /** A signed 64-bit integer; the value is approximate above 2^53 and only bounds are checked. */
  s64(): number {
    return this.leb(64, true);
  }

  /**
   * Reads an N-bit LEB128. The spec allows padded encodings but at most ceil(N/7) bytes, and
   * the unused bits of the last byte must be zero (unsigned) or copies of the sign (signed).
   */
  leb(bits: number, signed: boolean): number {
    const start = this.pos;
    const maxBytes = Math.ceil(bits / 7);
    let value = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end) this.fail('unexpected end', start);
      const byte = this.bytes[this.pos++]!;
      const payload = byte & 0x7f;
      if (i === maxBytes - 1) {
        if (byte & 0x80) this.fail('integer representation too long', start);
        const used = bits - 7 * i;
        if (signed) {
          const rest = payload >> (used - 1);
          if (rest !== 0 && rest !== 0x7f >> (used - 1)) this.fail('integer too large', start);
        } else if (payload >> used !== 0) {
          this.fail('integer too large', start);
        }
      }
      value += payload * scale;
      scale *= 128;
      if (!(byte & 0x80)) {
        // Past 2^53 a float sum loses low bits before the sign is applied; redo it exactly.
        if (scale > 2 ** 53) return this.#exact(start, signed);
        if (signed && payload & 0x40) value -= scale;
        return value;
      }
    }
  }

  /** Re-reads the (already validated) LEB128 at `start` with BigInt arithmetic. */
  #exact(start: number, signed: boolean): number {
    let value = 0n;
    let shift = 0n;
    for (let i = start; ; i++) {
      const byte = this.bytes[i]!;
      value |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
      if (!(byte & 0x80)) {
        if (signed && byte & 0x40) value -= 1n << shift;
        return Number(value);
      }
    }
  }

  /** A length-prefixed UTF-8 name. */
  name(): string {
    const len = this.u32();
    const start = this.pos;
    this.skip(len);
    try {
      return utf8.decode(this.bytes.subarray(start, start + len));
    } catch {
      return this.fail('malformed UTF-8 encoding', start);
    }
  }
}
