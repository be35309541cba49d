// A strict RFC 8259 JSON parser over UTF-8 bytes. It never aborts on bad text: it stops at the
// first problem and reports what and where, because capability results are data, not code.
// Parsing the bytes directly (rather than a decoded copy) halves peak memory for large inputs.

import { decodeEscape, decodeUtf8, findJsonSpecial, OffsetList } from "./buffer";
import { decimalToDouble } from "./decimal";
import { JSONArray, JSONBool, JSONNull, JSONNumber, JSONObject, JSONString, JSONValue } from "./value";

/**
 * Default nesting limit (as serde_json). The parser recurses, and under V8's baseline compiler a
 * level costs about 1.5 KB of native stack, so this leaves a wide margin on a 1 MB stack.
 */
export const DEFAULT_MAX_DEPTH: i32 = 128;

/**
 * Parses one JSON document, from a string (`new JSONParser(text)`) or from UTF-8 bytes in
 * memory (`JSONParser.fromBytes`). After `parse()` returns null, `error` says what was wrong
 * and `position` is the byte offset (in the UTF-8 text) where it was found.
 */
export class JSONParser {
  /** Description of the first problem, empty when parsing succeeded. */
  error: string = "";
  /** Byte offset into the UTF-8 text of the first problem, -1 when none. */
  position: i32 = -1;
  /**
   * Streaming aid: a string value under this key is not decoded into a string but unescaped
   * in place, in the parsed bytes, to its UTF-8 text. It parses as an empty string, and
   * `rawStart`/`rawLength` say where its bytes are. Used to take large payloads out of a
   * response without UTF-16 copies (the parsed bytes are modified).
   */
  rawKey: string | null = null;
  /** Byte offset of the raw string's UTF-8 text, -1 when none was met. */
  rawStart: i32 = -1;
  /** Length in bytes of the raw string's UTF-8 text. */
  rawLength: i32 = 0;
  /**
   * When set, the raw string's LFs are recorded here (emptied first): their offsets in its
   * UTF-8 text, in order (with fixed storage, as many as fit: see `overflowed`). A line reader
   * then needs no second scan for line ends.
   */
  rawLineFeeds: OffsetList | null = null;

  // Holds the encoded text of a string source, so the bytes stay alive while parsing.
  private bytes: ArrayBuffer | null;
  private start: usize;
  private end: i32;
  private index: i32 = 0;
  private depth: i32 = 0;

  /** A parser for `text`; refuses nesting deeper than `maxDepth`. */
  constructor(text: string, private readonly maxDepth: i32 = DEFAULT_MAX_DEPTH) {
    const bytes = String.UTF8.encode(text);
    this.bytes = bytes;
    this.start = changetype<usize>(bytes);
    this.end = bytes.byteLength;
  }

  /** A parser for `length` UTF-8 bytes at `ptr`, which must stay valid until `parse()` returns. */
  static fromBytes(ptr: usize, length: i32, maxDepth: i32 = DEFAULT_MAX_DEPTH): JSONParser {
    const parser = new JSONParser("", maxDepth);
    parser.bytes = null;
    parser.start = ptr;
    parser.end = length;
    return parser;
  }

  /** The parsed value, or null when the text is not exactly one JSON value. */
  parse(): JSONValue | null {
    this.skipWhitespace();
    const value = this.parseValue();
    if (value === null) return null;
    this.skipWhitespace();
    if (this.index < this.end) return this.fail("unexpected text after the JSON value");
    return value;
  }

  private parseValue(): JSONValue | null {
    if (this.index >= this.end) return this.fail("unexpected end of input");
    const byte = this.peek();
    switch (byte) {
      case 0x7b: return this.parseObject();
      case 0x5b: return this.parseArray();
      case 0x22: {
        const text = this.parseString();
        return text === null ? null : new JSONString(text);
      }
      case 0x74: return this.parseLiteral("true", new JSONBool(true));
      case 0x66: return this.parseLiteral("false", new JSONBool(false));
      case 0x6e: return this.parseLiteral("null", new JSONNull());
      default: {
        if (byte == 0x2d || isDigit(byte)) return this.parseNumber();
        return this.fail("unexpected character " + this.describeAt(this.index));
      }
    }
  }

