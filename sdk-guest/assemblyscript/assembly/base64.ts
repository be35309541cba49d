// Standard base64 (RFC 4648, with padding) for the binary forms of capabilities: artifact pieces
// and HTTP bodies with `encoding: "base64"`. Text data should stay utf8, which costs nothing.

// Encoding alphabet, and its inverse for ASCII (0xff marks a byte that is not in it).
const ALPHABET: usize = memory.data<u8>([
  0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x50,
  0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
  0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76,
  0x77, 0x78, 0x79, 0x7a, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x2b, 0x2f,
]);
const INVERSE: usize = memory.data(128);
let inverseReady: bool = false;

function prepareInverse(): void {
  if (inverseReady) return;
  memory.fill(INVERSE, 0xff, 128);
  for (let i = 0; i < 64; i++) store<u8>(INVERSE + <usize>load<u8>(ALPHABET + <usize>i), <u8>i);
  inverseReady = true;
}

/** Base64 encoding and decoding of bytes. */
export class Base64 {
  /** Length of the base64 text of `byteLength` bytes. */
  static encodedLength(byteLength: i32): i32 {
    return ((byteLength + 2) / 3) * 4;
  }

  /** The base64 text of `bytes`. */
  static encode(bytes: Uint8Array): string {
    return Base64.encodeRaw(bytes.dataStart, bytes.length);
  }

  /** The base64 text of `length` bytes at `source`. */
  static encodeRaw(source: usize, length: i32): string {
    const size = Base64.encodedLength(length);
    const ascii = heap.alloc(<usize>size);
    Base64.encodeInto(source, length, ascii);
    const text = String.UTF8.decodeUnsafe(ascii, <usize>size);
    heap.free(ascii);
    return text;
  }

  /**
   * Writes the base64 ASCII of `length` bytes at `source` to `target` (room for
   * `encodedLength(length)` bytes) and returns the address after the last byte written.
   */
  static encodeInto(source: usize, length: i32, target: usize): usize {
    let out = target;
    let i = 0;
    for (; i + 3 <= length; i += 3) {
      const chunk = (<u32>load<u8>(source + <usize>i) << 16) | (<u32>load<u8>(source + <usize>i + 1) << 8) | <u32>load<u8>(source + <usize>i + 2);
      store<u8>(out, load<u8>(ALPHABET + <usize>(chunk >> 18)));
      store<u8>(out + 1, load<u8>(ALPHABET + <usize>((chunk >> 12) & 63)));
      store<u8>(out + 2, load<u8>(ALPHABET + <usize>((chunk >> 6) & 63)));
      store<u8>(out + 3, load<u8>(ALPHABET + <usize>(chunk & 63)));
      out += 4;
    }
    const rest = length - i;
    if (rest > 0) {
      let chunk = <u32>load<u8>(source + <usize>i) << 16;
      if (rest == 2) chunk |= <u32>load<u8>(source + <usize>i + 1) << 8;
      store<u8>(out, load<u8>(ALPHABET + <usize>(chunk >> 18)));
      store<u8>(out + 1, load<u8>(ALPHABET + <usize>((chunk >> 12) & 63)));
      store<u8>(out + 2, rest == 2 ? load<u8>(ALPHABET + <usize>((chunk >> 6) & 63)) : 0x3d);
      store<u8>(out + 3, 0x3d);
      out += 4;
    }
    return out;
  }

  /**
   * The bytes of base64 `text`, or null when it is not base64: a length that is not a multiple
   * of 4, a character outside the alphabet, or padding anywhere but at the end. Whitespace is
   * not accepted (the host never sends any).
   */
  static decode(text: string): Uint8Array | null {
    prepareInverse();
    const units = text.length;
    if ((units & 3) != 0) return null;
    if (units == 0) return new Uint8Array(0);
    const base = changetype<usize>(text);
    let padding = 0;
    if (load<u16>(base + (<usize>(units - 1) << 1)) == 0x3d) padding++;
    if (load<u16>(base + (<usize>(units - 2) << 1)) == 0x3d) padding++;
    const out = new Uint8Array((units / 4) * 3 - padding);
    const target = out.dataStart;
    let written = 0;
    for (let i = 0; i < units; i += 4) {
      let chunk: u32 = 0;
      let valid = 0;
      for (let k = 0; k < 4; k++) {
        const unit = <u32>load<u16>(base + (<usize>(i + k) << 1));
        let value: u32 = 0xff;
        if (unit < 128) value = <u32>load<u8>(INVERSE + <usize>unit);
        if (value == 0xff) {
          // Only the trailing padding may be outside the alphabet.
          if (unit != 0x3d || i + 4 < units || k < 4 - padding) return null;
          value = 0;
        } else {
          valid++;
        }
        chunk = (chunk << 6) | value;
      }
      const bytes = valid - 1;
      const at = target + <usize>written;
      if (bytes >= 1) store<u8>(at, <u8>(chunk >> 16));
      if (bytes >= 2) store<u8>(at + 1, <u8>(chunk >> 8));
      if (bytes >= 3) store<u8>(at + 2, <u8>chunk);
      written += bytes;
    }
    return out;
  }
}
