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

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

function makeAjv(draft7: boolean): Ajv2020 {
  const options = { allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, logger: false as const, validateFormats: true };
  const ajv = draft7 ? new Draft7(options) : new Ajv2020(options);
  addFormats(ajv);
  return ajv;
}

/** Compiles a schema (draft 2020-12 unless it names draft-07); returns the problems if it is not a valid schema. */
export function compileJsonSchema(schema: JsonSchema): { ok: true; validate: Validator } | { ok: false; problems: string[] } {
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
  return { ok: true, validate };
}

function toViolation(e: ErrorObject): SchemaViolation {
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') message = `has unknown property "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
  if (e.keyword === 'required') message = `is missing required property "${String((e.params as { missingProperty: string }).missingProperty)}"`;
  return { path: e.instancePath, message, keyword: e.keyword };
}
