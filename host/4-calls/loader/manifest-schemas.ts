// What every kind of toolpack manifest loads alike: its shape's problems as violations (unknown
// fields named, snake_case answered with the camelCase field), and its inputSchema and
// outputSchema bundled with their $refs inside the pack (ABI-LOAD-003), checked as JSON Schema
// once per schema and checker version (ABI-LOAD-008), each problem reported at its place
// (ABI-LOAD-006).
import type { z } from 'zod';
import { fromPointer } from '../../../abi/index.js';
import { issueReason, type Violation } from '../../1-base/files/violation.js';
import { shown as display } from '../../1-base/files/pack-files.js';
import { compileJsonSchema, lazyJsonSchema, schemaCheckKey, type RefValidator, type Validator } from './json-schema.js';
import type { LoaderCache } from './loader-cache.js';
import { bundleSchema, schemaFiles, type JsonSchema } from './schema-bundle.js';

/** One schema, bundled and compiled. */
export interface LoadedSchema {
  readonly schema: JsonSchema;
  readonly validate: Validator;
  readonly validateWithRefs: RefValidator;
}

/** Places a violation in the manifest at a field path, with its line where known. */
export type ManifestPlace = (path: readonly PropertyKey[], reason: string) => Violation;

/** The violations of a manifest that does not parse: one per issue, an unknown field named (with its camelCase spelling when `known` has it). */
export function manifestIssueViolations(issues: readonly z.core.$ZodIssue[], known: readonly string[], at: ManifestPlace): Violation[] {
  const violations: Violation[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) violations.push(at([...issue.path, key], unknownKeyReason(key, known)));
    } else {
      violations.push(at(issue.path, issueReason(issue)));
    }
  }
  return violations;
}

function unknownKeyReason(key: string, known: readonly string[]): string {
  const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  if (camel !== key && known.includes(camel)) return `unknown field; manifests use camelCase: write ${camel}`;
  return 'unknown field';
}

/** Loads both schemas of the manifest at `file` in `packDir`; a problem in either is a violation and leaves it out. */
export function loadManifestSchemas(
  manifest: { readonly inputSchema: Record<string, unknown>; readonly outputSchema: Record<string, unknown> },
  file: string,
  packDir: string,
  cache: LoaderCache | undefined,
  at: ManifestPlace,
): { schemas: Partial<Record<'inputSchema' | 'outputSchema', LoadedSchema>>; violations: Violation[] } {
  const violations: Violation[] = [];
  const schemas: Partial<Record<'inputSchema' | 'outputSchema', LoadedSchema>> = {};
  const files = schemaFiles(packDir);
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const bundled = bundleSchema(manifest[key], file, files);
    if (!bundled.ok) {
      for (const p of bundled.problems) {
        const inside = fromPointer(p.pointer);
        if (p.file === file) {
          violations.push(at([key, ...inside], p.reason));
        } else {
          // A problem inside a referenced schema file is reported against that file.
          violations.push(schemaFileViolation(p.file, p.pointer, p.reason, p.line));
        }
      }
      continue;
    }
    // A schema this checker passed at an earlier start is compiled on its first use (ABI-LOAD-008).
    const checkKey = cache === undefined ? undefined : schemaCheckKey(bundled.schema);
    // A call's input gets its schema's defaults before anything else sees it (ABI-RUNID-010).
    const use = { applyDefaults: key === 'inputSchema' };
    const compiled =
      checkKey !== undefined && cache!.schemaChecked(checkKey)
        ? { ok: true as const, ...lazyJsonSchema(bundled.schema, use) }
        : compileJsonSchema(bundled.schema, use);
    if (compiled.ok && checkKey !== undefined) cache!.putSchema(checkKey);
    if (!compiled.ok) {
      // Each problem at its place: in the manifest's schema, or in the schema file it came from.
      for (const issue of compiled.issues) {
        const place = bundled.locate(issue.pointer);
        const reason = `not a valid JSON Schema: ${issue.reason}`;
        if (place.file === file) violations.push(at([key, ...fromPointer(place.pointer)], reason));
        else violations.push(schemaFileViolation(place.file, place.pointer, reason, place.line));
      }
      continue;
    }
    if (key === 'inputSchema' && bundled.schema.type !== 'object') {
      violations.push(at([key], 'must describe an object (type: object): tool input is a JSON object'));
      continue;
    }
    schemas[key] = { schema: bundled.schema, validate: compiled.validate, validateWithRefs: compiled.validateWithRefs };
  }
  return { schemas, violations };
}

/** A violation inside a schema file: its place is a JSON pointer (`/properties/x/type`), `-` for the whole file. */
function schemaFileViolation(file: string, pointer: string, reason: string, line: number | undefined): Violation {
  const v: Violation = { file: display(file), field: pointer === '' ? '-' : pointer, reason };
  return line === undefined ? v : { ...v, line };
}