  private parseObject(): JSONValue | null {
    if (++this.depth > this.maxDepth) return this.fail("nesting deeper than " + this.maxDepth.toString());
    this.index++;
    const object = new JSONObject();
    this.skipWhitespace();
    if (this.index < this.end && this.peek() == 0x7d) {
      this.index++;
      this.depth--;
      return object;
    }
    while (true) {
      if (this.index >= this.end || this.peek() != 0x22) return this.fail("expected a string key");
      const key = this.parseString();
      if (key === null) return null;
      this.skipWhitespace();
      if (this.index >= this.end || this.peek() != 0x3a) return this.fail("expected ':' after an object key");
      this.index++;
      this.skipWhitespace();
      const rawKey = this.rawKey;
      const value = rawKey !== null && key == rawKey && this.index < this.end && this.peek() == 0x22 ? this.takeRawString() : this.parseValue();
      if (value === null) return null;
      // Duplicate keys: the last value wins, the first position stays, as in JSON.parse.
      object.set(key, value);
      this.skipWhitespace();
      if (this.index >= this.end) return this.fail("unterminated object");
      const next = this.peek();
      this.index++;
      if (next == 0x7d) break;
      if (next != 0x2c) return this.failAt(this.index - 1, "expected ',' or '}' in an object");
      this.skipWhitespace();
    }
    this.depth--;
    return object;
  }

  private parseArray(): JSONValue | null {
    if (++this.depth > this.maxDepth) return this.fail("nesting deeper than " + this.maxDepth.toString());
    this.index++;
    const array = new JSONArray();
    this.skipWhitespace();
    if (this.index < this.end && this.peek() == 0x5d) {
      this.index++;
      this.depth--;
      return array;
    }
    while (true) {
      const value = this.parseValue();
      if (value === null) return null;
      array.push(value);
      this.skipWhitespace();
      if (this.index >= this.end) return this.fail("unterminated array");
      const next = this.peek();
      this.index++;
      if (next == 0x5d) break;
      if (next != 0x2c) return this.failAt(this.index - 1, "expected ',' or ']' in an array");
      this.skipWhitespace();
    }
    this.depth--;
    return array;
  }

  // Strings without escapes (the common case) decode in one call; with escapes, the raw runs
  // between them are decoded one by one. Quotes and backslashes are ASCII, so a run never
  // splits a multi-byte character.
  private parseString(): string | null {
    // Hot loops use locals: fields would be reloaded and stored on every byte.
    const start = this.start;
    const end = this.end;
    const first = this.index + 1;
    let i = first;
    while (i < end) {
      const byte = <u32>load<u8>(start + <usize>i);
      if (byte == 0x22) {
        this.index = i + 1;
        return String.UTF8.decodeUnsafe(start + <usize>first, <usize>(i - first));
      }
      if (byte == 0x5c) break;
      if (byte < 0x20) return this.failStringAt(i, "unescaped control character in a string");
      i++;
    }
    if (i >= end) return this.failStringAt(i, "unterminated string");
    // Escapes: find the closing quote first, so the result is allocated once at its largest
    // possible size (escapes and UTF-8 only shrink into UTF-16) and trimmed at the end, with
    // no growth copies; a 1 MiB string otherwise costs several times its size in garbage.
    let close = i;
    while (close < end) {
      const byte = <u32>load<u8>(start + <usize>close);
      if (byte == 0x22) break;
      close += byte == 0x5c ? 2 : 1;
    }
    if (close >= end) return this.failStringAt(end, "unterminated string");
    // Held as a bare address until __renew: safe because nothing below allocates on the
    // success path, and the collector only runs inside allocations.
    const result = __new(<usize>(close - first) << 1, idof<String>());
    let out = decodeUtf8(start + <usize>first, i - first, result);
    let run = i;
    while (i < close) {
      const byte = <u32>load<u8>(start + <usize>i);
      if (byte < 0x20) return this.failStringAt(i, "unescaped control character in a string");
      if (byte != 0x5c) {
        i++;
        continue;
      }
      out = decodeUtf8(start + <usize>run, i - run, out);
      const escaped = <u32>load<u8>(start + <usize>(i + 1));
      let unit: u32;
      switch (escaped) {
        case 0x22: unit = 0x22; break;
        case 0x5c: unit = 0x5c; break;
        case 0x2f: unit = 0x2f; break;
        case 0x62: unit = 0x08; break;
        case 0x66: unit = 0x0c; break;
        case 0x6e: unit = 0x0a; break;
        case 0x72: unit = 0x0d; break;
        case 0x74: unit = 0x09; break;
        case 0x75: {
          // Each \uXXXX is one UTF-16 unit, so a surrogate pair written as two escapes
          // recombines by itself; a lone surrogate is kept, as JSON allows.
          const value = this.parseHex4(i + 2);
          if (value < 0) return null;
          unit = <u32>value;
          i += 4;
          break;
        }
        default: return this.failStringAt(i + 1, "invalid escape " + this.describeAt(i + 1));
      }
      store<u16>(out, <u16>unit);
      out += 2;
      i += 2;
      run = i;
    }
    out = decodeUtf8(start + <usize>run, close - run, out);
    this.index = close + 1;
    return changetype<string>(__renew(result, out - result));
  }

