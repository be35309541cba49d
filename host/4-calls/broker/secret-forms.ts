// The forms a secret's value commonly takes on its way into a string or a file: raw, JSON-escaped,
// base64 (standard and URL-safe, at each byte alignment), hex and percent-encoded (ABI-SECRET-002).
// The guard looks for every form; anything else (a reversed, XORed or split value) it cannot see.

/** One form of a secret: how it was encoded, and the text that encoding produces. */
export interface SecretForm {
  readonly encoding: string;
  readonly text: string;
}

/**
 * Secrets shorter than this many bytes are looked for raw only: their encoded forms would be a
 * few characters, which turn up by chance in any base64 or hex data and would refuse innocent
 * writes.
 */
export const MIN_ENCODED_SECRET_BYTES = 6;

/**
 * The base64 characters that depend on the secret's bytes alone when it starts `align` bytes
 * (0, 1 or 2) past a 3-byte group boundary of a longer stream: the characters that also hold bits
 * of the neighbouring bytes, and any padding, are left out, so the text is found whatever
 * surrounds the secret, padded or not.
 */
export function base64Core(bytes: Uint8Array, align: 0 | 1 | 2): string {
  const text = Buffer.concat([Buffer.alloc(align), bytes]).toString('base64');
  const first = Math.ceil((8 * align) / 6);
  const end = Math.floor((8 * (align + bytes.length)) / 6);
  return text.slice(first, end);
}

const urlSafe = (b64: string): string => b64.replace(/\+/g, '-').replace(/\//g, '_');
const lowerEscapes = (s: string): string => s.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase());

/** JSON string escaping with every non-ASCII character as \uXXXX (Python's json.dumps default). */
function jsonAscii(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Every byte as %XX. */
function percentAll(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/**
 * The distinct forms of `value`, longest first (so a redaction replaces a long form before a
 * shorter one that is part of it). Empty for an empty value.
 */
export function secretForms(value: string): SecretForm[] {
  if (value === '') return [];
  const bytes = Buffer.from(value, 'utf8');
  const forms: SecretForm[] = [{ encoding: 'raw', text: value }];
  if (bytes.length >= MIN_ENCODED_SECRET_BYTES) {
    forms.push({ encoding: 'json', text: JSON.stringify(value).slice(1, -1) }, { encoding: 'json-ascii', text: jsonAscii(value) });
    for (const align of [0, 1, 2] as const) {
      const core = base64Core(bytes, align);
      forms.push({ encoding: `base64@${align}`, text: core }, { encoding: `base64url@${align}`, text: urlSafe(core) });
    }
    const hex = bytes.toString('hex');
    forms.push({ encoding: 'hex', text: hex }, { encoding: 'hex-upper', text: hex.toUpperCase() });
    const component = encodeURIComponent(value);
    forms.push(
      { encoding: 'percent', text: component },
      { encoding: 'percent-lower', text: lowerEscapes(component) },
      { encoding: 'form', text: new URLSearchParams({ v: value }).toString().slice(2) },
      { encoding: 'percent-all', text: percentAll(bytes) },
      { encoding: 'percent-all-lower', text: percentAll(bytes).toLowerCase() },
    );
  }
  const seen = new Set<string>();
  const distinct = forms.filter((f) => {
    if (seen.has(f.text)) return false;
    seen.add(f.text);
    return true;
  });
  return distinct.sort((a, b) => b.text.length - a.text.length);
}
