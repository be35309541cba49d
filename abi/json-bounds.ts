// The bounds of every JSON value entering the host (ABI-JSON-*), and the two checks that enforce
// them without recursing: a linear scan of JSON text and an iterative walk of a parsed value.
import { types } from 'node:util';

/**
 * Most levels of arrays and objects in a value (ABI-JSON-001): a tool's input, its output, a
 * capability call's args. A scalar has depth 0, `[]` and `{}` depth 1. Every recursive step the
 * host runs on a value (zod, Ajv, canonical JSON, secret scrubbing, the journal, structured
 * clone, msgpack) stays far inside Node's stack at this depth; they overflow at about 1,600.
 */
export const MAX_JSON_DEPTH = 64;

/** Largest integer magnitude a number may have (ABI-JSON-003): 2^53-1, the last exact double. */
export const MAX_JSON_INTEGER = Number.MAX_SAFE_INTEGER;

/** Pointers (and other text) in reports are cut to this many characters, ending in `…`. */
export const JSON_REPORT_MAX_CHARS = 512;

/**
 * What is wrong: `depth` (ABI-JSON-001), `number` (ABI-JSON-003), `key` (`__proto__`,
 * ABI-JSON-004), `string` (a lone surrogate, ABI-JSON-004), `value` (not JSON data at all, ABI-JSON-005).
 */
export type JsonViolationKind = 'depth' | 'number' | 'key' | 'string' | 'value';

/** The first violation in document order, with its RFC 6901 pointer from the checked root. */
export interface JsonViolation {
  readonly kind: JsonViolationKind;
  readonly pointer: string;
  /** What was found, phrased to follow "has": `the number 1e400, which is not finite`. */
  readonly problem: string;
}

/** Options of both checks. */
export interface JsonBoundsOptions {
  /** Default MAX_JSON_DEPTH. */
  readonly maxDepth?: number;
  /**
   * The root is an envelope (a request, a guest's output, a capability request): the bound is
   * on each of its members, so the document may nest one level more.
   */
  readonly envelope?: boolean;
}