  // Unescapes a string value in place, recording where its UTF-8 text lies (and, with
  // `rawLineFeeds`, where its LFs are). Runs without escapes are found a word at a time and
  // moved with one copy; the escapes of a line end and a tab, one or more per line of text,
  // are decoded here without a call.
  private takeRawString(): JSONValue | null {
    const base = this.start;
    const end = base + <usize>this.end;
    const first = base + <usize>(this.index + 1);
    const feeds = this.rawLineFeeds;
    // The LF list in locals while scanning (stored back at the end): a line costs a few
    // instructions more than its escape, not a call.
    let feedList: usize = 0;
    let feedCount: i32 = 0;
    let feedCapacity: i32 = 0;
    let overflowed = false;
    if (feeds !== null) {
      feeds.length = 0;
      feeds.overflowed = false;
      feedList = feeds.pointer;
      feedCapacity = feeds.capacity;
    }
    let read = first;
    let write = first;
    while (true) {
      const stop = findJsonSpecial(read, end);
      if (write != read) memory.copy(write, read, stop - read);
      write += stop - read;
      read = stop;
      if (read >= end) return this.failAt(this.end, "unterminated string");
      const byte = <u32>load<u8>(read);
      if (byte == 0x5c && read + 1 < end) {
        const escaped = <u32>load<u8>(read + 1);
        if (escaped == 0x6e) {
          if (feeds !== null) {
            if (feedCount == feedCapacity) {
              feeds.length = feedCount;
              feeds.reserve(max(feedCapacity * 2, 1024));
              feedList = feeds.pointer;
              feedCapacity = feeds.capacity;
            }
            if (feedCount < feedCapacity) {
              store<u32>(feedList + (<usize>feedCount << 2), <u32>(write - first));
              feedCount++;
            } else overflowed = true;
          }
          store<u8>(write, 0x0a);
          read += 2;
          write++;
          continue;
        }
        if (escaped == 0x74) {
          store<u8>(write, 0x09);
          read += 2;
          write++;
          continue;
        }
      }
      if (byte == 0x22) break;
      if (byte < 0x20) return this.failAt(<i32>(read - base), "unescaped control character in a string");
      const step = decodeEscape(read, end, write);
      if (step < 0) return this.failAt(<i32>(read - base), "invalid escape in a string");
      // \u000a is an LF too.
      if (feeds !== null && load<u8>(write) == 0x0a) {
        feeds.length = feedCount;
        feeds.push(<u32>(write - first));
        feedList = feeds.pointer;
        feedCapacity = feeds.capacity;
        feedCount = feeds.length;
        if (feeds.overflowed) overflowed = true;
      }
      read += <usize>(step >>> 32);
      write += <usize>(step & 0xffffffff);
    }
    if (feeds !== null) {
      feeds.length = feedCount;
      feeds.overflowed = overflowed;
    }
    this.rawStart = <i32>(first - base);
    this.rawLength = <i32>(write - first);
    this.index = <i32>(read - base) + 1;
    return new JSONString("");
  }

  // The four hex digits at `at`, or -1 after recording the error.
  private parseHex4(at: i32): i32 {
    let value = 0;
    for (let k = 0; k < 4; k++) {
      if (at + k >= this.end) {
        this.failAt(at + k, "\\u escape needs four hex digits");
        return -1;
      }
      const byte = this.byteAt(at + k);
      let digit: i32;
      if (isDigit(byte)) digit = <i32>byte - 0x30;
      else if (byte >= 0x61 && byte <= 0x66) digit = <i32>byte - 0x57;
      else if (byte >= 0x41 && byte <= 0x46) digit = <i32>byte - 0x37;
      else {
        this.failAt(at + k, "\\u escape needs four hex digits");
        return -1;
      }
      value = (value << 4) | digit;
    }
    return value;
  }

