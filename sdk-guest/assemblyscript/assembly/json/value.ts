// The JSON value tree: what the parser returns and what tools build their output from.
// Objects keep insertion order, so output is stable and reads the way the tool wrote it.

import { MAX_SAFE_INTEGER } from "./numbers";
import { JSONWritable, JSONWriter } from "./writer";

export { MAX_SAFE_INTEGER };

/** The six JSON types. */
export enum JSONKind {
  NULL,
  BOOL,
  NUMBER,
  STRING,
  ARRAY,
  OBJECT,
}

/** Any JSON value; check `kind` (or the `is*` getters) before downcasting. */
export abstract class JSONValue implements JSONWritable {
  constructor(public readonly kind: JSONKind) {}

  get isNull(): bool { return this.kind == JSONKind.NULL; }
  get isBool(): bool { return this.kind == JSONKind.BOOL; }
  get isNumber(): bool { return this.kind == JSONKind.NUMBER; }
  get isString(): bool { return this.kind == JSONKind.STRING; }
  get isArray(): bool { return this.kind == JSONKind.ARRAY; }
  get isObject(): bool { return this.kind == JSONKind.OBJECT; }

  /** Compact JSON text of this value. */
  toString(): string {
    return stringify(this);
  }

  /** Writes this value, and everything inside it, through `writer`. */
  writeTo(writer: JSONWriter): void {
    switch (this.kind) {
      case JSONKind.NULL: writer.nullValue(); break;
      case JSONKind.BOOL: writer.bool(changetype<JSONBool>(this).value); break;
      case JSONKind.NUMBER: writer.number(changetype<JSONNumber>(this).value); break;
      case JSONKind.STRING: writer.string(changetype<JSONString>(this).value); break;
      case JSONKind.ARRAY: {
        const items = changetype<JSONArray>(this).items;
        writer.beginArray();
        for (let i = 0; i < items.length; i++) items[i].writeTo(writer);
        writer.endArray();
        break;
      }
      default: {
        const object = changetype<JSONObject>(this);
        writer.beginObject();
        for (let i = 0, n = object.size; i < n; i++) {
          writer.key(object.keyAt(i));
          object.valueAt(i).writeTo(writer);
        }
        writer.endObject();
      }
    }
  }
}

/** Compact JSON text of a value tree. */
export function stringify(value: JSONValue): string {
  return new JSONWriter().value(value).toString();
}

/** `null`. */
export class JSONNull extends JSONValue {
  constructor() { super(JSONKind.NULL); }
}

/** `true` or `false`. */
export class JSONBool extends JSONValue {
  constructor(public value: bool) { super(JSONKind.BOOL); }
}

/** A number, held as f64 (integers are exact up to 2^53). */
export class JSONNumber extends JSONValue {
  constructor(public value: f64) { super(JSONKind.NUMBER); }

  /** True when the value is a whole number within the exactly representable range. */
  get isSafeInteger(): bool {
    return Math.floor(this.value) == this.value && Math.abs(this.value) <= MAX_SAFE_INTEGER;
  }
}

/** A string (UTF-16 inside AssemblyScript, UTF-8 on the wire). */
export class JSONString extends JSONValue {
  constructor(public value: string) { super(JSONKind.STRING); }
}

/** An array of values. */
export class JSONArray extends JSONValue {
  constructor(public items: Array<JSONValue> = []) { super(JSONKind.ARRAY); }

  get length(): i32 { return this.items.length; }

  /** The element at `index`, or null when out of range. */
  get(index: i32): JSONValue | null {
    return index >= 0 && index < this.items.length ? this.items[index] : null;
  }

  /** The string at `index`, or null when absent or not a string. */
  getString(index: i32): string | null { return asString(this.get(index)); }
  /** The number at `index`, or `fallback` when absent or not a number. */
  getNumber(index: i32, fallback: f64 = NaN): f64 { return asNumber(this.get(index), fallback); }
  /** The safe integer at `index`, or `fallback` when absent, fractional or out of range. */
  getInteger(index: i32, fallback: i64 = 0): i64 { return asInteger(this.get(index), fallback); }
  /** The boolean at `index`, or `fallback` when absent or not a boolean. */
  getBool(index: i32, fallback: bool = false): bool { return asBool(this.get(index), fallback); }
  /** The object at `index`, or null. */
  getObject(index: i32): JSONObject | null { return asObject(this.get(index)); }
  /** The array at `index`, or null. */
  getArray(index: i32): JSONArray | null { return asArray(this.get(index)); }

  /** Appends a value; returns this array for chaining. */
  push(value: JSONValue): JSONArray { this.items.push(value); return this; }
  pushString(value: string): JSONArray { return this.push(new JSONString(value)); }
  pushNumber(value: f64): JSONArray { return this.push(new JSONNumber(value)); }
  pushInteger(value: i64): JSONArray { return this.push(new JSONNumber(<f64>value)); }
  pushBool(value: bool): JSONArray { return this.push(new JSONBool(value)); }
  pushNull(): JSONArray { return this.push(new JSONNull()); }
}

