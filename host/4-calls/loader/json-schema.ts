// JSON Schema checking and validation with ajv: tool schemas are checked at load (a bad schema
// is a load violation, in words at its JSON pointer) and every validation lists all violations
// in words (schema-words.ts), never just the first. ajv is loaded only when a schema is compiled:
// a schema the load cache knows as checked (ABI-LOAD-008) is compiled on its first use.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { HelixError } from '../../../abi/index.js';
import { canonicalJson, sha256Digest } from '../../1-base/hashing.js';
import type { JsonSchema } from './schema-bundle.js';
import { describeErrors } from './schema-words.js';

type AjvClass = typeof Ajv2020;
const require = createRequire(import.meta.url);
let ajvModules: { Draft2020: AjvClass; Draft7: AjvClass; addFormats: (ajv: object) => void } | undefined;

// ajv and ajv-formats ship CommonJS, so they load synchronously here, once, on first need.
function ajvLib(): NonNullable<typeof ajvModules> {
  ajvModules ??= {
    Draft2020: (require('ajv/dist/2020.js') as { Ajv2020: AjvClass }).Ajv2020,
    Draft7: require('ajv') as AjvClass,
    addFormats: require('ajv-formats') as (ajv: object) => void,
  };
  return ajvModules;
}

/** Raise it when what compileJsonSchema accepts changes (options, keywords, formats). */
const SCHEMA_CHECK_VERSION = 1;

/** One violation of a JSON Schema by a value. */
export interface SchemaViolation {
  /** JSON pointer of the offending value (`/sequence`), `` for the root. */
  readonly path: string;
  readonly message: string;
  readonly keyword: string;
}

/** A compiled validator returning every violation. */
export type Validator = (value: unknown) => SchemaViolation[];

/** An artifact id found in a value at a place its schema marks with `x-helix-artifact`. */
export interface ArtifactRef {
  /** JSON pointer of the id in the value. */
  readonly path: string;
  readonly artifact_id: string;
}

/**
 * A validator that also reports the artifact references it met (for input linking) and gives the
 * value as the call goes on with it: for a schema compiled with `applyDefaults`, a copy with
 * every default the schema states filled in where the value leaves the property out (the
 * canonical input: one identity for one request in meaning); otherwise the value itself.
 */
export type RefValidator = (value: unknown) => { violations: SchemaViolation[]; artifacts: ArtifactRef[]; value: unknown };

/** How a schema is compiled for calls. */
export interface SchemaUse {
  /**
   * Fill in the schema's `default`s (ajv's useDefaults: under `properties` and `items`, not
   * inside `anyOf`, `oneOf` or `not`, where JSON Schema leaves a default an annotation).
   */
  readonly applyDefaults?: boolean;
}

/** The schema keyword marking a string as an artifact id: `{ "type": "string", "x-helix-artifact": true }`. */
export const ARTIFACT_KEYWORD = 'x-helix-artifact';
const ARTIFACT_ID = /^art_[0-9A-HJKMNP-TV-Z]{26}$/;

// ajv runs keyword functions synchronously during validate(), so the references of one
// validation are gathered here and taken right after it.
let collected: ArtifactRef[] | undefined;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

function makeAjv(draft7: boolean, validateSchema = true, applyDefaults = false): Ajv2020 {
  const options = {
    allErrors: true,
    strict: true,
    // Filling defaults, a default ajv would leave out (inside anyOf, oneOf, not) is an annotation,
    // not an error: the strict check of the schema itself is done without defaults.
    ...(applyDefaults ? { useDefaults: true, strictSchema: false } : {}),
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    logger: false as const,
    validateFormats: true,
    validateSchema,
  };
  const { Draft2020, Draft7, addFormats } = ajvLib();
  const ajv = draft7 ? new Draft7(options) : new Draft2020(options);
  addFormats(ajv);
  ajv.addKeyword({
    keyword: ARTIFACT_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: function artifactRef(this: unknown, marked: boolean, data: string, _parent: unknown, cxt?: { instancePath: string }) {
      if (!marked) return true;
      if (!ARTIFACT_ID.test(data)) {
        (artifactRef as { errors?: unknown[] }).errors = [
          { keyword: ARTIFACT_KEYWORD, message: 'must be an artifact id (art_ and 26 characters)', params: {} },
        ];
        return false;
      }
      collected?.push({ path: cxt?.instancePath ?? '', artifact_id: data });
      return true;
    },
  });
  return ajv;
}

