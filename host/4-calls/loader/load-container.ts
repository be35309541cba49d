// Loading a container toolpack (`kind: container`, ABI-CONTAINER-001..003), fail-closed like any
// toolpack: the manifest's shape, its schemas, and its argv template, whose every placeholder must
// name a required scalar of the input schema, a required input artifact, or a declared output
// file. Whether the policy offers the tool is decided later, when the host binds its tools.
import {
  CONTAINER_FILE_NAME,
  type ContainerManifest,
  ContainerManifestSchema,
  PLACEHOLDER,
  PLACEHOLDER_BODY,
  type Policy,
  type ToolLimits,
} from '../../../abi/index.js';
import type { Violation } from '../../1-base/files/violation.js';
import { ARTIFACT_KEYWORD, type RefValidator, type Validator } from './json-schema.js';
import type { LoaderCache } from './loader-cache.js';
import { loadManifestSchemas, manifestIssueViolations, type ManifestPlace } from './manifest-schemas.js';
import type { JsonSchema } from './schema-bundle.js';

/** A container toolpack that passed every check. */
export interface LoadedContainer {
  readonly manifest: ContainerManifest;
  readonly manifestPath: string;
  /** The manifest's limits capped by the policy (no fuel or linear memory: the container's own limits are docker.run's). */
  readonly limits: ToolLimits;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly validateInputRefs: RefValidator;
  readonly validateOutput: Validator;
}

/** Whether a parsed manifest document declares the container kind. */
export function isContainerDocument(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Record<string, unknown>).kind === 'container';
}

const KNOWN_FIELDS = Object.keys(ContainerManifestSchema.shape);
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

/** Checks a container manifest document read from `file`; the loaded toolpack, or every violation found. */
export function loadContainerManifest(
  value: Record<string, unknown>,
  file: string,
  packDir: string,
  policy: Policy,
  cache: LoaderCache | undefined,
  at: ManifestPlace,
): { container?: LoadedContainer; violations: Violation[] } {
  const parsed = ContainerManifestSchema.safeParse(value);
  if (!parsed.success) return { violations: manifestIssueViolations(parsed.error.issues, KNOWN_FIELDS, at) };
  const manifest = parsed.data;
  const violations: Violation[] = [];
  if (manifest.id.startsWith('helix.')) violations.push(at(['id'], 'the prefix helix. is reserved for the host built-in tools'));
  violations.push(...outputViolations(manifest, at));
  const { schemas, violations: schemaViolations } = loadManifestSchemas(manifest, file, packDir, cache, at);
  violations.push(...schemaViolations);
  if (schemas.inputSchema !== undefined) violations.push(...templateViolations(manifest, schemas.inputSchema.schema, at));
  if (violations.length > 0 || schemas.inputSchema === undefined || schemas.outputSchema === undefined) return { violations };
  const c = policy.ceilings;
  const limits: ToolLimits = {
    // Only the deadline grows: a container has no fuel, and its one docker.run call is all it makes.
    perInputMiB: manifest.limits.perInputMiB === undefined ? null : { timeoutMs: manifest.limits.perInputMiB.timeoutMs },
    fuel: 0,
    maxMemoryPages: 0,
    timeoutMs: Math.min(manifest.timeoutMs, c.timeoutMs),
    maxInputBytes: Math.min(manifest.limits.maxInputBytes, c.maxInputBytes),
    maxOutputBytes: Math.min(manifest.limits.maxOutputBytes, c.maxOutputBytes),
    // The one docker.run call the host makes for it.
    maxCapabilityCalls: 1,
  };
  return {
    violations,
    container: {
      manifest,
      manifestPath: file,
      limits,
      inputSchema: schemas.inputSchema.schema,
      outputSchema: schemas.outputSchema.schema,
      validateInputRefs: schemas.inputSchema.validateWithRefs,
      validateOutput: schemas.outputSchema.validate,
    },
  };
}

/** The file of a declared output that is not a log: its `file`, else its role. */
export function outputFile(output: ContainerManifest['declaredOutputs'][number]): string {
  return output.file ?? output.role;
}

