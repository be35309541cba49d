// What can be told about a stdin frame too large to parse: a scan of its top-level object as it
// streams past, in constant memory, for the members that decide the reply (id, method, result).
import { RequestIdSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What a frame's top-level members say about it, without parsing it. */
export interface FrameHead {
  /** The top-level `id` when it is a valid JSON-RPC id (a string or an integer); else undefined. */
  readonly id: RequestId | undefined;
  /** Whether the frame has a top-level `id` member at all (valid or not). */
  readonly hasId: boolean;
  readonly hasMethod: boolean;
  /** Whether the frame has a top-level `result` or `error` member: a response, never answered. */
  readonly hasResult: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longest id (as JSON text) worth keeping; a longer one is treated as unreadable. */
const MAX_ID_TEXT = 1024;
/** Longest member name worth keeping: only id, method, result and error matter. */
const MAX_KEY_TEXT = 16;

// Where the next byte that matters can be, by state; everything between is skipped natively.
/** Inside a string: its end or an escape. */
const IN_STRING = /["\\]/g;
/** Inside a nested value: structure only. */
const NESTED = /["{}[\]]/g;
/** In the top-level object: structure, and the separators of its members. */
const TOP = /["{}[\]:,]/g;
/** Before the first value. */
const NOT_SPACE = /[^ \t\r\n]/g;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;

/**
 * Scans the bytes of one frame as they stream past and keeps only its top-level member names and
 * the text of its `id`. Strings and nesting are tracked so that an `"id"` inside params or inside
 * a string is never mistaken for the frame's own. The scan never throws: bytes that are not JSON
 * leave the head as far as it got.
 */
export class FrameHeadScanner {
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Whether the outermost value is an object (a batch array or a scalar has no members). */
  #topIsObject: boolean | undefined;
  /** At depth 1: true while a member name is expected, false while its value is. */
  #expectKey = false;
  #key: number[] = [];
  #lastKey = '';
  /** The id value's text while it is read (undefined when not reading it). */
  #idText: number[] | undefined;
  #head = { id: undefined as RequestId | undefined, hasId: false, hasMethod: false, hasResult: false };

  /** Feeds the next bytes of the frame. */
  feed(bytes: Uint8Array): void {
    if (this.#notAnObject()) return;
    // Latin-1 maps each byte to one char, so a native regex search jumps over the bulk of a
    // frame (string contents, nested values) instead of a loop touching every byte.
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let i = 0;
    while (i < text.length) {
      const skip = this.#skipper();
      if (skip !== undefined) {
        skip.lastIndex = i;
        const found = skip.exec(text);
        if (found === null) return;
        i = found.index;
      }
      this.#step(text.charCodeAt(i));
      i += 1;
      if (this.#notAnObject()) return;
    }
  }

  /** A batch array or a scalar: it has no members to find. */
  #notAnObject(): boolean {
    return this.#topIsObject === false;
  }

  /** The head as scanned so far (a frame cut short keeps what was seen). */
  result(): FrameHead {
    this.#endIdValue();
    return { ...this.#head };
  }

  /** The search that finds the next byte that matters, or undefined when every byte does. */
  #skipper(): RegExp | undefined {
    if (this.#escaped) return undefined;
    if (this.#inString) {
      const inKey = this.#depth === 1 && this.#expectKey && this.#key.length <= MAX_KEY_TEXT;
      return inKey || this.#idText !== undefined ? undefined : IN_STRING;
    }
    if (this.#topIsObject === undefined) return NOT_SPACE;
    if (this.#idText !== undefined) return undefined;
    return this.#depth >= 2 ? NESTED : TOP;
  }

  #step(b: number): void {
    if (this.#inString) {
      this.#stringByte(b);
      return;
    }
    // A number id ends at the first byte that cannot continue it.
    if (this.#idText !== undefined && this.#idText.length > 0 && (b === 0x2c || b === 0x7d || isSpace(b))) this.#endIdValue();
    if (isSpace(b)) return;
    if (this.#topIsObject === undefined) this.#topIsObject = b === 0x7b;
    if (!this.#topIsObject) return;
    switch (b) {
      case QUOTE:
        this.#inString = true;
        if (this.#depth === 1 && this.#expectKey) this.#key = [];
        else if (this.#idText !== undefined) this.#keepIdByte(b);
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.#idText = undefined;
        this.#depth += 1;
        if (this.#depth === 1) this.#expectKey = true;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        this.#depth -= 1;
        return;
      case 0x3a: // :
        if (this.#depth === 1) this.#startValue();
        return;
      case 0x2c: // ,
        if (this.#depth === 1) this.#expectKey = true;
        return;
      default:
        if (this.#idText !== undefined) this.#keepIdByte(b);
    }
  }

  #stringByte(b: number): void {
    const inKey = this.#depth === 1 && this.#expectKey;
    if (this.#escaped) this.#escaped = false;
    else if (b === BACKSLASH) this.#escaped = true;
    else if (b === QUOTE) {
      this.#inString = false;
      if (inKey) this.#lastKey = this.#keyText();
      else if (this.#idText !== undefined) {
        this.#keepIdByte(b);
        this.#endIdValue();
      }
      return;
    }
    if (inKey) {
      if (this.#key.length <= MAX_KEY_TEXT) this.#key.push(b);
    } else if (this.#idText !== undefined) this.#keepIdByte(b);
  }

  /** The member name just read; an escaped name (`"\u0069d"`) is decoded as JSON would. */
  #keyText(): string {
    if (this.#key.length > MAX_KEY_TEXT) return '';
    const raw = Buffer.from(this.#key).toString('utf8');
    if (!raw.includes('\\')) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return '';
    }
  }

  #startValue(): void {
    this.#expectKey = false;
    const key = this.#lastKey;
    this.#lastKey = '';
    if (key === 'method') this.#head.hasMethod = true;
    else if (key === 'result' || key === 'error') this.#head.hasResult = true;
    else if (key === 'id') {
      // A later duplicate wins, as in JSON.parse.
      this.#head.hasId = true;
      this.#head.id = undefined;
      this.#idText = [];
    }
  }

  #keepIdByte(b: number): void {
    if (this.#idText!.length < MAX_ID_TEXT) this.#idText!.push(b);
    else this.#idText = undefined;
  }

  #endIdValue(): void {
    const text = this.#idText;
    if (text === undefined) return;
    this.#idText = undefined;
    if (text.length === 0) return;
    try {
      const parsed = RequestIdSchema.safeParse(JSON.parse(Buffer.from(text).toString('utf8')));
      if (parsed.success) this.#head.id = parsed.data;
    } catch {
      // Not a JSON scalar: the id stays unreadable.
    }
  }
}