/** A reason a schema is not a valid JSON Schema, at a JSON pointer into the schema. */
export interface SchemaProblem {
  readonly pointer: string;
  readonly reason: string;
}

/**
 * Compiles a schema (draft 2020-12 unless it names draft-07); when it is not a valid schema,
 * says why in words, each problem at the JSON pointer of its place in the schema: a failure of
 * JSON Schema's meta-schema, an unknown keyword or format, a $ref that points at nothing.
 */
export function compileJsonSchema(
  schema: JsonSchema,
  use: SchemaUse = {},
): { ok: true; validate: Validator; validateWithRefs: RefValidator } | { ok: false; problems: string[]; issues: SchemaProblem[] } {
  const refuse = (issues: SchemaProblem[]) => ({
    ok: false as const,
    issues,
    problems: issues.map((i) => `${i.pointer || '(root)'}: ${i.reason}`),
  });
  const declared = schema.$schema;
  if (declared !== undefined && declared !== DRAFT_2020 && !(typeof declared === 'string' && DRAFT_07.test(declared))) {
    return refuse([{ pointer: '/$schema', reason: `${JSON.stringify(declared)} is not supported; use ${DRAFT_2020} or draft-07` }]);
  }
  const ajv = makeAjv(typeof declared === 'string' && DRAFT_07.test(declared));
  if (!ajv.validateSchema(schema))
    return refuse(describeErrors(ajv.errors ?? [], schema).map(({ pointer, reason }) => ({ pointer, reason })));
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema);
  } catch (err) {
    return refuse(compileProblems(err, schema, ajv));
  }
  return { ok: true, ...validators(() => fn, defaulting(schema, use)) };
}

/**
 * The function that validates a copy of a value and fills in its defaults, compiled on first
 * use; undefined when `use` does not ask for defaults or the schema states none.
 */
function defaulting(schema: JsonSchema, use: SchemaUse): (() => ValidateFunction) | undefined {
  if (use.applyDefaults !== true || !subschemas(schema).some(({ node }) => Object.hasOwn(node, 'default'))) return undefined;
  let fn: ValidateFunction | undefined;
  return () => {
    fn ??= makeAjv(typeof schema.$schema === 'string' && DRAFT_07.test(schema.$schema), false, true).compile(schema);
    return fn;
  };
}

/**
 * The validators over a compiled function, which `compiled` gives on first use; with
 * `withDefaults`, validateWithRefs checks a copy of the value and fills in its defaults.
 */
function validators(
  compiled: () => ValidateFunction,
  withDefaults?: () => ValidateFunction,
): { validate: Validator; validateWithRefs: RefValidator } {
  const check = (fn: ValidateFunction, value: unknown): SchemaViolation[] =>
    fn(value) ? [] : describeErrors(fn.errors ?? [], value).map((f) => ({ path: f.pointer, message: f.reason, keyword: f.keyword }));
  const validate: Validator = (value) => check(compiled(), value);
  const validateWithRefs: RefValidator = (input) => {
    // The caller's value is never changed: the defaults go into a copy (a call's input is JSON).
    const value = withDefaults === undefined ? input : structuredClone(input);
    collected = [];
    try {
      const violations = check(withDefaults?.() ?? compiled(), value);
      // Keep one reference per place: a oneOf/anyOf may visit the same value twice.
      const seen = new Set<string>();
      const artifacts = collected.filter((r) => !seen.has(r.path) && seen.add(r.path) !== undefined);
      return { violations, artifacts, value };
    } finally {
      collected = undefined;
    }
  };
  return { validate, validateWithRefs };
}

/**
 * The load cache's key for `schema` checked by this checker: the schema's sha256 (canonical
 * JSON), the checker's version and ajv's.
 */
