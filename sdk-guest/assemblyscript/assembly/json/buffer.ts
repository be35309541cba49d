// A growable UTF-16 buffer for building text in linear time (the writer's output; string
// concatenation in a loop would be quadratic), the UTF-8 decoder the parser uses, and the
// byte-level helpers of streaming: a word-at-a-time scan for bytes JSON must escape, and the
// decoding of one escape to UTF-8.

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

const LOW_SEVEN: u64 = 0x7f7f7f7f7f7f7f7f;
const HIGH_BITS: u64 = 0x8080808080808080;

/**
 * The address of the first byte in [at, end) that JSON text cannot hold as is inside a string
 * (a quote, a backslash or a control character), or `end`. Sixteen bytes per step, exact per
 * byte (no carries between bytes): with m = the low seven bits of a byte, m ^ c plus 0x7f
 * sets the high bit unless m == c, and m + 0x60 sets it unless m < 0x20; a byte is plain when
 * one of those, or its own high bit (non-ASCII), is set in every test.
 */
export function findJsonSpecial(at: usize, end: usize): usize {
  while (at + 16 <= end) {
    // Both words plain is the common case: one test for sixteen bytes.
    const first = plainBytes(load<u64>(at));
    const second = plainBytes(load<u64>(at, 8));
    if ((first & second) != HIGH_BITS) {
      const found = ~first & HIGH_BITS;
      return found != 0 ? at + <usize>(ctz(found) >> 3) : at + 8 + <usize>(ctz(~second & HIGH_BITS) >> 3);
    }
    at += 16;
  }
  while (at + 8 <= end) {
    const found = ~plainBytes(load<u64>(at)) & HIGH_BITS;
    if (found != 0) return at + <usize>(ctz(found) >> 3);
    at += 8;
  }
  while (at < end) {
    const byte = <u32>load<u8>(at);
    if (byte < 0x20 || byte == 0x22 || byte == 0x5c) break;
    at++;
  }
  return at;
}

// The high bit of each byte of `word` that is plain string text (see findJsonSpecial).
@inline
function plainBytes(word: u64): u64 {
  const low = word & LOW_SEVEN;
  return (((low ^ 0x2222222222222222) + LOW_SEVEN) & ((low ^ 0x5c5c5c5c5c5c5c5c) + LOW_SEVEN) & (low + 0x6060606060606060) | word) & HIGH_BITS;
}

/**
 * A list of u32 for offsets a scan records once so that later passes need not scan again (the
 * LFs of an artifact piece). By default it grows outside the managed heap (heap.alloc /
 * heap.realloc) and its owner calls `free`; `OffsetList.fixed` wraps storage of a set size
 * instead (static memory, which no heap layout depends on), and a push past its end only
 * sets `overflowed`. Unmanaged, so hot loops reach its fields without the shadow stack's
 * bookkeeping (the few bytes of the object itself are never reclaimed).
 */
@unmanaged
export class OffsetList {
  pointer: usize = 0;
  length: i32 = 0;
  capacity: i32 = 0;
  /** False for fixed storage. */
  growable: bool = true;
  /** True when a push did not fit in fixed storage: the list holds only the first offsets. */
  overflowed: bool = false;

  /** A list over `capacity` u32 at `pointer`, which never grows. */
  static fixed(pointer: usize, capacity: i32): OffsetList {
    const list = new OffsetList();
    list.pointer = pointer;
    list.capacity = capacity;
    list.growable = false;
    return list;
  }

  @inline push(value: u32): void {
    if (this.length == this.capacity) {
      if (!this.growable) {
        this.overflowed = true;
        return;
      }
      this.grow();
    }
    store<u32>(this.pointer + (<usize>this.length << 2), value);
    this.length++;
  }

  /** The offset at `index` (unchecked: `index` must be below `length`). */
  @inline at(index: i32): u32 {
    return load<u32>(this.pointer + (<usize>index << 2));
  }

  /** Makes room for `capacity` offsets in all (growable lists only). */
  reserve(capacity: i32): void {
    if (this.growable && capacity > this.capacity) this.resize(capacity);
  }

