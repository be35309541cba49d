// Canonical JSON (RFC 8785, via the `canonicalize` package) and sha256 helpers: the basis of
// every hash the host records (policy hash, module digests).
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

/** RFC 8785 canonical JSON of a JSON value. Throws on values JSON cannot carry. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no canonical JSON form');
  return text;
}

/** `sha256:<hex>` of bytes or a UTF-8 string. */
export function sha256Digest(data: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}