export function schemaCheckKey(schema: JsonSchema): string {
  // No ajv here: its version is read from its package file, without loading it.
  ajvVersion ??= (JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')) as { version: string }).version;
  return `schema:${sha256Digest(canonicalJson(schema))}:c${SCHEMA_CHECK_VERSION}:ajv-${ajvVersion}`;
}
let ajvVersion: string | undefined;

/**
 * Validators for a schema that already passed compileJsonSchema (the load cache says so):
 * compiled on first use, without checking it against the meta-schema again.
 */
export function lazyJsonSchema(schema: JsonSchema, use: SchemaUse = {}): { validate: Validator; validateWithRefs: RefValidator } {
  let fn: ValidateFunction | undefined;
  return validators(
    () => {
      if (fn !== undefined) return fn;
      const declared = schema.$schema;
      try {
        fn = makeAjv(typeof declared === 'string' && DRAFT_07.test(declared), false).compile(schema);
      } catch (err) {
        throw new HelixError('P-PRECOND-MANIFEST-INVALID', {
          message: `A tool schema checked at an earlier start no longer compiles: ${(err as Error).message}. Run \`helix validate\`.`,
          details: { reason: (err as Error).message },
        });
      }
      return fn;
    },
    defaulting(schema, use),
  );
}

// Ajv's compile errors carry no place (unknown keyword), or one in its own form: each is found
// in the schema and said in words.
function compileProblems(err: unknown, schema: JsonSchema, ajv: Ajv2020): SchemaProblem[] {
  const message = (err as Error).message ?? String(err);
  const keyword = /unknown keyword: "(.+)"/.exec(message)?.[1];
  if (keyword !== undefined) {
    const known = KNOWN_KEYWORDS.filter((k) => ajv.getKeyword(k) !== false);
    const near = known.find((k) => closeTo(k, keyword));
    const reason = `unknown keyword "${keyword}"${near === undefined ? '' : ` (did you mean "${near}"?)`}: Helix checks schemas strictly, so a misspelt keyword is not silently ignored`;
    const places = subschemas(schema)
      .filter(({ node }) => Object.hasOwn(node, keyword))
      .map(({ pointer }) => `${pointer}/${escapePointerToken(keyword)}`);
    return (places.length > 0 ? places : ['']).map((pointer) => ({ pointer, reason }));
  }
  const format = /unknown format "(.+)" ignored in schema at path "#(.*)"/.exec(message);
  if (format !== null) return [{ pointer: `${format[2]}/format`, reason: `unknown format "${format[1]}" (known: ${FORMATS.join(', ')})` }];
  const missing = (err as { missingRef?: unknown }).missingRef;
  if (typeof missing === 'string') {
    const places = subschemas(schema)
      .filter(({ node }) => node.$ref === missing)
      .map(({ pointer }) => `${pointer}/$ref`);
    const reason = `$ref ${missing} points at nothing: no such place in the schema`;
    return (places.length > 0 ? places : ['']).map((pointer) => ({ pointer, reason }));
  }
  return [{ pointer: '', reason: message }];
}

// Keywords whose values are schemas, maps of schemas or lists of schemas: where a walk finds subschemas.
const ONE_SCHEMA = [
  'additionalProperties',
  'items',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
  'contentSchema',
];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const KNOWN_KEYWORDS = [
  ...new Set([
    ...ONE_SCHEMA,
    ...SCHEMA_MAPS,
    ...SCHEMA_LISTS,
    'type',
    'enum',
    'const',
    'required',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'multipleOf',
    'minLength',
    'maxLength',
    'pattern',
    'format',
    'minItems',
    'maxItems',
    'uniqueItems',
    'minProperties',
    'maxProperties',
    'dependentRequired',
    'title',
    'description',
    'default',
    'examples',
    '$ref',
    '$schema',
    '$id',
    '$comment',
    'readOnly',
    'writeOnly',
    'deprecated',
    ARTIFACT_KEYWORD,
  ]),
];
const FORMATS = [
  'date',
  'time',
  'date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
];

/** Every subschema of `schema` (objects only) with its JSON pointer, the root first; iterative. */
function subschemas(schema: unknown): Array<{ pointer: string; node: Record<string, unknown> }> {
  const out: Array<{ pointer: string; node: Record<string, unknown> }> = [];
  const stack: Array<{ pointer: string; node: unknown }> = [{ pointer: '', node: schema }];
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  while (stack.length > 0) {
    const { pointer, node } = stack.pop()!;
    if (!isObject(node)) continue;
    out.push({ pointer, node });
    for (const [key, value] of Object.entries(node)) {
      const here = `${pointer}/${escapePointerToken(key)}`;
      if (SCHEMA_MAPS.includes(key) && isObject(value))
        for (const [name, sub] of Object.entries(value)) stack.push({ pointer: `${here}/${escapePointerToken(name)}`, node: sub });
      else if (SCHEMA_LISTS.includes(key) && Array.isArray(value))
        for (const [i, sub] of value.entries()) stack.push({ pointer: `${here}/${i}`, node: sub });
      else if (ONE_SCHEMA.includes(key)) stack.push({ pointer: here, node: value });
    }
  }
  return out;
}

// A keyword one or two edits (or one swap) away from another: the usual typo.
function closeTo(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 2) return false;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]! <= 2;
}

function escapePointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