  /** Releases the storage of a growable list (a fixed one is only emptied). */
  free(): void {
    this.length = 0;
    this.overflowed = false;
    if (!this.growable) return;
    if (this.pointer != 0) heap.free(this.pointer);
    this.pointer = 0;
    this.length = 0;
    this.capacity = 0;
  }

  private grow(): void {
    this.resize(max(this.capacity * 2, 1024));
  }

  private resize(capacity: i32): void {
    this.pointer = this.pointer == 0 ? heap.alloc(<usize>capacity << 2) : heap.realloc(this.pointer, <usize>capacity << 2);
    this.capacity = capacity;
  }
}

/**
 * Decodes the JSON escape at `read` (a backslash) to UTF-8 at `write`. Returns
 * `(bytes read << 32) | bytes written`, or -1 when the escape is malformed. A surrogate pair
 * written as two \u escapes becomes one 4-byte character; a lone surrogate becomes U+FFFD.
 */
export function decodeEscape(read: usize, end: usize, write: usize): i64 {
  if (read + 1 >= end) return -1;
  let unit: i32 = -1;
  switch (<u32>load<u8>(read + 1)) {
    case 0x22: unit = 0x22; break;
    case 0x5c: unit = 0x5c; break;
    case 0x2f: unit = 0x2f; break;
    case 0x62: unit = 0x08; break;
    case 0x66: unit = 0x0c; break;
    case 0x6e: unit = 0x0a; break;
    case 0x72: unit = 0x0d; break;
    case 0x74: unit = 0x09; break;
    case 0x75: break;
    default: return -1;
  }
  if (unit >= 0) {
    store<u8>(write, <u8>unit);
    return (<i64>2 << 32) | 1;
  }
  let code = hex4(read + 2, end);
  if (code < 0) return -1;
  let consumed: i64 = 6;
  if ((code & 0xfc00) == 0xd800) {
    const next = read + 6;
    const low = next + 6 <= end && load<u8>(next) == 0x5c && load<u8>(next + 1) == 0x75 ? hex4(next + 2, end) : -1;
    if (low >= 0 && (low & 0xfc00) == 0xdc00) {
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
      consumed = 12;
    } else {
      code = 0xfffd;
    }
  } else if ((code & 0xfc00) == 0xdc00) {
    code = 0xfffd;
  }
  return (consumed << 32) | <i64>(encodeUtf8(write, <u32>code) - write);
}

// The value of four hex digits at `at`, or -1.
function hex4(at: usize, end: usize): i32 {
  if (at + 4 > end) return -1;
  let value = 0;
  for (let k: usize = 0; k < 4; k++) {
    const byte = <i32>load<u8>(at + k);
    let digit: i32;
    if (byte >= 0x30 && byte <= 0x39) digit = byte - 0x30;
    else if (byte >= 0x61 && byte <= 0x66) digit = byte - 0x57;
    else if (byte >= 0x41 && byte <= 0x46) digit = byte - 0x37;
    else return -1;
    value = (value << 4) | digit;
  }
  return value;
}

// Writes the UTF-8 of `code` at `out`; returns the address after it.
export function encodeUtf8(out: usize, code: u32): usize {
  if (code < 0x80) {
    store<u8>(out, <u8>code);
    return out + 1;
  }
  if (code < 0x800) {
    store<u8>(out, <u8>(0xc0 | (code >> 6)));
    store<u8>(out + 1, <u8>(0x80 | (code & 0x3f)));
    return out + 2;
  }
  if (code < 0x10000) {
    store<u8>(out, <u8>(0xe0 | (code >> 12)));
    store<u8>(out + 1, <u8>(0x80 | ((code >> 6) & 0x3f)));
    store<u8>(out + 2, <u8>(0x80 | (code & 0x3f)));
    return out + 3;
  }
  store<u8>(out, <u8>(0xf0 | (code >> 18)));
  store<u8>(out + 1, <u8>(0x80 | ((code >> 12) & 0x3f)));
  store<u8>(out + 2, <u8>(0x80 | ((code >> 6) & 0x3f)));
  store<u8>(out + 3, <u8>(0x80 | (code & 0x3f)));
  return out + 4;
}
