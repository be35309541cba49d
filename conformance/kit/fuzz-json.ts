// Random JSON values and their mutations for the fuzz generators: small values of every kind
// with odd strings and numbers at the schemas' edges, structural mutations (a member deleted, set
// to a random value, or added beside), and byte mutations of a text (flipped, inserted, deleted,
// cut, a byte that is never UTF-8). The JSON bounds' own arbitraries (deep, huge) are
// test/helpers/json-arbitraries.ts; these are about shapes, not bounds.
import type { Rand } from './fuzz-random.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const LOWER = 'abcdefghijklmnopqrstuvwxyz';

/** A member name: mostly an identifier, sometimes odd. */
export function randomKey(r: Rand): string {
  return r.chance(0.85)
    ? r.chars(LOWER, 1) + r.chars(`${LOWER}_0123456789`, r.int(0, 5))
    : r.pick(['', ' ', 'constructor', 'toString', 'a.b', '0', '😀', 'é']);
}

/** A random JSON value (small; `depth` levels of arrays and objects at most). */
export function randomJson(r: Rand, depth = 2): Json {
  const leaves: (() => Json)[] = [
    () => null,
    () => r.chance(0.5),
    () => r.int(-1e6, 1e6),
    () => r.pick([0, -1, 1.5, 1e300, -0, 2 ** 53 - 1, 65_537, 86_400_001, 1_048_577]),
    () => r.chars(`${LOWER}ABC.:/-_ 0123456789`, r.int(0, 12)),
    () =>
      r.pick([
        '',
        'helix/v1',
        'extism/v1',
        'sha256:',
        '1.0.0',
        'v1',
        'log',
        '~',
        'null',
        'yes',
        '0x10',
        'é',
        '😀',
        '\u0000',
        'x'.repeat(300),
      ]),
  ];
  if (depth <= 0 || r.chance(0.6)) return r.pick(leaves)();
  if (r.chance(0.5)) return Array.from({ length: r.int(0, 3) }, () => randomJson(r, depth - 1));
  return Object.fromEntries(Array.from({ length: r.int(0, 3) }, () => [randomKey(r), randomJson(r, depth - 1)]));
}

/** A random JSON object. */
export function randomObject(r: Rand, depth = 2): { [k: string]: Json } {
  return Object.fromEntries(Array.from({ length: r.int(0, 3) }, () => [randomKey(r), randomJson(r, depth - 1)]));
}

/** `value` with one member (at any depth up to 4) deleted, set to a random value, or a random member added beside it. */
export function mutateJson(r: Rand, value: Json): { value: Json; what: string } {
  const root = structuredClone(value);
  const paths: string[][] = [];
  const walk = (v: Json, at: string[]): void => {
    paths.push(at);
    if (typeof v === 'object' && v !== null && at.length < 4) for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(root, []);
  if (paths.length === 1) return { value: randomJson(r), what: 'replaced the whole value' };
  const at = r.pick(paths.slice(1));
  // The member's parent: an object or an array of the clone, reached by the path's keys.
  const parent = at.slice(0, -1).reduce<Record<string, Json>>((o, k) => o[k] as Record<string, Json>, root as Record<string, Json>);
  const key = at[at.length - 1]!;
  const op = r.int(0, 2);
  if (op === 0) {
    if (Array.isArray(parent)) (parent as Json[]).splice(Number(key), 1);
    else delete parent[key];
  } else if (op === 1) parent[key] = randomJson(r);
  else if (Array.isArray(parent)) (parent as Json[]).push(randomJson(r));
  else parent[randomKey(r)] = randomJson(r);
  return { value: root, what: `${['deleted', 'set', 'added beside'][op]} /${at.join('/')}` };
}

/** `bytes` with 1 to 3 byte edits: a byte flipped, inserted (sometimes 0xff, never UTF-8), deleted, or the text cut. */
export function mutateBytes(r: Rand, bytes: Uint8Array): { bytes: Uint8Array; what: string } {
  let b = Array.from(bytes);
  const edits: string[] = [];
  for (let n = r.int(1, 3); n > 0; n -= 1) {
    const at = r.int(0, b.length);
    switch (r.int(0, 3)) {
      case 0:
        if (at < b.length) {
          const bit = 1 << r.int(0, 7);
          b[at] = b[at]! ^ bit;
          edits.push(`flipped bit ${bit} of byte ${at}`);
        }
        break;
      case 1: {
        const v = r.chance(0.3) ? 0xff : r.pick([0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x5c, 0x00, 0x0a, 0xc3, 0xed, r.int(0, 255)]);
        b.splice(at, 0, v);
        edits.push(`inserted 0x${v.toString(16)} at ${at}`);
        break;
      }
      case 2:
        b.splice(at, r.int(1, 4));
        edits.push(`deleted bytes at ${at}`);
        break;
      default:
        b = b.slice(0, at);
        edits.push(`cut at ${at}`);
    }
  }
  return { bytes: new Uint8Array(b), what: edits.join('; ') };
}
