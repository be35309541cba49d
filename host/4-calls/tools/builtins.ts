// Host built-in tools over the store, called and recorded like any toolpack: artifact_import,
// artifact_get, artifact_list (snapshot-bounded), artifact_preview, run_get, run_verify, and the
// Slurm jobs' slurm_job_get and slurm_job_collect (slurm-builtins.ts). Their ids
// live under the reserved `helix.` prefix; the MCP server exposes them by their short names.
import { realpathSync, statSync } from 'node:fs';
import { z } from 'zod';
import { ArtifactRecordSchema, HelixError, type ArtifactRecord, type Policy } from '../../../abi/index.js';
import { getArtifact, importFile, listArtifacts, snapshotBoundary } from '../artifacts/index.js';
import { observeRun, requireRun } from '../runs/run-store.js';
import { verifyRun } from '../runs/verify.js';
import type { Store } from '../../3-store/open-store.js';
import { compileJsonSchema, lazyJsonSchema, type RefValidator, type Validator } from '../loader/json-schema.js';
import type { JsonSchema } from '../loader/schema-bundle.js';
import type { ToolLimits } from '../../../abi/index.js';
import type { BuiltinSpec } from './builtin-spec.js';
import { SLURM_BUILTINS } from './slurm-builtins.js';
import type { Tool, ToolOutcome } from './tool.js';

/** The prefix of built-in tool ids; toolpacks may not use it. */
export const BUILTIN_PREFIX = 'helix.';

const ARTIFACT_ID = { type: 'string', 'x-helix-artifact': true, description: 'An artifact id, e.g. from artifact import.' };

/** The record as tools and agents see it: the stored record without its source and preview. */
const ArtifactSummarySchema = ArtifactRecordSchema.omit({ source: true, preview: true });
type ArtifactSummary = z.infer<typeof ArtifactSummarySchema>;
const SUMMARY_KEYS = Object.keys(ArtifactSummarySchema.shape) as Array<keyof ArtifactSummary>;

/**
 * The published JSON Schema of a summary, derived from the zod schema so the two cannot drift:
 * every field, required, with its JSON type(s). Patterns and bounds are left to the zod schema,
 * which every read from the store enforces, so the published contract stays the loose one it was.
 */
function summaryJsonSchema(): JsonSchema {
  type Field = { type?: string | string[]; anyOf?: Array<{ type: string }> };
  const json = z.toJSONSchema(ArtifactSummarySchema, { io: 'output' }) as { required: string[]; properties: Record<string, Field> };
  const typeOf = (f: Field): string | string[] => f.type ?? (f.anyOf ?? []).map((branch) => branch.type);
  return {
    type: 'object',
    required: json.required,
    properties: Object.fromEntries(Object.entries(json.properties).map(([k, f]) => [k, { type: typeOf(f) }])),
  };
}

const RECORD_SCHEMA: JsonSchema = summaryJsonSchema();

/** The summary of a record, field by field as the zod schema lists them. */
function summary(a: ArtifactRecord): ArtifactSummary {
  return Object.fromEntries(SUMMARY_KEYS.map((k) => [k, a[k]])) as ArtifactSummary;
}

const RUN_ID = { type: 'string', pattern: '^run_[0-9a-f]{32}$', description: 'A run id, as in a response envelope.' };

/** A run's state as far as reading it goes: it changes while the run is live. */
function runBoundary(store: Store, input: Record<string, unknown>): Record<string, unknown> {
  const run = observeRun(store, String(input.run_id));
  return run === undefined
    ? { run: null }
    : { status: run.status, attempts: run.attempts, finished_at: run.finished_at, journal_head: run.journal.head };
}

