// JSON Schema checking and validation with ajv: tool schemas are compiled once at load (a bad
// schema is a load violation) and every validation lists all violations, never just the first.
import { Ajv2020 } from 'ajv/dist/2020.js';
import AjvDraft7 from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from './schema-bundle.js';

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: object) => void;
const Draft7 = AjvDraft7 as unknown as typeof Ajv2020;

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

/** A validator that also reports the artifact references it met (for input linking). */
export type RefValidator = (value: unknown) => { violations: SchemaViolation[]; artifacts: ArtifactRef[] };

/** The schema keyword marking a string as an artifact id: `{ "type": "string", "x-helix-artifact": true }`. */
export const ARTIFACT_KEYWORD = 'x-helix-artifact';
const ARTIFACT_ID = /^art_[0-9A-HJKMNP-TV-Z]{26}$/;

// ajv runs keyword functions synchronously during validate(), so the references of one
// validation are gathered here and taken right after it.
let collected: ArtifactRef[] | undefined;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

function makeAjv(draft7: boolean): Ajv2020 {
  const options = { allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, logger: false as const, validateFormats: true };
  const ajv = draft7 ? new Draft7(options) : new Ajv2020(options);
  addFormats(ajv);
  ajv.addKeyword({
    keyword: ARTIFACT_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: function artifactRef(this: unknown, marked: boolean, data: string, _parent: unknown, cxt?: { instancePath: string }) {
      if (!marked) return true;
      if (!ARTIFACT_ID.test(data)) {
        (artifactRef as { errors?: unknown[] }).errors = [{ keyword: ARTIFACT_KEYWORD, message: 'must be an artifact id (art_ and 26 characters)', params: {} }];
        return false;
      }
      collected?.push({ path: cxt?.instancePath ?? '', artifact_id: data });
      return true;
    },
  });
  return ajv;
}

/** Compiles a schema (draft 2020-12 unless it names draft-07); returns the problems if it is not a valid schema. */
export function compileJsonSchema(schema: JsonSchema): { ok: true; validate: Validator; validateWithRefs: RefValidator } | { ok: false; problems: string[] } {
  const declared = schema.$schema;
  if (declared !== undefined && declared !== DRAFT_2020 && !(typeof declared === 'string' && DRAFT_07.test(declared))) {
    return { ok: false, problems: [`$schema ${String(declared)} is not supported; use ${DRAFT_2020} or draft-07`] };
  }
  const ajv = makeAjv(typeof declared === 'string' && DRAFT_07.test(declared));
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema);
  } catch (err) {
    return { ok: false, problems: [(err as Error).message] };
  }
  const validate: Validator = (value) => (fn(value) ? [] : (fn.errors ?? []).map(toViolation));
  const validateWithRefs: RefValidator = (value) => {
    collected = [];
    try {
      const violations = validate(value);
      // Keep one reference per place: a oneOf/anyOf may visit the same value twice.
      const seen = new Set<string>();
      const artifacts = collected.filter((r) => !seen.has(r.path) && seen.add(r.path) !== undefined);
      return { violations, artifacts };
    } finally {
      collected = undefined;
    }
  };
  return { ok: true, validate, validateWithRefs };
}

function toViolation(e: ErrorObject): SchemaViolation {
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') message = `has unknown property "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
  if (e.keyword === 'required') message = `is missing required property "${String((e.params as { missingProperty: string }).missingProperty)}"`;
  return { path: e.instancePath, message, keyword: e.keyword };
}
