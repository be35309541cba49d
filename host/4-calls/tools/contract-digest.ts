// The tool contract digest (ABI-RUNID-002..005): one hash, computed once at load, over every
// manifest field that can change what a call of the tool does, with the schemas inlined, so that
// a run's identity changes whenever the manifest or a schema file is edited in a way that matters.
import { DEFAULT_ENTRYPOINT, type ToolManifest } from '../../../abi/index.js';
import { canonicalJson, sha256Digest } from '../../1-base/hashing.js';
import type { JsonSchema } from '../loader/schema-bundle.js';

/**
 * Schema keywords that only annotate (JSON Schema 2020-12, meta-data vocabulary, and `$comment`):
 * no validator result depends on them.
 */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'examples']);
/** Keywords whose value is one subschema. */
const ONE_SCHEMA = new Set([
  'additionalProperties',
  'items',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
  'contentSchema',
]);
/** Keywords whose value is an array of subschemas. */
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * A schema without its annotations, walked keyword by keyword so that a property named
 * `description` is kept; every keyword it does not know (`const`, `enum`, `default`,
 * `x-helix-artifact`, ...) is kept whole, so an edit there still changes the digest.
 */
export function withoutAnnotations(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) continue;
    if (ONE_SCHEMA.has(k)) out[k] = Array.isArray(v) ? v.map(withoutAnnotations) : withoutAnnotations(v);
    else if (SCHEMA_LIST.has(k) && Array.isArray(v)) out[k] = v.map(withoutAnnotations);
    else if (SCHEMA_MAP.has(k) && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, withoutAnnotations(sub)]));
    } else out[k] = v;
  }
  return out;
}

/** A sorted copy without repeats: order and repeats in an allowlist change nothing. */
const asSet = (items: readonly string[]): string[] => [...new Set(items)].sort();

/**
 * The normalized contract of a toolpack: what the digest is computed over. Left out, because
 * they cannot change a call's outcome: `description`, `health` (fixtures), `module` (a path: the
 * bytes are pinned by `digest`) and `timeoutMs` (wall-clock time is not reproducible, and a run
 * that met its deadline succeeded). Optional limits the manifest leaves out stay null (the
 * policy ceiling then applies, and the policy hash is in the run id already).
 */
export function toolContract(manifest: ToolManifest, inputSchema: JsonSchema, outputSchema: JsonSchema): Record<string, unknown> {
  const l = manifest.limits;
  return {
    id: manifest.id,
    version: manifest.version,
    contract_version: manifest.contractVersion,
    abi: manifest.abi,
    entrypoint: manifest.entrypoint ?? DEFAULT_ENTRYPOINT,
    module_digest: manifest.digest,
    deterministic: manifest.deterministic,
    limits: {
      max_input_bytes: l.maxInputBytes,
      max_output_bytes: l.maxOutputBytes,
      fuel: l.fuel ?? null,
      max_memory_pages: l.maxMemoryPages ?? null,
      max_capability_calls: l.maxCapabilityCalls ?? null,
      // Only when declared, so a manifest without it keeps its digest (and its runs replay).
      // The deadline's rate stays out, as timeoutMs does (ABI-RUNID-003).
      ...(l.perInputMiB === undefined
        ? {}
        : { per_input_mib: { fuel: l.perInputMiB.fuel ?? null, max_capability_calls: l.perInputMiB.maxCapabilityCalls ?? null } }),
    },
    capabilities: {
      abi_version: manifest.capabilities.abiVersion,
      allow: asSet(manifest.capabilities.allow),
      network: asSet(manifest.capabilities.network),
    },
    // In order, labels included: a declared label becomes the label of the artifact the run creates.
    declared_outputs: manifest.declaredOutputs.map((o) => ({ role: o.role, type: o.type, label: o.label ?? null })),
    input_schema: withoutAnnotations(inputSchema),
    output_schema: withoutAnnotations(outputSchema),
  };
}

/** `sha256:<hex>` of the canonical JSON (RFC 8785) of toolContract. */
export function contractDigest(manifest: ToolManifest, inputSchema: JsonSchema, outputSchema: JsonSchema): string {
  return sha256Digest(canonicalJson(toolContract(manifest, inputSchema, outputSchema)));
}
