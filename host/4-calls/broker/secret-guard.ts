// The secret guard of one run: it learns each secret value the run receives and then finds or
// redacts every form of it (secret-forms.ts) in text, JSON values (keys too) and bytes, and
// applies the policy's rule for a write path: refuse with A-AUTH-SECRET-WRITE, or redact.
import type { SecretWriteAction } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';
import type { SecretWriteRules } from '../policy/rules.js';
import { secretForms } from './secret-forms.js';

/** Where a secret was found: which secret, in which form, and (for JSON values) at which path. */
export interface SecretHit {
  readonly secret: string;
  readonly encoding: string;
  readonly path?: string;
}

/** A write path the policy rules: kv, artifacts, log or output. */
export type SecretWritePath = keyof SecretWriteRules;

interface Needle {
  readonly secret: string;
  readonly encoding: string;
  readonly text: string;
  readonly bytes: Buffer;
  readonly marker: string;
  readonly markerBytes: Buffer;
}

const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Finds and redacts the values of the secrets a run received. */
export class SecretGuard {
  #needles: Needle[] = [];
  readonly #names = new Set<string>();

  constructor(readonly rules: SecretWriteRules) {}

  /** Remembers a secret the run received; from now on its forms are looked for everywhere. */
  add(name: string, value: string): void {
    if (this.#names.has(name)) return;
    this.#names.add(name);
    const known = new Set(this.#needles.map((n) => n.text));
    const marker = `[secret:${name}]`;
    for (const f of secretForms(value)) {
      if (known.has(f.text)) continue;
      this.#needles.push({
        secret: name,
        encoding: f.encoding,
        text: f.text,
        bytes: Buffer.from(f.text, 'utf8'),
        marker,
        markerBytes: Buffer.from(marker, 'utf8'),
      });
    }
    // Longest first: a long form is replaced before a shorter one inside it could split it.
    this.#needles.sort((a, b) => b.bytes.length - a.bytes.length);
  }

  /** Whether the run has received a secret. */
  get active(): boolean {
    return this.#names.size > 0;
  }

  /** The longest form in bytes: a stream must hold back one byte less to see a form across pieces. */
  get longestForm(): number {
    return this.#needles[0]?.bytes.length ?? 0;
  }

  /** The first form found in `text`. */
  findInText(text: string): SecretHit | undefined {
    const n = this.#needles.find((x) => text.includes(x.text));
    return n === undefined ? undefined : { secret: n.secret, encoding: n.encoding };
  }

  /** `text` with every form replaced by `[secret:<name>]`. */
  redactText(text: string): string {
    let s = text;
    for (const n of this.#needles) if (s.includes(n.text)) s = s.split(n.text).join(n.marker);
    return s;
  }

  /** The first form found in `bytes` (as UTF-8). */
  findInBytes(bytes: Uint8Array): SecretHit | undefined {
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    const n = this.#needles.find((x) => buf.includes(x.bytes));
    return n === undefined ? undefined : { secret: n.secret, encoding: n.encoding };
  }

  /** `bytes` with every form replaced by the UTF-8 of `[secret:<name>]`. */
  redactBytes(bytes: Uint8Array): Buffer {
    let buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    for (const n of this.#needles) {
      let at = buf.indexOf(n.bytes);
      if (at < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      for (; at >= 0; at = buf.indexOf(n.bytes, from)) {
        parts.push(buf.subarray(from, at), n.markerBytes);
        from = at + n.bytes.length;
      }
      parts.push(buf.subarray(from));
      buf = Buffer.concat(parts);
    }
    return buf;
  }

  /** The first form in a JSON value's strings or object keys, with its JSON Pointer (keys in it redacted). */
  findInJson(value: unknown, path = ''): SecretHit | undefined {
    if (this.#needles.length === 0) return undefined;
    if (typeof value === 'string') {
      const hit = this.findInText(value);
      return hit === undefined ? undefined : { ...hit, path: path === '' ? '/' : path };
    }
    if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) {
        const hit = this.findInJson(v, `${path}/${i}`);
        if (hit !== undefined) return hit;
      }
      return undefined;
    }
    if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        const at = `${path}/${pointerToken(this.redactText(k))}`;
        const hit = this.findInText(k);
        if (hit !== undefined) return { ...hit, path: at };
        const inner = this.findInJson(v, at);
        if (inner !== undefined) return inner;
      }
    }
    return undefined;
  }

  /**
   * A JSON value with every form redacted, in strings and object keys alike: for values a guest
   * made. A record of the host's own keeps its field names (a short secret could match one), so
   * it redacts field by field (redactError, the broker's records).
   */
  redactJson<T>(value: T): T {
    if (this.#needles.length === 0) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redactText(v);
      if (Array.isArray(v)) return v.map(walk);
      if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [this.redactText(k), walk(x)]));
      return v;
    };
    return walk(value) as T;
  }

  /** A wire error with its texts and details redacted; its own field names are kept. */
  redactError<E extends { code: string; message: string; details: Record<string, unknown>; hint?: string }>(error: E): E {
    if (this.#needles.length === 0) return error;
    const { code, message, details, hint } = error;
    return {
      ...error,
      code: this.redactText(code),
      message: this.redactText(message),
      details: this.redactJson(details),
      ...(hint === undefined ? {} : { hint: this.redactText(hint) }),
    };
  }

  /**
   * What may be written of `value` on `path` under the policy's rule: the value itself when it
   * carries no secret, else the value redacted, or an A-AUTH-SECRET-WRITE refusal naming `where`
   * (the capability) and the place in its arguments (`at`, a JSON Pointer) the secret was found.
   */
  admitJson<T>(path: SecretWritePath, value: T, where: string, at: string): T {
    const hit = this.findInJson(value, at);
    if (hit === undefined) return value;
    if (this.rules[path] === 'redact') return this.redactJson(value);
    throw secretRefusal(hit, where, path);
  }
}