function depthBound(options: JsonBoundsOptions): { limit: number; problem: string } {
  const max = options.maxDepth ?? MAX_JSON_DEPTH;
  return { limit: max + (options.envelope === true ? 1 : 0), problem: `arrays and objects nested deeper than ${max} levels` };
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Text quoted in a report: cut to JSON_REPORT_MAX_CHARS, lone surrogates as U+FFFD, so that a
 * report is itself within the bounds (a guest may echo its answer into its output).
 */
export function cutReportText(text: string): string {
  const short = text.length > JSON_REPORT_MAX_CHARS ? `${text.slice(0, JSON_REPORT_MAX_CHARS - 1)}…` : text;
  return (short as unknown as { toWellFormed(): string }).toWellFormed();
}

/** RFC 6901 pointer of a path (`~` as `~0`, `/` as `~1`), cut and made well-formed as `cut` does. */
export function jsonPointer(segments: Iterable<string | number>): string {
  let out = '';
  for (const s of segments) {
    out += `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (out.length > JSON_REPORT_MAX_CHARS) break;
  }
  return cutReportText(out);
}

/** The problem with a number, if any: not finite, or an integer beyond ±(2^53-1); `literal` as written. */
function numberProblem(n: number, literal?: string): string | undefined {
  if (Number.isNaN(n)) return 'NaN, which is not a JSON number';
  if (!Number.isFinite(n)) return `the number ${cutReportText(literal ?? String(n))}, which is not finite`;
  // Every double of magnitude 2^53 or more is an integer: this refuses all of them, 1e20 too.
  if (Number.isInteger(n) && !Number.isSafeInteger(n))
    return `the number ${cutReportText(literal ?? String(n))}, beyond ±${MAX_JSON_INTEGER} (2^53-1), where a double no longer keeps integers exact`;
  return undefined;
}

/** The problem with a member name, if any. */
function keyProblem(key: string): { kind: JsonViolationKind; problem: string } | undefined {
  if (key === '__proto__') return { kind: 'key', problem: 'the member name "__proto__", which JavaScript cannot carry as plain data' };
  if (!isWellFormed(key)) return { kind: 'string', problem: 'a member name with a lone surrogate, which is not Unicode text' };
  return undefined;
}

const STRING_PROBLEM = 'a string with a lone surrogate, which is not Unicode text';

/** One open array or object during a scan. */
interface ScanFrame {
  readonly array: boolean;
  index: number;
  key: string;
  expectKey: boolean;
}

/**
 * Scans JSON text left to right, once, keeping only the open containers: the first violation of
 * ABI-JSON-001, -003 or -004, or undefined. It does not check syntax: on text that is not JSON
 * it stops or reports what it saw, and JSON.parse (iterative in V8) reports the rest.
 */
export function scanJsonText(text: string, options: JsonBoundsOptions = {}): JsonViolation | undefined {
  const depth = depthBound(options);
  const frames: ScanFrame[] = [];
  const at = (extra?: string): string =>
    jsonPointer([...frames.map((f) => (f.array ? f.index : f.key)), ...(extra === undefined ? [] : [extra])]);
  const rawWellFormed = isWellFormed(text);
  let nextBackslash = text.indexOf('\\');
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      if (nextBackslash >= 0 && nextBackslash < i) nextBackslash = text.indexOf('\\', i);
      let value: string | undefined = text.slice(i + 1, end - 1);
      if (nextBackslash >= 0 && nextBackslash < end) value = decodeString(text.slice(i, end));
      if (value === undefined) return undefined;
      const top = frames[frames.length - 1];
      if (top !== undefined && !top.array && top.expectKey) {
        top.expectKey = false;
        top.key = value;
        const bad = keyProblem(value);
        if (bad !== undefined) return { ...bad, pointer: at() };
      } else if ((!rawWellFormed || value.length !== end - i - 2) && !isWellFormed(value)) {
        return { kind: 'string', pointer: at(), problem: STRING_PROBLEM };
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (frames.length >= depth.limit) return { kind: 'depth', pointer: at(), problem: depth.problem };
      frames.push({ array: c === 0x5b, index: 0, key: '', expectKey: c === 0x7b });
      i += 1;
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
      i += 1;
    } else if (c === 0x2c) {
      const top = frames[frames.length - 1];
      if (top?.array) top.index += 1;
      else if (top !== undefined) top.expectKey = true;
      i += 1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j += 1;
      const literal = text.slice(i, j);
      const value = Number(literal);
      // Not a number at all ("-", "1e") is a syntax error for JSON.parse; Number() also reads
      // some forms JSON does not ("01", "1."), which JSON.parse refuses after the scan.
      const problem = Number.isNaN(value) ? undefined : numberProblem(value, literal);
      if (problem !== undefined) return { kind: 'number', pointer: at(), problem };
      i = j;
    } else {
      i += 1;
    }
  }
  return undefined;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2b || c === 0x2d || c === 0x65 || c === 0x45;
}

/** Index just past the closing quote of the string literal opening at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let backslashes = 0;
    for (let b = q - 1; b > start && text.charCodeAt(b) === 0x5c; b -= 1) backslashes += 1;
    if (backslashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

function decodeString(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

/** An open array or object during a walk, and the member being visited in it. */
interface WalkFrame {
  readonly container: object;
  /** Own keys of an object; undefined for an array (its indices). */
  readonly keys: ReadonlyArray<string | symbol> | undefined;
  readonly length: number;
  /** Own keys beyond the indices and `length`: named properties, which JSON drops. */
  readonly extra: boolean;
  index: number;
  segment: string | number;
}

/**
 * Walks a parsed value without recursing: the first violation of ABI-JSON-001 to -005 in
 * document order, or undefined. Besides the bounds it refuses what is not JSON data (ABI-JSON-005):
 * BigInt, undefined, functions, symbols, objects that are not plain (Date, Map, class
 * instances), a Proxy, getters and setters, non-enumerable or symbol-keyed properties, holes
 * and named properties on arrays, cycles and objects reached twice (a tree may not share
 * nodes: a few shared arrays would stand for 2^64 of them). It keeps only the open containers
 * (at most the depth bound), reads each property once through its descriptor, and never
 * throws: an exception from reading the value is itself the violation.
 */
export function checkJsonValue(value: unknown, options: JsonBoundsOptions = {}): JsonViolation | undefined {
  const depth = depthBound(options);
  const frames: WalkFrame[] = [];
  const seen = new Set<object>();
  const at = (open = frames.length): string => jsonPointer(frames.slice(0, open).map((f) => f.segment));
  const notJson = (what: string, open?: number): JsonViolation => ({
    kind: 'value',
    pointer: at(open),
    problem: `${what}, which is not JSON data`,
  });

  /** Checks a value; an array or object becomes a new frame. */
  const enter = (v: unknown): JsonViolation | undefined => {
    switch (typeof v) {
      case 'string':
        return isWellFormed(v) ? undefined : { kind: 'string', pointer: at(), problem: STRING_PROBLEM };
      case 'number': {
        const problem = numberProblem(v);
        return problem === undefined ? undefined : { kind: 'number', pointer: at(), problem };
      }
      case 'boolean':
        return undefined;
      case 'object':
        if (v === null) return undefined;
        break;
      default:
        return notJson(typeof v === 'undefined' ? 'undefined' : `a ${typeof v === 'bigint' ? 'BigInt' : typeof v}`);
    }
    if (types.isProxy(v)) return notJson('a Proxy');
    if (seen.has(v)) {
      const ancestor = frames.findIndex((f) => f.container === v);
      return notJson(
        ancestor >= 0 ? `a cycle back to ${at(ancestor) || 'the root'}` : `an object also found at ${firstPointer(value, v) || 'the root'}`,
      );
    }
    if (frames.length >= depth.limit) return { kind: 'depth', pointer: at(), problem: depth.problem };
    seen.add(v);
    const keys = Reflect.ownKeys(v);
    if (Array.isArray(v)) {
      frames.push({ container: v, keys: undefined, length: v.length, extra: keys.length !== v.length + 1, index: 0, segment: 0 });
      return undefined;
    }
    const proto = Object.getPrototypeOf(v) as object | null;
    if (proto !== Object.prototype && proto !== null) {
      const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value as { name?: unknown } | undefined;
      return notJson(`a ${typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : 'non-plain object'}`);
    }
    frames.push({ container: v, keys, length: keys.length, extra: false, index: 0, segment: '' });
    return undefined;
  };

  try {
    const first = enter(value);
    if (first !== undefined) return first;
    while (frames.length > 0) {
      const f = frames[frames.length - 1]!;
      if (f.index >= f.length) {
        frames.pop();
        if (f.extra) return notJson('an array with named properties');
        continue;
      }
      const i = f.index;
      f.index += 1;
      let d: PropertyDescriptor | undefined;
      if (f.keys === undefined) {
        f.segment = i;
        d = Object.getOwnPropertyDescriptor(f.container, i);
        if (d === undefined) return notJson('a hole in an array');
      } else {
        const key = f.keys[i]!;
        if (typeof key === 'symbol') return notJson('an object with a symbol-keyed property', frames.length - 1);
        f.segment = key;
        const bad = keyProblem(key);
        if (bad !== undefined) return { ...bad, pointer: at() };
        d = Object.getOwnPropertyDescriptor(f.container, key)!;
        if (d.enumerable !== true) return notJson('a non-enumerable property');
      }
      if (!('value' in d)) return notJson('a getter or setter');
      const found = enter(d.value);
      if (found !== undefined) return found;
    }
  } catch (err) {
    return notJson(`a property that threw when read (${cutReportText(err instanceof Error ? err.message : String(err))})`);
  }
  return undefined;
}

/**
 * Where `target` first occurs in `root`, for the report of an object reached twice. Only the
 * part of `root` before the second occurrence is read, which the walk has found to be data.
 */
function firstPointer(root: unknown, target: object): string {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (value === target) return jsonPointer(path);
    if (typeof value !== 'object' || value === null) continue;
    const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((x, i) => [i, x]) : Object.entries(value);
    for (let e = entries.length - 1; e >= 0; e -= 1) stack.push({ value: entries[e]![1], path: [...path, entries[e]![0]] });
  }
  return '';
}
