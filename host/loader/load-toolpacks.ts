// The fail-closed toolpack loader: finds every `*.tool.yaml` under a directory, validates each
// manifest, its schemas and its module, and reports every violation at once. One violation
// anywhere and the host does not start.
import { statSync } from 'node:fs';
import path from 'node:path';
import { HelixError, MANIFEST_MAX_BYTES, MODULE_FILE_MAX_BYTES, type Policy, type ToolLimits, type ToolManifest, ToolManifestSchema } from '../../abi/index.js';
import { CAPABILITIES, findCapability } from '../../capabilities/index.js';
import { toolLimits } from '../policy/rules.js';
import type { DocumentProblem } from '../files/documents.js';
import { MANIFEST_SUFFIX, searchManifests } from './find-manifests.js';
import { compileJsonSchema, lazyJsonSchema, schemaCheckKey, type RefValidator, type Validator } from './json-schema.js';
import type { LoaderCache } from './loader-cache.js';
import { checkModule, type CheckedModule } from './module-check.js';
import { readPackFile, readRegularFile, realDir, resolveInPack, shown as display } from '../files/pack-files.js';
import { bundleSchema, fromPointer, schemaFiles, type JsonSchema } from './schema-bundle.js';
import { fieldPath, formatViolation, issueReason, type Violation } from '../files/violation.js';
import { parseYamlText } from '../files/yaml-document.js';

export { findManifests } from './find-manifests.js';

/** A toolpack that passed every check. */
export interface LoadedTool {
  readonly manifest: ToolManifest;
  readonly manifestPath: string;
  readonly modulePath: string;
  /** The manifest's limits capped by the policy, with its per-MiB rates. */
  readonly limits: ToolLimits;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly validateInput: Validator;
  /** validateInput that also reports the artifact ids the input refers to (x-helix-artifact). */
  readonly validateInputRefs: RefValidator;
  readonly validateOutput: Validator;
  readonly module: CheckedModule;
}

/** Everything found under a plugins directory. */
export interface LoadResult {
  readonly tools: LoadedTool[];
  readonly violations: Violation[];
}

/** Options of loadToolpacks. */
export interface LoadOptions {
  /**
   * The store's load cache (ABI-LOAD-008): modules instrumented and schemas checked before are
   * taken from it, what is checked now is written to it.
   */
  readonly cache?: LoaderCache;
}