const SPECS: readonly BuiltinSpec[] = [
  {
    name: 'artifact_import',
    description:
      "Imports a file from under the policy's import roots as an artifact (streamed, content-addressed). The same unchanged file imports once: a repeat call replays.",
    inputSchema: {
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', minLength: 1, description: 'A file under one of the policy import roots.' },
        label: { type: 'string', maxLength: 200 },
        type: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', description: 'Overrides the detected type.' },
      },
    },
    outputSchema: RECORD_SCHEMA,
    deterministic: 'idempotent',
    // The file as it is now (path, size, modification time) is part of the run's identity, so a
    // changed file imports again and an unchanged one replays.
    boundary: (_store, input) => {
      try {
        const st = statSync(String(input.path));
        return { realpath: realpathSync(String(input.path)), size: st.size, mtime_ms: st.mtimeMs };
      } catch {
        return { missing: String(input.path) };
      }
    },
    run: async (input, ctx) => {
      const meta = {
        label: typeof input.label === 'string' ? input.label : null,
        ...(typeof input.type === 'string' ? { type: input.type } : {}),
      };
      return summary(await importFile(ctx.store, ctx.policy.policy, String(input.path), meta));
    },
  },
  {
    name: 'run_get',
    description: 'A recorded run: status, tool, timings, metrics, result, input and output artifacts, log artifact.',
    inputSchema: { type: 'object', required: ['run_id'], additionalProperties: false, properties: { run_id: RUN_ID } },
    outputSchema: {
      type: 'object',
      required: ['run_id', 'status', 'tool_id'],
      properties: { run_id: { type: 'string' }, status: { type: 'string' }, tool_id: { type: 'string' } },
    },
    boundary: runBoundary,
    run: (input, ctx) => {
      const { owner: _owner, ...run } = requireRun(ctx.store, String(input.run_id));
      return run;
    },
  },
  {
    name: 'run_verify',
    description:
      'Re-executes a succeeded run offline against its journal and reports whether it reproduces the same output bytes, or the first difference.',
    inputSchema: { type: 'object', required: ['run_id'], additionalProperties: false, properties: { run_id: RUN_ID } },
    outputSchema: {
      type: 'object',
      required: ['run_id', 'match', 'checks'],
      properties: { run_id: { type: 'string' }, match: { type: 'boolean' }, checks: { type: 'array' } },
    },
    boundary: runBoundary,
    run: (input, ctx) => verifyRun(ctx.store, String(input.run_id)),
  },
  {
    name: 'artifact_get',
    description: 'The metadata of one artifact: type, size, sha256, label, and the run that created it.',
    inputSchema: { type: 'object', required: ['artifact_id'], additionalProperties: false, properties: { artifact_id: ARTIFACT_ID } },
    outputSchema: RECORD_SCHEMA,
    run: (input, ctx) => summary(getArtifact(ctx.store, input.artifact_id as string)),
  },
  {
    name: 'artifact_list',
    description: 'Artifacts in creation order, as of the moment of the call: a replay lists the same artifacts even after new imports.',
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        as_of_created_at: {
          type: 'integer',
          minimum: 0,
          description:
            'List as of this moment (ms since the epoch); default: now. Passing the as_of_created_at of an earlier answer replays it.',
        },
        type: { type: 'string', description: 'Only artifacts of this type, e.g. fastq.' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
      },
    },
    outputSchema: {
      type: 'object',
      required: ['as_of_created_at', 'artifact_count', 'artifacts'],
      properties: {
        as_of_created_at: { type: 'integer' },
        artifact_count: { type: 'integer' },
        artifacts: { type: 'array', items: RECORD_SCHEMA },
      },
    },
    // The snapshot boundary is part of the run's identity: a replay lists exactly what the
    // first call listed, whatever was imported since.
    boundary: (store, input) => {
      if (typeof input.as_of_created_at !== 'number') return snapshotBoundary(store);
      const asOf = input.as_of_created_at;
      return { as_of_created_at: asOf, artifact_count: listArtifacts(store, { asOfCreatedAt: asOf }).length };
    },
    run: (input, ctx) => {
      const b = ctx.boundary as { as_of_created_at: number; artifact_count: number };
      const all = listArtifacts(ctx.store, { asOfCreatedAt: b.as_of_created_at }).filter(
        (a) => input.type === undefined || a.type === input.type,
      );
      return { ...b, artifacts: all.slice(0, (input.limit as number | undefined) ?? 100).map(summary) };
    },
  },
  {
    name: 'artifact_preview',
    description: 'A short look at an artifact: the first lines of text and, for FASTA/FASTQ, the first records.',
    inputSchema: { type: 'object', required: ['artifact_id'], additionalProperties: false, properties: { artifact_id: ARTIFACT_ID } },
    outputSchema: {
      type: 'object',
      required: ['artifact_id', 'type', 'text', 'truncated'],
      properties: {
        artifact_id: { type: 'string' },
        type: { type: 'string' },
        text: { type: ['string', 'null'] },
        records: {
          type: 'array',
          items: { type: 'object', required: ['id', 'length'], properties: { id: { type: 'string' }, length: { type: 'integer' } } },
        },
        truncated: { type: 'boolean' },
      },
    },
    run: (input, ctx) => {
      const a = getArtifact(ctx.store, input.artifact_id as string);
      return { artifact_id: a.id, type: a.type, ...a.preview };
    },
  },
  ...SLURM_BUILTINS,
];

/**
 * The built-in tools' schemas, each with the problems compileJsonSchema finds in it (none: a
 * test checks), so that the host need not check them at every start.
 */
export function builtinSchemaProblems(): string[] {
  return SPECS.flatMap((spec) =>
    [spec.inputSchema, spec.outputSchema].flatMap((schema) => {
      const c = compileJsonSchema(schema);
      return c.ok ? [] : c.problems.map((p) => `${spec.name}: ${p}`);
    }),
  );
}

// Helix's own schemas, checked by a test, are compiled on their first use (ABI-LOAD-008).
function compile(schema: JsonSchema): { validate: Validator; validateWithRefs: RefValidator } {
  return lazyJsonSchema(schema);
}

/** The built-in tools under `policy`'s ceilings. */
export function builtinTools(policy: Policy): Tool[] {
  const c = policy.ceilings;
  const limits: ToolLimits = {
    perInputMiB: null,
    fuel: 0,
    maxMemoryPages: 0,
    timeoutMs: Math.min(30_000, c.timeoutMs),
    maxInputBytes: Math.min(64 * 1024, c.maxInputBytes),
    maxOutputBytes: c.maxOutputBytes,
    maxCapabilityCalls: 0,
  };
  return SPECS.map((spec): Tool => {
    const input = compile(spec.inputSchema);
    const output = compile(spec.outputSchema);
    return {
      kind: 'builtin',
      id: `${BUILTIN_PREFIX}${spec.name}`,
      version: '1.0.0',
      contractVersion: 'v1',
      description: spec.description,
      deterministic: spec.deterministic ?? 'pure',
      entrypoint: spec.name,
      capabilities: [],
      moduleDigest: null,
      limits,
      minMemoryPages: 0,
      inputSchema: spec.inputSchema,
      outputSchema: spec.outputSchema,
      validateInput: input.validateWithRefs,
      validateOutput: output.validate,
      ...(spec.boundary === undefined ? {} : { snapshotBoundary: spec.boundary }),
      async execute(ctx): Promise<ToolOutcome> {
        try {
          return { kind: 'output', output: { status: 'ok', output: await spec.run(ctx.input, ctx) }, fuelUsed: 0, memoryPages: 0 };
        } catch (err) {
          if (err instanceof HelixError) return { kind: 'fault', error: err.toWire(), fuelUsed: 0, memoryPages: 0 };
          throw err;
        }
      },
    };
  });
}
