// A growable UTF-16 buffer for building text in linear time (the writer's output; string
// concatenation in a loop would be quadratic), and the UTF-8 decoder the parser uses.

/** Appends UTF-16 code units and turns them into one string at the end. */
export class CodeUnitBuffer {
  // Managed storage, so an abandoned buffer is reclaimed by the garbage collector.
  private data: ArrayBuffer;
  private used: i32 = 0;

  /** Creates a buffer with room for `capacity` code units before the first growth. */
  constructor(capacity: i32 = 64) {
    this.data = new ArrayBuffer(max(capacity, 16) << 1);
  }

  /** Number of code units written so far. */
  get length(): i32 {
    return this.used;
  }

  /** Appends one UTF-16 code unit. */
  push(unit: u32): void {
    this.reserve(1);
    store<u16>(changetype<usize>(this.data) + (<usize>this.used << 1), <u16>unit);
    this.used++;
  }

  /** Appends a whole string. */
  pushString(text: string): void {
    this.pushUnits(changetype<usize>(text), text.length);
  }

  /** Appends `count` code units read from raw memory at `source`. */
  pushUnits(source: usize, count: i32): void {
    if (count <= 0) return;
    this.reserve(count);
    memory.copy(changetype<usize>(this.data) + (<usize>this.used << 1), source, <usize>count << 1);
    this.used += count;
  }

  /** Appends `u` and four lowercase hex digits: a `\uXXXX` escape after its backslash. */
  pushHexEscape(unit: u32): void {
    this.push(0x75);
    for (let shift = 12; shift >= 0; shift -= 4) {
      const digit = (unit >> shift) & 0xf;
      this.push(digit < 10 ? 0x30 + digit : 0x57 + digit);
    }
  }

  /** The buffer's content as a new string; the buffer stays usable. */
  toString(): string {
    return String.UTF16.decodeUnsafe(changetype<usize>(this.data), <usize>this.used << 1);
  }

  private reserve(extra: i32): void {
    const needed = this.used + extra;
    const capacity = this.data.byteLength >> 1;
    if (needed <= capacity) return;
    let next = capacity << 1;
    while (next < needed) next <<= 1;
    const grown = new ArrayBuffer(next << 1);
    memory.copy(changetype<usize>(grown), changetype<usize>(this.data), <usize>this.used << 1);
    this.data = grown;
  }
}

/**
 * Decodes `length` bytes of UTF-8 at `source` into UTF-16 at `target` (room for `length` units
 * suffices) and returns the address after the last unit written. Lenient like
 * String.UTF8.decode: malformed input produces replacement-free garbage, never a trap.
 */
export function decodeUtf8(source: usize, length: i32, target: usize): usize {
  let out = target;
  let at = source;
  const end = source + <usize>length;
  while (at < end) {
    let code = <u32>load<u8>(at++);
    if (code >= 0x80) {
      const extra = code >= 0xf0 ? 3 : code >= 0xe0 ? 2 : 1;
      code &= 0x3f >> extra;
      for (let k = 0; k < extra && at < end; k++) code = (code << 6) | (<u32>load<u8>(at++) & 0x3f);
      if (code >= 0x10000) {
        code -= 0x10000;
        store<u16>(out, <u16>(0xd800 | (code >> 10)));
        out += 2;
        code = 0xdc00 | (code & 0x3ff);
      }
    }
    store<u16>(out, <u16>code);
    out += 2;
  }
  return out;
}
