// The tool manifest (`<name>.tool.yaml`, camelCase, generated into abi/schemas/tool-manifest.json)
// as a zod schema. Types come from here; the published JSON Schema is generated from it.
import semver from 'semver';
import { z } from 'zod';
import { ABI_IDS } from './constants.js';

/** Dotted lowercase id, stable forever: `seq.gc_content`. */
export const TOOL_ID_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$/;
/** Capability names and scoped entries: `clock.now_unix`, `secrets.get.db_password`. */
export const CAPABILITY_NAME_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+$/;
/** `sha256:` and 64 lowercase hex digits. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
/** Output roles: lowercase identifiers; `log` is reserved for the host (ABI-CAP-008). */
export const ROLE_PATTERN = /^[a-z][a-z0-9_]*$/;

const positiveInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A JSON Schema document or a `{ $ref: "file.json" }` pointing at one (resolved by the loader). */
export const JsonSchemaDocSchema = z.record(z.string(), z.unknown());

const rate = (max: number) => z.number().positive().max(max);

/**
 * What a budget grows by per MiB of the call's input artifacts (ABI-BUDGET-001): the budget of a
 * call is the base figure plus this rate times the input MiB, bounded by the policy's ceilings.
 */
export const ManifestPerInputMiBSchema = z
  .strictObject({
    fuel: rate(1e12).optional().describe('Fuel added per MiB of input, on top of limits.fuel.'),
    maxCapabilityCalls: rate(1_000_000)
      .optional()
      .describe('Capability calls added per MiB of input, on top of limits.maxCapabilityCalls (fractions allowed: 0.25 is one per 4 MiB).'),
    timeoutMs: rate(86_400_000).optional().describe('Milliseconds of deadline added per MiB of input, on top of timeoutMs.'),
  })
  .describe(
    'Budgets that grow with the data: per MiB of the input artifacts the params reference (a gzip artifact counts 8 times its stored size). See ABI-BUDGET-* in abi/ABI.md.',
  );

/** Resource limits a tool asks for; each is capped by the policy's ceiling. */
export const ManifestLimitsSchema = z.strictObject({
  maxInputBytes: positiveInt.describe('Largest accepted input, in bytes of UTF-8 JSON.'),
  maxOutputBytes: positiveInt.describe('Largest output envelope the guest may return, in bytes.'),
  fuel: positiveInt.optional().describe('Instruction budget per call; default the policy ceiling.'),
  maxMemoryPages: z
    .number()
    .int()
    .min(1)
    .max(65_536)
    .optional()
    .describe('Linear memory ceiling in 64 KiB pages; default the policy ceiling.'),
  maxCapabilityCalls: z.number().int().min(0).max(1_000_000).optional().describe('Capability calls per run; default the policy ceiling.'),
  perInputMiB: ManifestPerInputMiBSchema.optional(),
});
export type ManifestLimits = z.infer<typeof ManifestLimitsSchema>;

/** `scheme://host:port` with an optional leading `*.` label wildcard, e.g. `https://*.ncbi.nlm.nih.gov:443`. */
export const NETWORK_PATTERN = /^(https?):\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*:(\d{1,5})$/;

/** Which capabilities the guest may call (the allowlist, ABI-CAP-002), with per-capability settings. */
export const ManifestCapabilitiesSchema = z.strictObject({
  abiVersion: z
    .union([z.literal(1), z.literal(2)])
    .describe('Capability ABI version: 1, or 2 to import helix_v1.capability_call_bulk (the bulk path, ABI-BULK-001).'),
  allow: z
    .array(z.string().regex(CAPABILITY_NAME_PATTERN, 'must be a capability name such as clock.now_unix'))
    .describe('Exact capability names; scoped entries such as secrets.get.db_password grant only that secret.'),
  network: z
    .array(z.string().regex(NETWORK_PATTERN, 'must be scheme://host:port, e.g. https://api.example.org:443 or https://*.example.org:443'))
    .default([])
    .describe('Origins http.request may reach; the policy must allow them too.'),
});

/** An output the tool promises to create (declared outputs are enforced, ABI-CAP-008). */
export const DeclaredOutputSchema = z.strictObject({
  role: z
    .string()
    .regex(ROLE_PATTERN, 'must be a lowercase identifier')
    .refine((r) => r !== 'log', 'the role "log" is reserved for the run log'),
  type: z.string().min(1).describe('Artifact type, e.g. fasta, fastq, json.'),
  label: z.string().min(1).optional(),
});

/** The manifest of one toolpack. */
export const ToolManifestSchema = z.strictObject({
  id: z.string().regex(TOOL_ID_PATTERN, 'must be dotted lowercase segments, e.g. seq.gc_content'),
  version: z.string().refine((v) => semver.valid(v) === v, 'must be a semantic version such as 1.0.0'),
  contractVersion: z.string().regex(/^v[1-9][0-9]*$/, 'must be vN, e.g. v1'),
  description: z.string().min(1).max(2000),
  abi: z.enum(ABI_IDS),
  module: z.string().min(1).describe('Path of the .wasm module, relative to the manifest.'),
  entrypoint: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  digest: z.string().regex(DIGEST_PATTERN, 'must be sha256: followed by 64 lowercase hex digits'),
  deterministic: z.enum(['pure', 'idempotent', 'side_effectful']),
  timeoutMs: positiveInt.max(86_400_000),
  limits: ManifestLimitsSchema,
  capabilities: ManifestCapabilitiesSchema.default({ abiVersion: 1, allow: [], network: [] }),
  inputSchema: JsonSchemaDocSchema,
  outputSchema: JsonSchemaDocSchema,
  declaredOutputs: z.array(DeclaredOutputSchema).default([]),
  health: z.strictObject({ fixtures: z.string().min(1) }).optional(),
});

/** A manifest as written (before defaults). */
export type ToolManifestInput = z.input<typeof ToolManifestSchema>;
/** A manifest after parsing and defaults. */
export type ToolManifest = z.infer<typeof ToolManifestSchema>;
