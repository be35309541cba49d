// fast-check arbitraries of odd JSON text for the JSON-bounds properties (ABI-JSON-*): documents as
// trees whose number literals stay as written (1e400 has no JavaScript value), nested around the
// depth bound, with huge and unsafe numbers, long strings, lone surrogates and odd member names.
import fc from 'fast-check';

/** A JSON document as a tree; `n` is a number literal as written. */
export type Doc = { n: string } | { s: string } | { a: Doc[] } | { o: Array<[string, Doc]> };

/** Runs of each property: HELIX_FUZZ_RUNS when set (`npm run fuzz`), else the CI default. */
export function fuzzRuns(ciDefault: number): number {
  const n = Number(process.env.HELIX_FUZZ_RUNS);
  return Number.isInteger(n) && n > 0 ? n : ciDefault;
}

const oddStrings = fc.constantFrom(
  '',
  '__proto__',
  'constructor',
  'toString',
  'a/b',
  '~1',
  '\ud800',
  'x\udfff',
  '😀',
  '"\\[{',
  '\u0000',
  '\u2028',
);
const numbers = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.constantFrom(
    '1e400',
    '-1e400',
    '9007199254740993',
    '9007199254740992',
    '9007199254740991',
    '-9007199254740991',
    '1e-400',
    '-0',
    '0.1',
    '18446744073709551615',
    '1.5e300',
  ),
);
const strings = fc.oneof(
  fc.string(),
  oddStrings,
  fc.integer({ min: 1000, max: 60_000 }).map((n) => 'x'.repeat(n)),
);
/** Member names; integer-like names are left out, since JSON.parse moves them first. */
const names = fc.oneof(fc.string(), oddStrings).filter((k) => !/^(0|[1-9]\d*)$/.test(k));

/** Small documents of every kind, members unique per object. */
export const smallDoc: fc.Arbitrary<Doc> = fc.letrec<{ doc: Doc }>((tie) => ({
  doc: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numbers.map((n) => ({ n })),
    strings.map((s) => ({ s })),
    fc.array(tie('doc'), { maxLength: 4 }).map((a) => ({ a })),
    fc.uniqueArray(fc.tuple(names, tie('doc')), { maxLength: 4, selector: ([k]) => k }).map((o) => ({ o })),
  ),
})).doc;

/**
 * JSON text: a small document, mostly as it is, often inside a few levels either side of the
 * bound of 64 arrays or one-member objects, sometimes thousands of levels deep.
 */
export const jsonText: fc.Arbitrary<string> = fc
  .tuple(smallDoc, fc.oneof(fc.constant(0), fc.integer({ min: 58, max: 70 }), fc.integer({ min: 1000, max: 5000 })), fc.boolean())
  .map(([d, depth, asObject]) =>
    asObject ? `${'{"k":'.repeat(depth)}${writeDoc(d)}${'}'.repeat(depth)}` : `${'['.repeat(depth)}${writeDoc(d)}${']'.repeat(depth)}`,
  );

/** The document's text (strings through JSON.stringify, which escapes lone surrogates). */
export function writeDoc(d: Doc): string {
  if ('n' in d) return d.n;
  if ('s' in d) return JSON.stringify(d.s);
  if ('a' in d) return `[${d.a.map(writeDoc).join(',')}]`;
  return `{${d.o.map(([k, v]) => `${JSON.stringify(k)}:${writeDoc(v)}`).join(',')}}`;
}

/** Text as UTF-8 bytes, sometimes damaged: a byte that is never UTF-8, or cut short. */
export const bytesOf = (text: string): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(new TextEncoder().encode(text)) },
    { weight: 1, arbitrary: fc.nat().map((at) => spliceByte(new TextEncoder().encode(text), at)) },
    { weight: 1, arbitrary: fc.nat().map((at) => new TextEncoder().encode(text).subarray(0, at % (text.length + 1))) },
  );

function spliceByte(bytes: Uint8Array, at: number): Uint8Array {
  const i = at % (bytes.length + 1);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes.subarray(0, i));
  out[i] = 0xff;
  out.set(bytes.subarray(i), i + 1);
  return out;
}