/** Objects with more keys than this get a hash index; smaller ones are searched linearly. */
const INDEX_THRESHOLD: i32 = 8;

/** An object: keys in insertion order; setting an existing key replaces its value in place. */
export class JSONObject extends JSONValue {
  private readonly names: Array<string> = [];
  private readonly values: Array<JSONValue> = [];
  // Built only for large objects: most tool inputs have a handful of keys, where a linear
  // scan is cheaper than hashing, and every allocation costs fuel.
  private index: Map<string, i32> | null = null;

  constructor() { super(JSONKind.OBJECT); }

  /** Number of keys. */
  get size(): i32 { return this.names.length; }

  /** The key at `position` in insertion order (0 <= position < size). */
  keyAt(position: i32): string { return this.names[position]; }

  /** The value at `position` in insertion order (0 <= position < size). */
  valueAt(position: i32): JSONValue { return this.values[position]; }

  /** The keys in insertion order (a copy). */
  keys(): Array<string> { return this.names.slice(0); }

  has(key: string): bool { return this.find(key) >= 0; }

  /** The value under `key`, or null when absent (a JSON null comes back as a JSONNull). */
  get(key: string): JSONValue | null {
    const position = this.find(key);
    return position >= 0 ? unchecked(this.values[position]) : null;
  }

  /** The string under `key`, or null when absent or not a string. */
  getString(key: string): string | null { return asString(this.get(key)); }
  /** The number under `key`, or `fallback` when absent or not a number. */
  getNumber(key: string, fallback: f64 = NaN): f64 { return asNumber(this.get(key), fallback); }
  /** The safe integer under `key`, or `fallback` when absent, fractional or beyond 2^53. */
  getInteger(key: string, fallback: i64 = 0): i64 { return asInteger(this.get(key), fallback); }
  /** The boolean under `key`, or `fallback` when absent or not a boolean. */
  getBool(key: string, fallback: bool = false): bool { return asBool(this.get(key), fallback); }
  /** The object under `key`, or null. */
  getObject(key: string): JSONObject | null { return asObject(this.get(key)); }
  /** The array under `key`, or null. */
  getArray(key: string): JSONArray | null { return asArray(this.get(key)); }

  /** Sets `key`; returns this object for chaining. */
  set(key: string, value: JSONValue): JSONObject {
    const position = this.find(key);
    if (position >= 0) {
      unchecked((this.values[position] = value));
      return this;
    }
    const names = this.names;
    names.push(key);
    this.values.push(value);
    let index = this.index;
    if (index !== null) {
      index.set(key, names.length - 1);
    } else if (names.length > INDEX_THRESHOLD) {
      index = new Map<string, i32>();
      for (let i = 0; i < names.length; i++) index.set(unchecked(names[i]), i);
      this.index = index;
    }
    return this;
  }
  setString(key: string, value: string): JSONObject { return this.set(key, new JSONString(value)); }
  setNumber(key: string, value: f64): JSONObject { return this.set(key, new JSONNumber(value)); }
  setInteger(key: string, value: i64): JSONObject { return this.set(key, new JSONNumber(<f64>value)); }
  setBool(key: string, value: bool): JSONObject { return this.set(key, new JSONBool(value)); }
  setNull(key: string): JSONObject { return this.set(key, new JSONNull()); }

  private find(key: string): i32 {
    const index = this.index;
    if (index !== null) return index.has(key) ? index.get(key) : -1;
    const names = this.names;
    for (let i = 0, n = names.length; i < n; i++) {
      if (unchecked(names[i]) == key) return i;
    }
    return -1;
  }
}

function asString(value: JSONValue | null): string | null {
  if (value === null || value.kind != JSONKind.STRING) return null;
  return changetype<JSONString>(value).value;
}

function asNumber(value: JSONValue | null, fallback: f64): f64 {
  if (value === null || value.kind != JSONKind.NUMBER) return fallback;
  return changetype<JSONNumber>(value).value;
}

function asInteger(value: JSONValue | null, fallback: i64): i64 {
  if (value === null || value.kind != JSONKind.NUMBER) return fallback;
  const number = changetype<JSONNumber>(value);
  return number.isSafeInteger ? <i64>number.value : fallback;
}

function asBool(value: JSONValue | null, fallback: bool): bool {
  if (value === null || value.kind != JSONKind.BOOL) return fallback;
  return changetype<JSONBool>(value).value;
}

function asObject(value: JSONValue | null): JSONObject | null {
  if (value === null || value.kind != JSONKind.OBJECT) return null;
  return changetype<JSONObject>(value);
}

function asArray(value: JSONValue | null): JSONArray | null {
  if (value === null || value.kind != JSONKind.ARRAY) return null;
  return changetype<JSONArray>(value);
}