/** Whether `role` is one the manifest keeps a stream under. */
export function isLogRole(manifest: ContainerManifest, role: string): boolean {
  return manifest.logs.stdout === role || manifest.logs.stderr === role;
}

// Logs name declared roles; a log role has no file; two files are never one (case folded, as docker.run checks).
function outputViolations(manifest: ContainerManifest, at: ManifestPlace): Violation[] {
  const violations: Violation[] = [];
  const roles = new Set(manifest.declaredOutputs.map((o) => o.role));
  for (const stream of ['stdout', 'stderr'] as const) {
    const role = manifest.logs[stream];
    if (role !== undefined && !roles.has(role)) violations.push(at(['logs', stream], `${role} is not a role of declaredOutputs`));
  }
  const files = new Map<string, number>();
  manifest.declaredOutputs.forEach((o, i) => {
    if (isLogRole(manifest, o.role)) {
      if (o.file !== undefined)
        violations.push(at(['declaredOutputs', i, 'file'], `role ${o.role} is a log (logs names it): it has no file`));
      return;
    }
    if (!CONTAINER_FILE_NAME.test(outputFile(o)))
      violations.push(at(['declaredOutputs', i, 'role'], `${o.role} is not a plain file name: give the output a file`));
    const key = outputFile(o).toLowerCase();
    const first = files.get(key);
    if (first !== undefined)
      violations.push(at(['declaredOutputs', i, 'file'], `the file ${outputFile(o)} is already the file of declaredOutputs[${first}]`));
    files.set(key, i);
  });
  return violations;
}

// Every placeholder names a required scalar parameter, a required input artifact, or an output file.
function templateViolations(manifest: ContainerManifest, inputSchema: JsonSchema, at: ManifestPlace): Violation[] {
  const violations: Violation[] = [];
  const properties = (inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(inputSchema.required) ? (inputSchema.required as string[]) : []);
  manifest.argv.forEach((entry, i) => {
    const place = ['argv', i] as const;
    if (entry.replace(PLACEHOLDER, '').includes('{{') || entry.replace(PLACEHOLDER, '').includes('}}'))
      violations.push(at(place, 'has an unclosed {{ or a stray }}'));
    for (const [, body] of entry.matchAll(PLACEHOLDER)) {
      const m = PLACEHOLDER_BODY.exec(body!);
      if (m === null) {
        violations.push(at(place, `{{${body}}} is not {{params.NAME}}, {{inputs.NAME}} or {{outputs.ROLE}}`));
        continue;
      }
      const [, kind, name] = m as unknown as [string, 'params' | 'inputs' | 'outputs', string];
      const why = kind === 'outputs' ? outputProblem(manifest, name) : inputProblem(kind, name, properties[name], required.has(name));
      if (why !== undefined) violations.push(at(place, `{{${body}}}: ${why}`));
    }
  });
  return violations;
}

function outputProblem(manifest: ContainerManifest, role: string): string | undefined {
  const output = manifest.declaredOutputs.find((o) => o.role === role);
  if (output === undefined) return `${role} is not a role of declaredOutputs`;
  return isLogRole(manifest, role) ? `${role} is a log, not a file of /work/out` : undefined;
}

function inputProblem(
  kind: 'params' | 'inputs',
  name: string,
  property: Record<string, unknown> | undefined,
  required: boolean,
): string | undefined {
  if (property === undefined) return `the input schema has no property ${name}`;
  if (!required) return `${name} must be required by the input schema: an absent value would leave a hole in argv`;
  const artifact = property[ARTIFACT_KEYWORD] === true;
  if (kind === 'inputs') return artifact ? undefined : `${name} is not an artifact id (x-helix-artifact: true)`;
  if (artifact) return `${name} is an artifact id: write {{inputs.${name}}}`;
  return typeof property.type === 'string' && SCALAR_TYPES.has(property.type)
    ? undefined
    : `${name} must have one scalar type (string, integer, number or boolean)`;
}
