// What an author reads when a pack's schema is wrong, or a call's input breaks it: each problem
// at its file, line and JSON pointer, in words rather than Ajv's own text.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PolicySchema } from '../../../abi/index.js';
import { echoModule } from '../../../test/helpers/guest-wat.js';
import { toolpacksDir } from '../../../test/helpers/toolpack.js';
import { compileJsonSchema } from './json-schema.js';
import { loadToolpacks } from './load-toolpacks.js';
import { formatViolation } from '../../1-base/files/violation.js';

const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const TYPES = 'one of: array, boolean, integer, null, number, object, string';

/** Loads one pack whose inputSchema is `schemas/input.json` with `text`; returns the violation lines. */
async function linesFor(
  text: string,
  extra: Record<string, string> = {},
  inputSchema: unknown = { $ref: 'schemas/input.json' },
): Promise<string[]> {
  const p = await toolpacksDir([{ id: 'x.tool', module: echoModule(), inputSchema }]);
  cleanups.push(p.cleanup);
  const dir = path.join(p.dir, 'x.tool');
  for (const [name, content] of Object.entries({ 'schemas/input.json': text, ...extra })) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return (await loadToolpacks(p.dir, policy)).violations.map(formatViolation).map((line) => line.replace(`${dir}/`, ''));
}

const INPUT = `{
  "type": "object",
  "properties": {
    "sequence": { "type": "strin" },
    "k": { "type": "integer", "minimun": 1 },
    "mode": { "$ref": "#/$defs/mod" }
  },
  "$defs": { "mode": { "enum": ["a", "b"] } }
}
`;

describe('a schema file that is not a valid JSON Schema', () => {
  it('names the file, the line and the JSON pointer of a misspelt type, in words', async () => {
    const lines = await linesFor(INPUT.replace('"minimun"', '"minimum"').replace('#/$defs/mod"', '#/$defs/mode"'));
    expect(lines).toEqual([
      `schemas/input.json:4: /properties/sequence/type: not a valid JSON Schema: "strin" is not a JSON Schema type (${TYPES})`,
    ]);
  });

  it('names an unknown keyword with the keyword it resembles', async () => {
    const lines = await linesFor(INPUT.replace('"strin"', '"string"').replace('#/$defs/mod"', '#/$defs/mode"'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^schemas\/input\.json:5: \/properties\/k\/minimun: not a valid JSON Schema: unknown keyword "minimun" \(did you mean "minimum"\?\)/,
      ),
    ]);
  });

  it('names a $ref that points at nothing, where it is, and what is there instead', async () => {
    const lines = await linesFor(INPUT.replace('"strin"', '"string"').replace('"minimun"', '"minimum"'));
    expect(lines).toEqual([
      'schemas/input.json:6: /properties/mode/$ref: $ref #/$defs/mod points at nothing: input.json has no /$defs/mod (/$defs has: mode)',
    ]);
  });

  it('names a $ref into another file that points at nothing, and a file that does not exist', async () => {
    const lines = await linesFor(
      '{ "type": "object", "properties": {\n  "a": { "$ref": "defs.json#/$defs/nope" },\n  "b": { "$ref": "gone.json" } } }',
      { 'schemas/defs.json': '{ "$defs": { "yes": {} } }' },
    );
    expect(lines).toEqual([
      'schemas/input.json:2: /properties/a/$ref: $ref defs.json#/$defs/nope points at nothing: defs.json has no /$defs/nope (/$defs has: yes)',
      expect.stringMatching(/^schemas\/input\.json:3: \/properties\/b\/\$ref: \$ref gone\.json does not exist/),
    ]);
  });

  it('names the line and column of invalid JSON', async () => {
    const lines = await linesFor('{\n  "type": "object",\n}\n');
    expect(lines).toEqual([expect.stringMatching(/^schemas\/input\.json:3: -: not valid JSON at line 3, column 1: /)]);
  });

  it('points into the manifest for a schema written inline', async () => {
    const lines = await linesFor('{}', {}, { type: 'object', properties: { n: { type: 'numbr' } } });
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^x_tool\\.tool\\.yaml:\\d+: inputSchema\\.properties\\.n\\.type: not a valid JSON Schema: "numbr" is not a JSON Schema type \\(${TYPES.replace(/[()]/g, '\\$&')}\\)$`,
        ),
      ),
    ]);
  });
});

describe('a value that fails a schema', () => {
  const compiled = compileJsonSchema({
    type: 'object',
    properties: {
      sequence: { type: 'string', pattern: '^[ACGT]+$', maxLength: 4 },
      k: { type: 'integer', minimum: 1 },
      mode: { enum: ['fast', 'exact'] },
      window: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    },
    required: ['sequence'],
    additionalProperties: false,
  });
  if (!compiled.ok) throw new Error(compiled.problems.join('; '));

  it('says each rule in words at the JSON pointer of the value, with what was found', () => {
    expect(
      compiled.validate({ sequence: 'ACGU', k: 0, mode: 'slow', window: 'x', extra: 1 }).map((v) => `${v.path}: ${v.message}`),
    ).toEqual([
      ': has unknown property "extra"',
      '/sequence: must match the pattern ^[ACGT]+$ (found "ACGU")',
      '/k: must be at least 1 (found 0)',
      '/mode: "slow" is not one of the allowed values: fast, exact',
      '/window: must be an integer or null (found a string, "x")',
    ]);
    expect(compiled.validate({ k: 'seven' }).map((v) => `${v.path}: ${v.message}`)).toEqual([
      ': is missing required property "sequence"',
      '/k: must be an integer (found a string, "seven")',
    ]);
  });
});