/**
 * The refusal of a write that carries a secret: names the secret, the form, the capability (or
 * `output`) and the place, never the value.
 */
export function secretRefusal(hit: SecretHit, where: string, path: SecretWritePath, extra: Record<string, unknown> = {}): HelixError {
  const at = hit.path === undefined ? '' : ` at ${hit.path}`;
  return new HelixError('A-AUTH-SECRET-WRITE', {
    message: `${where}: the data${at} carries the value of secret "${hit.secret}" (${hit.encoding}); the policy refuses to store it (secretWrites.${path}: refuse).`,
    details: {
      secret: hit.secret,
      encoding: hit.encoding,
      where,
      ...(hit.path === undefined ? {} : { path: hit.path }),
      rule: `secretWrites.${path}`,
      ...extra,
    },
  });
}

/**
 * Checks a stream of pieces for forms that may straddle two of them: each piece is looked at
 * together with the bytes held back from the one before, and the last (longest form - 1) bytes
 * are held back again until the next piece or the end (ABI-SECRET-004). A clean piece is not
 * copied: only the junction of the held bytes and the piece's head is searched as new bytes.
 */
export class GuardedStream {
  #held: Buffer = Buffer.alloc(0);

  constructor(
    private readonly guard: SecretGuard,
    private readonly action: SecretWriteAction,
  ) {}

  /** The bytes that may be passed on now, in order (all of them at the end), or where a refused form was found. */
  next(piece: Uint8Array, final: boolean): { pieces: Uint8Array[] } | { hit: SecretHit } {
    const held = this.#held;
    if (!this.guard.active && held.length === 0) return { pieces: [piece] };
    const p = Buffer.from(piece.buffer, piece.byteOffset, piece.length);
    const span = Math.max(0, this.guard.longestForm - 1);
    // A form that is not inside the piece starts in the held bytes and ends in the piece's head.
    const hit =
      (held.length === 0 ? undefined : this.guard.findInBytes(Buffer.concat([held, p.subarray(0, span)]))) ?? this.guard.findInBytes(p);
    if (hit !== undefined && this.action === 'refuse') return { hit };
    const keep = final ? 0 : span;
    if (hit === undefined && p.length >= keep) {
      this.#held = Buffer.from(p.subarray(p.length - keep));
      return { pieces: [held, p.subarray(0, p.length - keep)] };
    }
    const whole = hit === undefined ? Buffer.concat([held, p]) : this.guard.redactBytes(Buffer.concat([held, p]));
    const cut = Math.max(0, whole.length - keep);
    this.#held = Buffer.from(whole.subarray(cut));
    return { pieces: [whole.subarray(0, cut)] };
  }
}