/** Loads every toolpack under `dir`, checking each against the ABI and `policy`'s ceilings. */
export async function loadToolpacks(dir: string, policy: Policy, options: LoadOptions = {}): Promise<LoadResult> {
  const root = path.resolve(dir);
  try {
    if (!statSync(root).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    throw new HelixError('P-PRECOND-PLUGINS-DIR', { message: `The plugins directory ${dir} cannot be read: ${(err as Error).message}`, details: { dir } });
  }
  const tools: LoadedTool[] = [];
  const { manifests, violations } = searchManifests(root);
  if (manifests.length === 0 && violations.length === 0) {
    violations.push({ file: display(root), field: '-', reason: `no *${MANIFEST_SUFFIX} manifests found` });
  }
  for (const file of manifests) {
    const result = await loadOne(file, policy, options.cache);
    violations.push(...result.violations);
    if (result.tool !== undefined) tools.push(result.tool);
  }
  violations.push(...duplicateViolations(tools));
  await options.cache?.flush();
  tools.sort((a, b) => a.manifest.id.localeCompare(b.manifest.id) || a.manifest.version.localeCompare(b.manifest.version));
  return { tools, violations };
}

/** Loads like loadToolpacks, but throws P-PRECOND-MANIFEST-INVALID listing every violation (fail-closed). */
export async function loadToolpacksOrThrow(dir: string, policy: Policy, options: LoadOptions = {}): Promise<LoadedTool[]> {
  const { tools, violations } = await loadToolpacks(dir, policy, options);
  if (violations.length > 0) {
    throw new HelixError('P-PRECOND-MANIFEST-INVALID', {
      message: `${violations.length} toolpack violation${violations.length === 1 ? '' : 's'} under ${display(dir)}; the host refuses to start.`,
      details: { violations: violations.map(formatViolation) },
    });
  }
  return tools;
}

async function loadOne(file: string, policy: Policy, cache: LoaderCache | undefined): Promise<{ tool?: LoadedTool; violations: Violation[] }> {
  const shown = display(file);
  const violations: Violation[] = [];
  // The toolpack directory, symlinks resolved: nothing outside it is read (ABI-FILE-001).
  let packDir: string;
  try {
    packDir = realDir(path.dirname(file));
  } catch (err) {
    return { violations: [{ file: shown, field: '-', reason: `the toolpack directory cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})` }] };
  }
  const read = readRegularFile(file, MANIFEST_MAX_BYTES, packDir);
  if (!read.ok) return { violations: [{ file: shown, field: '-', reason: `the manifest ${read.reason}` }] };
  const doc = parseYamlText(read.bytes.toString('utf8'));
  if (!doc.ok) return { violations: doc.problems.map((p) => documentViolation(shown, p)) };
  const at = (p: readonly PropertyKey[], reason: string): Violation => {
    const line = doc.lineOf(p);
    return line === undefined ? { file: shown, field: fieldPath(p), reason } : { file: shown, field: fieldPath(p), reason, line };
  };

  const parsed = ToolManifestSchema.safeParse(doc.value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) violations.push(at([...issue.path, key], unknownKeyReason(key)));
      } else {
        violations.push(at(issue.path, issueReason(issue)));
      }
    }
    return { violations };
  }
  const manifest = parsed.data;
  const limits = toolLimits(policy, manifest);
  if (manifest.id.startsWith('helix.')) violations.push(at(['id'], 'the prefix helix. is reserved for the host built-in tools'));

  for (const [i, entry] of manifest.capabilities.allow.entries()) {
    if (findCapability(entry) !== undefined) continue;
    const scoped = CAPABILITIES.get(entry)?.scopeOf !== undefined;
    violations.push(at(['capabilities', 'allow', i], scoped ? `${entry} must name what it grants, e.g. ${entry}.db_password: the bare name would grant every one` : `unknown capability ${entry}: this host does not provide it`));
  }
  if (manifest.capabilities.allow.includes('http.request') && manifest.capabilities.network.length === 0) {
    violations.push(at(['capabilities', 'network'], 'http.request needs the origins it may reach, e.g. [https://api.example.org:443]'));
  }

  const schemas: Partial<Record<'inputSchema' | 'outputSchema', { schema: JsonSchema; validate: Validator; validateWithRefs: RefValidator }>> = {};
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
    const compiled = checkKey !== undefined && cache!.schemaChecked(checkKey) ? { ok: true as const, ...lazyJsonSchema(bundled.schema) } : compileJsonSchema(bundled.schema);
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

  let modulePath = path.resolve(path.dirname(file), manifest.module);
  let moduleBytes: Uint8Array | undefined;
  const moduleRead = readPackFile(manifest.module, packDir, packDir, MODULE_FILE_MAX_BYTES);
  if (moduleRead.ok) {
    moduleBytes = moduleRead.bytes;
    modulePath = moduleRead.file;
  } else if (moduleRead.reason === 'does not exist') {
    violations.push(at(['module'], `${display(modulePath)} does not exist; build the toolpack first ("helix build" in its directory)`));
  } else {
    violations.push(at(['module'], `${manifest.module} ${moduleRead.reason}`));
  }
  if (manifest.health !== undefined) {
    // helix test reads the fixtures; a folder outside the toolpack is refused here already.
    const fixtures = resolveInPack(manifest.health.fixtures, packDir, packDir);
    if (!fixtures.ok && fixtures.reason !== 'does not exist') violations.push(at(['health', 'fixtures'], `${manifest.health.fixtures} ${fixtures.reason}`));
  }
  let checked: CheckedModule | undefined;
  if (moduleBytes !== undefined) {
    const result = await checkModule(moduleBytes, manifest, limits.maxMemoryPages, cache);
    if (result.ok) checked = result.module;
    else for (const p of result.problems) violations.push(at(p.field === 'module' ? ['module'] : p.field.split('.'), p.reason));
  }
  if (violations.length > 0 || checked === undefined || !schemas.inputSchema || !schemas.outputSchema) return { violations };
  return {
    violations,
    tool: {
      manifest,
      manifestPath: file,
      modulePath,
      limits,
      inputSchema: schemas.inputSchema.schema,
      outputSchema: schemas.outputSchema.schema,
      validateInput: schemas.inputSchema.validate,
      validateInputRefs: schemas.inputSchema.validateWithRefs,
      validateOutput: schemas.outputSchema.validate,
      module: checked,
    },
  };
}

const KNOWN_FIELDS = Object.keys(ToolManifestSchema.shape);

function unknownKeyReason(key: string): string {
  const camel = key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  if (camel !== key && KNOWN_FIELDS.includes(camel)) return `unknown field; manifests use camelCase: write ${camel}`;
  return 'unknown field';
}

function duplicateViolations(tools: readonly LoadedTool[]): Violation[] {
  const seen = new Map<string, LoadedTool>();
  const out: Violation[] = [];
  for (const t of tools) {
    const key = `${t.manifest.id}@${t.manifest.version}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, t);
    else out.push({ file: display(t.manifestPath), field: 'id', reason: `duplicate tool ${key}: also defined in ${display(first.manifestPath)}` });
  }
  return out;
}

/** A violation inside a schema file: its place is a JSON pointer (`/properties/x/type`), `-` for the whole file. */
function schemaFileViolation(file: string, pointer: string, reason: string, line: number | undefined): Violation {
  const v: Violation = { file: display(file), field: pointer === '' ? '-' : pointer, reason };
  return line === undefined ? v : { ...v, line };
}

function documentViolation(file: string, p: DocumentProblem): Violation {
  const v: Violation = { file, field: fieldPath(p.path), reason: p.reason };
  return p.line === undefined ? v : { ...v, line: p.line };
}
