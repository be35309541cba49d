// A growable byte buffer with the LEB128 encoders the instrumenter needs to emit sections,
// function bodies and inserted instructions.

/** Appends bytes to a buffer that doubles as needed. */
export class Writer {
  private buf: Uint8Array;
  length = 0;

  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  u8(byte: number): this {
    this.reserve(1);
    this.buf[this.length++] = byte;
    return this;
  }

  bytes(data: Uint8Array): this {
    this.reserve(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
    return this;
  }

  /** Unsigned LEB128 of a non-negative integer up to 2^53. */
  u32(value: number): this {
    let v = value;
    do {
      let byte = v % 128;
      v = Math.floor(v / 128);
      if (v !== 0) byte |= 0x80;
      this.u8(byte);
    } while (v !== 0);
    return this;
  }

  /** Signed LEB128 of a 64-bit integer. */
  s64(value: bigint): this {
    let v = value;
    for (;;) {
      const byte = Number(v & 0x7fn);
      v >>= 7n;
      const done = (v === 0n && !(byte & 0x40)) || (v === -1n && byte & 0x40);
      this.u8(done ? byte : byte | 0x80);
      if (done) return this;
    }
  }

  /** A length-prefixed UTF-8 name. */
  name(text: string): this {
    const encoded = new TextEncoder().encode(text);
    return this.u32(encoded.length).bytes(encoded);
  }

  /** A copy of what was written. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}