  // Checks the exact JSON number grammar, then converts the validated bytes.
  private parseNumber(): JSONValue | null {
    const first = this.index;
    if (this.peek() == 0x2d) this.index++;
    if (this.index >= this.end) return this.fail("a number needs digits");
    if (this.peek() == 0x30) {
      this.index++;
      if (this.index < this.end && isDigit(this.peek())) return this.fail("leading zeros are not allowed");
    } else if (isDigit(this.peek())) {
      this.skipDigits();
    } else {
      return this.fail("a number needs digits");
    }
    if (this.index < this.end && this.peek() == 0x2e) {
      this.index++;
      if (this.index >= this.end || !isDigit(this.peek())) return this.fail("a fraction needs digits after '.'");
      this.skipDigits();
    }
    if (this.index < this.end && (this.peek() | 0x20) == 0x65) {
      this.index++;
      if (this.index < this.end && (this.peek() == 0x2b || this.peek() == 0x2d)) this.index++;
      if (this.index >= this.end || !isDigit(this.peek())) return this.fail("an exponent needs digits");
      this.skipDigits();
    }
    return new JSONNumber(decimalToDouble(this.start, first, this.index));
  }

  private skipDigits(): void {
    const start = this.start;
    const end = this.end;
    let i = this.index;
    while (i < end && isDigit(<u32>load<u8>(start + <usize>i))) i++;
    this.index = i;
  }

  private parseLiteral(word: string, value: JSONValue): JSONValue | null {
    const length = word.length;
    for (let k = 0; k < length; k++) {
      const at = this.index + k;
      if (at >= this.end || this.byteAt(at) != <u32>word.charCodeAt(k)) {
        return this.fail("unexpected character " + this.describeAt(this.index));
      }
    }
    this.index += length;
    return value;
  }

  private skipWhitespace(): void {
    const start = this.start;
    const end = this.end;
    let i = this.index;
    while (i < end) {
      const byte = <u32>load<u8>(start + <usize>i);
      if (byte != 0x20 && byte != 0x0a && byte != 0x0d && byte != 0x09) break;
      i++;
    }
    this.index = i;
  }

  @inline private peek(): u32 {
    return <u32>load<u8>(this.start + <usize>this.index);
  }

  @inline private byteAt(index: i32): u32 {
    return <u32>load<u8>(this.start + <usize>index);
  }

  // The character starting at byte `index`, quoted if printable ASCII, else as U+XXXX.
  private describeAt(index: i32): string {
    const byte = this.byteAt(index);
    if (byte >= 0x20 && byte < 0x7f) return "'" + String.fromCharCode(byte) + "'";
    let code = byte;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (length > 1 && index + length <= this.end) {
      code = byte & (0x7f >> length);
      for (let k = 1; k < length; k++) code = (code << 6) | (this.byteAt(index + k) & 0x3f);
    }
    // Hand-rolled hex: toUpperCase() would pull the Unicode case tables into every module.
    const digits = "0123456789ABCDEF";
    let hex = "";
    for (let shift = code > 0xfffff ? 20 : code > 0xffff ? 16 : 12; shift >= 0; shift -= 4) hex += digits.charAt((code >> shift) & 0xf);
    return "U+" + hex;
  }

  private fail(message: string): JSONValue | null {
    return this.failAt(this.index, message);
  }

  private failAt(position: i32, message: string): JSONValue | null {
    if (this.position < 0) {
      this.error = message;
      this.position = position;
    }
    return null;
  }

  private failStringAt(position: i32, message: string): string | null {
    this.failAt(position, message);
    return null;
  }
}

/** Parses `text`, or returns null when it is not exactly one JSON value. */
export function tryParse(text: string): JSONValue | null {
  return new JSONParser(text).parse();
}

/** Parses `text`, aborting with the parser's message when it is not valid JSON. */
export function parse(text: string): JSONValue {
  const parser = new JSONParser(text);
  const value = parser.parse();
  if (value === null) abort("invalid JSON at offset " + parser.position.toString() + ": " + parser.error);
  return changetype<JSONValue>(value);
}

@inline function isDigit(byte: u32): bool {
  return byte - 0x30 < 10;
}
