import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { compileJsonSchema } from './json-schema.js';
import { bundleSchema } from './schema-bundle.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function files(tree: Record<string, unknown>): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  for (const [name, content] of Object.entries(tree)) {
    const file = path.join(t.dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  }
  return t.dir;
}

function validator(schema: Record<string, unknown>) {
  const c = compileJsonSchema(schema);
  if (!c.ok) throw new Error(c.problems.join('; '));
  return c.validate;
}

describe('bundleSchema', () => {
  it('inlines a root file ref and nested refs relative to each referencing file', () => {
    const dir = files({
      'schemas/input.json': { type: 'object', properties: { seq: { $ref: 'defs/sequence.json' } }, required: ['seq'] },
      'schemas/defs/sequence.json': { type: 'string', pattern: '^[ACGT]+$', maxLength: 10 },
    });
    const result = bundleSchema({ $ref: 'schemas/input.json' }, path.join(dir, 'tool.tool.yaml'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const validate = validator(result.schema);
    expect(validate({ seq: 'ACGT' })).toEqual([]);
    expect(validate({ seq: 'ACGU' })[0]?.path).toBe('/seq');
    expect(JSON.stringify(result.schema)).not.toContain('.json');
  });

  it('keeps internal refs of a referenced file working after the move', () => {
    const dir = files({
      'a.json': { type: 'object', properties: { n: { $ref: '#/$defs/small' } }, $defs: { small: { type: 'integer', maximum: 3 } } },
    });
    const result = bundleSchema({ type: 'object', properties: { a: { $ref: 'a.json' } } }, path.join(dir, 'm.tool.yaml'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const validate = validator(result.schema);
    expect(validate({ a: { n: 2 } })).toEqual([]);
    expect(validate({ a: { n: 9 } })).toHaveLength(1);
  });

  it('bundles cyclic refs between files once', () => {
    const dir = files({
      'node.json': { type: 'object', properties: { next: { $ref: 'node.json' }, v: { type: 'number' } } },
    });
    const result = bundleSchema({ $ref: 'node.json' }, path.join(dir, 'm.tool.yaml'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const validate = validator(result.schema);
    expect(validate({ v: 1, next: { v: 2, next: { v: 3 } } })).toEqual([]);
    expect(validate({ v: 1, next: { v: 'x' } })[0]?.path).toBe('/next/v');
  });

  it('reports a missing target, invalid JSON and a remote ref, each with its file', () => {
    const dir = files({ 'bad.json': '{ not json', 'ok.json': { type: 'object', properties: { x: { $ref: 'gone.json' } } } });
    const m = path.join(dir, 'm.tool.yaml');
    const missing = bundleSchema({ $ref: 'nope.json' }, m);
    expect(missing.ok || missing.problems[0]?.reason).toMatch(/does not exist/);
    const invalid = bundleSchema({ type: 'object', properties: { a: { $ref: 'bad.json' } } }, m);
    expect(invalid.ok || invalid.problems[0]).toMatchObject({
      file: path.join(dir, 'bad.json'),
      reason: expect.stringMatching(/not valid JSON/),
    });
    const nested = bundleSchema({ $ref: 'ok.json' }, m);
    expect(nested.ok || nested.problems[0]).toMatchObject({
      file: path.join(dir, 'ok.json'),
      reason: expect.stringMatching(/gone\.json does not exist/),
    });
    const remote = bundleSchema({ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, m);
    expect(remote.ok || remote.problems[0]?.reason).toMatch(/remote references are not allowed/);
  });
});

describe('compileJsonSchema', () => {
  it('refuses a schema with a bad type and one with an unknown keyword', () => {
    expect(compileJsonSchema({ type: 'strin' }).ok).toBe(false);
    expect(compileJsonSchema({ type: 'object', propertees: {} }).ok).toBe(false);
    expect(compileJsonSchema({ $schema: 'http://example.com/other', type: 'object' }).ok).toBe(false);
  });

  it('lists every violation, not just the first', () => {
    const v = validator({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'integer' } },
      required: ['a', 'b', 'c'],
      additionalProperties: false,
    });
    const out = v({ a: 1, b: 'x', d: true });
    expect(out.map((x) => x.keyword).sort()).toEqual(['additionalProperties', 'required', 'type', 'type']);
  });
});
