// Compact JSON output: a streaming writer that checks its own nesting. Escapes match
// JSON.stringify, so output is valid UTF-8 JSON whatever the strings. Value trees (value.ts)
// write themselves through it, so the writer knows nothing of them.

import { CodeUnitBuffer } from "./buffer";
import { MAX_SAFE_INTEGER } from "./numbers";

// Nesting states; a misplaced call aborts, because it is a bug in the tool, not bad input.
const IN_ARRAY: u8 = 0;
const OBJECT_WANTS_KEY: u8 = 1;
const OBJECT_WANTS_VALUE: u8 = 2;

/** A value that writes itself as exactly one JSON value through a writer. */
export interface JSONWritable {
  writeTo(writer: JSONWriter): void;
}

/**
 * Writes one JSON value as compact text: `beginObject().key("a").integer(1).endObject()`.
 * Commas are placed automatically; misuse (a value where a key belongs, unbalanced ends,
 * NaN or Infinity) aborts with a message naming the mistake.
 */
export class JSONWriter {
  private readonly out: CodeUnitBuffer;
  private readonly stack: Array<u8> = [];
  private needsComma: bool = false;
  private done: bool = false;

  constructor(capacity: i32 = 256) {
    this.out = new CodeUnitBuffer(capacity);
  }

  beginObject(): JSONWriter {
    this.beforeValue();
    this.out.push(0x7b);
    this.stack.push(OBJECT_WANTS_KEY);
    this.needsComma = false;
    return this;
  }

  endObject(): JSONWriter {
    if (this.stack.length == 0 || this.stack[this.stack.length - 1] != OBJECT_WANTS_KEY) {
      abort("JSONWriter: endObject() without a matching beginObject() or after a dangling key");
    }
    this.stack.pop();
    this.out.push(0x7d);
    this.afterValue();
    return this;
  }

  beginArray(): JSONWriter {
    this.beforeValue();
    this.out.push(0x5b);
    this.stack.push(IN_ARRAY);
    this.needsComma = false;
    return this;
  }

  endArray(): JSONWriter {
    if (this.stack.length == 0 || this.stack[this.stack.length - 1] != IN_ARRAY) {
      abort("JSONWriter: endArray() without a matching beginArray()");
    }
    this.stack.pop();
    this.out.push(0x5d);
    this.afterValue();
    return this;
  }

  /** Writes an object key; the next call must write its value. */
  key(name: string): JSONWriter {
    if (this.stack.length == 0 || this.stack[this.stack.length - 1] != OBJECT_WANTS_KEY) {
      abort("JSONWriter: key() outside an object or where a value is expected");
    }
    if (this.needsComma) this.out.push(0x2c);
    writeQuoted(this.out, name);
    this.out.push(0x3a);
    this.stack[this.stack.length - 1] = OBJECT_WANTS_VALUE;
    return this;
  }

  string(value: string): JSONWriter {
    this.beforeValue();
    writeQuoted(this.out, value);
    this.afterValue();
    return this;
  }

  /** Writes a number; whole numbers up to 2^53 print without a fraction, as in JavaScript. */
  number(value: f64): JSONWriter {
    this.beforeValue();
    writeNumber(this.out, value);
    this.afterValue();
    return this;
  }

  integer(value: i64): JSONWriter {
    this.beforeValue();
    this.out.pushString(value.toString());
    this.afterValue();
    return this;
  }

  bool(value: bool): JSONWriter {
    this.beforeValue();
    this.out.pushString(value ? "true" : "false");
    this.afterValue();
    return this;
  }

  nullValue(): JSONWriter {
    this.beforeValue();
    this.out.pushString("null");
    this.afterValue();
    return this;
  }

  /** Inserts text that is already one valid JSON value; it is trusted, not checked. */
  raw(json: string): JSONWriter {
    this.beforeValue();
    this.out.pushString(json);
    this.afterValue();
    return this;
  }

  /** Writes a whole value tree (a JSONValue, or anything else that writes itself). */
  value(value: JSONWritable): JSONWriter {
    value.writeTo(this);
    return this;
  }

  /** The text written so far; aborts if a container is still open. */
  toString(): string {
    if (this.stack.length != 0) abort("JSONWriter: toString() with an unclosed object or array");
    return this.out.toString();
  }

  private beforeValue(): void {
    const depth = this.stack.length;
    if (depth == 0) {
      if (this.done) abort("JSONWriter: a second top-level value");
      return;
    }
    const state = this.stack[depth - 1];
    if (state == OBJECT_WANTS_KEY) abort("JSONWriter: a value inside an object needs key() first");
    if (state == IN_ARRAY && this.needsComma) this.out.push(0x2c);
  }

  private afterValue(): void {
    const depth = this.stack.length;
    if (depth == 0) {
      this.done = true;
      return;
    }
    if (this.stack[depth - 1] == OBJECT_WANTS_VALUE) this.stack[depth - 1] = OBJECT_WANTS_KEY;
    this.needsComma = true;
  }
}

/** `text` as a JSON string literal, quotes included. */
export function quote(text: string): string {
  const out = new CodeUnitBuffer(text.length + 2);
  writeQuoted(out, text);
  return out.toString();
}

function writeNumber(out: CodeUnitBuffer, value: f64): void {
  if (!isFinite(value)) abort("JSONWriter: NaN and Infinity have no JSON form");
  if (Math.floor(value) == value && Math.abs(value) <= MAX_SAFE_INTEGER) {
    // Also turns -0 into "0", as JSON.stringify does.
    out.pushString((<i64>value).toString());
  } else {
    // AssemblyScript's dtoa yields the shortest round-trip digits, in JSON-compatible form.
    out.pushString(value.toString());
  }
}

function writeQuoted(out: CodeUnitBuffer, text: string): void {
  const start = changetype<usize>(text);
  const units = text.length;
  out.push(0x22);
  let run = 0;
  for (let i = 0; i < units; i++) {
    const unit = <u32>load<u16>(start + (<usize>i << 1));
    if (unit >= 0x20 && unit != 0x22 && unit != 0x5c && (unit & 0xf800) != 0xd800) continue;
    if ((unit & 0xfc00) == 0xd800 && i + 1 < units) {
      // A well-formed surrogate pair is copied; only lone halves need escaping.
      const next = <u32>load<u16>(start + (<usize>(i + 1) << 1));
      if ((next & 0xfc00) == 0xdc00) {
        i++;
        continue;
      }
    }
    out.pushUnits(start + (<usize>run << 1), i - run);
    run = i + 1;
    out.push(0x5c);
    switch (unit) {
      case 0x22: out.push(0x22); break;
      case 0x5c: out.push(0x5c); break;
      case 0x08: out.push(0x62); break;
      case 0x0c: out.push(0x66); break;
      case 0x0a: out.push(0x6e); break;
      case 0x0d: out.push(0x72); break;
      case 0x09: out.push(0x74); break;
      // Other control characters and lone surrogates, lowercase as JSON.stringify writes them.
      default: out.pushHexEscape(unit);
    }
  }
  out.pushUnits(start + (<usize>run << 1), units - run);
  out.push(0x22);
}
