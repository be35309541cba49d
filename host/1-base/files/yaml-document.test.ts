// Unit tests of the bounded YAML and JSON document parsers: depth, aliases, size of the
// expansion, numbers and keys, each refusal with its line (ABI-FILE-007..009).
import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { DOCUMENT_MAX_DEPTH, YAML_MAX_ALIASES } from '../../../abi/index.js';
import { parseJsonText, type ParsedDocument } from './documents.js';
import { parseYamlText } from './yaml-document.js';

function problem(doc: ParsedDocument) {
  expect(doc.ok, 'expected a refusal').toBe(false);
  return doc.ok ? undefined : doc.problems[0];
}

/** A value nested `depth` levels of arrays/objects deep, alternating. */
function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
}

describe('parseYamlText', () => {
  it('accepts ordinary YAML and finds the line of a path', () => {
    const doc = parseYamlText('id: a.b\nlimits:\n  fuel: 10\nlist: [1, 2]\n');
    expect(doc.ok && doc.value).toEqual({ id: 'a.b', limits: { fuel: 10 }, list: [1, 2] });
    expect(doc.ok && doc.lineOf(['limits', 'fuel'])).toBe(3);
  });

  it('refuses a billion-laughs alias bomb with its line, before anything expands it (ABI-FILE-008)', () => {
    const rows = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      rows.push(
        `${'abcdefghi'[i]}: &${'abcdefghi'[i]} [${Array(9)
          .fill(`*${'abcdefghi'[i - 1]}`)
          .join(', ')}]`,
      );
    const p = problem(parseYamlText(rows.join('\n')));
    expect(p).toMatchObject({
      line: 3,
      path: ['c', 0],
      reason: expect.stringMatching(/alias \*b refers to a node that itself holds an alias.*ABI-FILE-008/),
    });
  });

  it(`refuses more than ${YAML_MAX_ALIASES} aliases, a self-reference and an alias with no anchor (ABI-FILE-008)`, () => {
    const many = `a: &a 1\nb: [${Array(YAML_MAX_ALIASES + 1)
      .fill('*a')
      .join(', ')}]\n`;
    expect(problem(parseYamlText(many))).toMatchObject({ line: 2, reason: expect.stringMatching(/more than 100 YAML aliases/) });
    expect(parseYamlText(`a: &a 1\nb: [${Array(YAML_MAX_ALIASES).fill('*a').join(', ')}]\n`).ok).toBe(true);
    expect(problem(parseYamlText('a: &a [1, *a]\n'))).toMatchObject({
      line: 1,
      reason: expect.stringMatching(/refers to a node that contains it/),
    });
    expect(problem(parseYamlText('a: 1\nb: *nope\n'))).toMatchObject({
      line: 2,
      reason: expect.stringMatching(/alias \*nope has no anchor/),
    });
  });

  it('refuses an expansion past the value bound (ABI-FILE-008)', () => {
    const big = `a: &a [${Array(20_000).fill('1').join(',')}]\nb: [${Array(60).fill('*a').join(',')}]\n`;
    expect(problem(parseYamlText(big))).toMatchObject({ line: 2, reason: expect.stringMatching(/more than 1000000 values/) });
  });

  it('refuses 100,000 levels of flow, block and compact nesting with a line, without overflowing (ABI-FILE-007)', () => {
    for (const text of [
      `a: ${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      `${'- '.repeat(100_000)}x`,
      `${Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} 1`,
    ]) {
      expect(problem(parseYamlText(text))).toMatchObject({
        reason: expect.stringMatching(/nested deeper than 64 levels.*ABI-FILE-007/),
        line: expect.any(Number),
      });
    }
  });

  it(`accepts ${DOCUMENT_MAX_DEPTH} levels and refuses ${DOCUMENT_MAX_DEPTH + 1}, also through an alias (ABI-FILE-007)`, () => {
    expect(parseYamlText(stringify(nested(DOCUMENT_MAX_DEPTH))).ok).toBe(true);
    expect(parseYamlText(stringify(nested(DOCUMENT_MAX_DEPTH + 1))).ok).toBe(false);
    const anchored = `a: &a ${JSON.stringify(nested(DOCUMENT_MAX_DEPTH - 2))}\nb: [*a]\n`;
    expect(parseYamlText(anchored).ok).toBe(true);
    expect(problem(parseYamlText(`a: &a ${JSON.stringify(nested(DOCUMENT_MAX_DEPTH - 1))}\nb: [[*a]]\n`))).toMatchObject({
      line: 2,
      reason: expect.stringMatching(/nested deeper/),
    });
  });

  it('property: any document yaml can write within the depth bound is accepted, and one level more refused', () => {
    const styles = fc.record({ indent: fc.integer({ min: 1, max: 4 }), indentSeq: fc.boolean(), flow: fc.boolean() });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: DOCUMENT_MAX_DEPTH + 1 }),
        styles,
        fc.integer({ min: 0, max: 2 }),
        fc.boolean(),
        (depth, style, shape, multiline) => {
          // Multi-line strings make yaml write block scalars, whose bodies must not count as structure.
          const z = multiline ? 'line one\n  - [not structure\n' : 2;
          let v: unknown = multiline ? 'a\nb\n' : 'leaf';
          for (let i = 0; i < depth; i++) v = (i + shape) % 3 === 0 ? [v, z] : (i + shape) % 3 === 1 ? { z, k: v } : [{ k: v }];
          const levels = Array.from({ length: depth }, (_, i) => ((i + shape) % 3 === 2 ? 2 : 1)).reduce((a, b) => a + b, 0);
          // lineWidth 0: yaml's folding of long quoted strings at deep indents writes text it cannot read back.
          const text = stringify(v, {
            indent: style.indent,
            indentSeq: style.indentSeq,
            collectionStyle: style.flow ? 'flow' : 'any',
            lineWidth: 0,
          });
          expect(parseYamlText(text).ok).toBe(levels <= DOCUMENT_MAX_DEPTH);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses deep nesting hidden between block scalars, which reset indentation (ABI-FILE-007)', () => {
    const rows: string[] = [];
    for (let i = 0; i < 300; i++) rows.push(`${' '.repeat(i)}k${i}:`, `${' '.repeat(i + 1)}s: |`, `${' '.repeat(i + 2)}text`);
    expect(problem(parseYamlText(`${rows.join('\n')} 1\n`))).toMatchObject({
      reason: expect.stringMatching(/nested deeper than 64 levels/),
    });
  });

  it('refuses .inf, -.inf and .nan with their line (ABI-FILE-009)', () => {
    for (const v of ['.inf', '-.Inf', '.nan']) {
      expect(problem(parseYamlText(`limits:\n  fuel: ${v}\n`))).toMatchObject({
        line: 2,
        path: ['limits', 'fuel'],
        reason: expect.stringMatching(/not a finite number.*ABI-FILE-009/),
      });
    }
  });

  it('reads YAML 1.1 documents by the 1.2 core schema: no dates, binary or sets (ABI-FILE-009)', () => {
    const doc = parseYamlText('%YAML 1.1\n---\nwhen: 2001-12-14\nbin: !!binary aGk=\n');
    expect(doc.ok && doc.value).toEqual({ when: '2001-12-14', bin: 'aGk=' });
  });

  it('refuses an explicit !!set, !!omap or !!pairs, which yaml resolves even under the core schema, with its line (ABI-FILE-009)', () => {
    // A set once passed as a JS Set: a schema's `properties: !!set {a}` became an object with no keys.
    expect(problem(parseYamlText('type: object\nproperties: !!set {secret, token}\n'))).toMatchObject({
      line: 2,
      path: ['properties'],
      reason: expect.stringMatching(/YAML set \(!!set\), which JSON cannot represent \(ABI-FILE-009\)/),
    });
    expect(problem(parseYamlText('a:\n  b: !!set\n    ? x\n'))).toMatchObject({ line: 3, path: ['a', 'b'] });
    expect(problem(parseYamlText('o: !!omap [a: 1]\n'))).toMatchObject({ path: ['o'], reason: expect.stringMatching(/ordered map/) });
    expect(problem(parseYamlText('p: !!pairs [a: 1]\n'))).toMatchObject({ path: ['p'], reason: expect.stringMatching(/list of pairs/) });
    expect(parseYamlText('m: !!map {a: 1}\ns: !!seq [1]\n')).toMatchObject({ ok: true, value: { m: { a: 1 }, s: [1] } });
  });

  it('refuses collection keys and reports YAML syntax errors with their line', () => {
    expect(problem(parseYamlText('? [a, b]\n: 1\n'))).toMatchObject({
      line: 1,
      reason: expect.stringMatching(/key must be a plain scalar/),
    });
    expect(problem(parseYamlText('a: 1\na: 2\n'))).toMatchObject({ line: 2, reason: expect.stringMatching(/invalid YAML/) });
  });
});

describe('parseJsonText', () => {
  it('refuses deep JSON by its text, ignoring brackets inside strings (ABI-FILE-007)', () => {
    expect(problem(parseJsonText(`{\n"a":\n${'['.repeat(100_000)}${']'.repeat(100_000)}}`))).toMatchObject({
      line: 3,
      reason: expect.stringMatching(/nested deeper than 64/),
    });
    expect(parseJsonText(JSON.stringify({ s: '['.repeat(500), t: 'a\\"[[[' })).ok).toBe(true);
    expect(parseJsonText(JSON.stringify(nested(DOCUMENT_MAX_DEPTH))).ok).toBe(true);
    expect(parseJsonText(JSON.stringify(nested(DOCUMENT_MAX_DEPTH + 1))).ok).toBe(false);
  });

  it('refuses a number that reads as infinity, naming its path and line (ABI-FILE-009)', () => {
    expect(problem(parseJsonText('{\n  "type": "number",\n  "maximum": 1e400\n}'))).toMatchObject({
      path: ['maximum'],
      line: 3,
      reason: expect.stringMatching(/infinity/),
    });
  });

  it('reports invalid JSON as not valid JSON', () => {
    expect(problem(parseJsonText('{ "a": }'))?.reason).toMatch(/^not valid JSON/);
  });
});
