// The fail-closed toolpack loader: finds every `*.tool.yaml` under a directory, validates each
// manifest, its schemas and its module, and reports every violation at once. One violation
// anywhere and the host does not start.
import { statSync } from 'node:fs';
import path from 'node:path';
import {
  HelixError,
  MANIFEST_MAX_BYTES,
  MODULE_FILE_MAX_BYTES,
  type Policy,
  type ToolLimits,
  type ToolManifest,
  ToolManifestSchema,
} from '../../../abi/index.js';
import { CAPABILITIES, findCapability } from '../../../capabilities/index.js';
import { toolLimits } from '../policy/rules.js';
import type { DocumentProblem } from '../../1-base/files/documents.js';
import { MANIFEST_SUFFIX, searchManifests } from './find-manifests.js';
import type { RefValidator, Validator } from './json-schema.js';
import type { LoaderCache } from './loader-cache.js';
import { checkModule, type CheckedModule } from '../../2-sandbox/modules/module-pipeline.js';
import { readPackFile, readRegularFile, realDir, resolveInPack, shown as display } from '../../1-base/files/pack-files.js';
import type { JsonSchema } from './schema-bundle.js';
import { loadManifestSchemas, manifestIssueViolations } from './manifest-schemas.js';
import { isContainerDocument, loadContainerManifest, type LoadedContainer } from './load-container.js';
import { fieldPath, formatViolation, type Violation } from '../../1-base/files/violation.js';
import { parseYamlText } from '../../1-base/files/yaml-document.js';

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

/** Everything found under a toolpacks directory: WebAssembly toolpacks, container toolpacks, violations. */
export interface LoadResult {
  readonly tools: LoadedTool[];
  readonly containers: LoadedContainer[];
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
    throw new HelixError('P-PRECOND-PLUGINS-DIR', {
      message: `The toolpacks directory ${dir} cannot be read: ${(err as Error).message}`,
      details: { dir },
    });
  }
  const tools: LoadedTool[] = [];
  const containers: LoadedContainer[] = [];
  const { manifests, violations } = searchManifests(root);
  if (manifests.length === 0 && violations.length === 0) {
    violations.push({ file: display(root), field: '-', reason: `no *${MANIFEST_SUFFIX} manifests found` });
  }
  for (const file of manifests) {
    const result = await loadOne(file, policy, options.cache);
    violations.push(...result.violations);
    if (result.tool !== undefined) tools.push(result.tool);
    if (result.container !== undefined) containers.push(result.container);
  }
  violations.push(...duplicateViolations([...tools, ...containers]));
  await options.cache?.flush();
  const order = (a: { manifest: { id: string; version: string } }, b: { manifest: { id: string; version: string } }) =>
    a.manifest.id.localeCompare(b.manifest.id) || a.manifest.version.localeCompare(b.manifest.version);
  tools.sort(order);
  containers.sort(order);
  return { tools, containers, violations };
}

/** Loads like loadToolpacks, but throws P-PRECOND-MANIFEST-INVALID listing every violation (fail-closed). */
export async function loadToolpacksOrThrow(dir: string, policy: Policy, options: LoadOptions = {}): Promise<LoadedTool[]> {
  return (await loadEveryToolpackOrThrow(dir, policy, options)).tools;
}

/** Loads every toolpack of either kind like loadToolpacks, but throws P-PRECOND-MANIFEST-INVALID listing every violation (fail-closed). */
export async function loadEveryToolpackOrThrow(
  dir: string,
  policy: Policy,
  options: LoadOptions = {},
): Promise<Omit<LoadResult, 'violations'>> {
  const { tools, containers, violations } = await loadToolpacks(dir, policy, options);
  if (violations.length > 0) {
    throw new HelixError('P-PRECOND-MANIFEST-INVALID', {
      message: `${violations.length} toolpack violation${violations.length === 1 ? '' : 's'} under ${display(dir)}; the host refuses to start.`,
      details: { violations: violations.map(formatViolation) },
    });
  }
  return { tools, containers };
}

async function loadOne(
  file: string,
  policy: Policy,
  cache: LoaderCache | undefined,
): Promise<{ tool?: LoadedTool; container?: LoadedContainer; violations: Violation[] }> {
  const shown = display(file);
  const violations: Violation[] = [];
  // The toolpack directory, symlinks resolved: nothing outside it is read (ABI-FILE-001).
  let packDir: string;
  try {
    packDir = realDir(path.dirname(file));
  } catch (err) {
    return {
      violations: [
        {
          file: shown,
          field: '-',
          reason: `the toolpack directory cannot be resolved (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        },
      ],
    };
  }
  const read = readRegularFile(file, MANIFEST_MAX_BYTES, packDir);
  if (!read.ok) return { violations: [{ file: shown, field: '-', reason: `the manifest ${read.reason}` }] };
  const doc = parseYamlText(read.bytes.toString('utf8'));
  if (!doc.ok) return { violations: doc.problems.map((p) => documentViolation(shown, p)) };
  const at = (p: readonly PropertyKey[], reason: string): Violation => {
    const line = doc.lineOf(p);
    return line === undefined ? { file: shown, field: fieldPath(p), reason } : { file: shown, field: fieldPath(p), reason, line };
  };

  if (isContainerDocument(doc.value)) return loadContainerManifest(doc.value, file, packDir, policy, cache, at);
  const parsed = ToolManifestSchema.safeParse(doc.value);
  if (!parsed.success) return { violations: manifestIssueViolations(parsed.error.issues, KNOWN_FIELDS, at) };
  const manifest = parsed.data;
  const limits = toolLimits(policy, manifest);
  if (manifest.id.startsWith('helix.')) violations.push(at(['id'], 'the prefix helix. is reserved for the host built-in tools'));

  for (const [i, entry] of manifest.capabilities.allow.entries()) {
    if (findCapability(entry) !== undefined) continue;
    const scoped = CAPABILITIES.get(entry)?.scopeOf !== undefined;
    violations.push(
      at(
        ['capabilities', 'allow', i],
        scoped
          ? `${entry} must name what it grants, e.g. ${entry}.db_password: the bare name would grant every one`
          : `unknown capability ${entry}: this host does not provide it`,
      ),
    );
  }
  if (manifest.capabilities.allow.includes('http.request') && manifest.capabilities.network.length === 0) {
    violations.push(at(['capabilities', 'network'], 'http.request needs the origins it may reach, e.g. [https://api.example.org:443]'));
  }

  const { schemas, violations: schemaViolations } = loadManifestSchemas(manifest, file, packDir, cache, at);
  violations.push(...schemaViolations);

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
    if (!fixtures.ok && fixtures.reason !== 'does not exist')
      violations.push(at(['health', 'fixtures'], `${manifest.health.fixtures} ${fixtures.reason}`));
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

function duplicateViolations(
  tools: ReadonlyArray<{ readonly manifest: { readonly id: string; readonly version: string }; readonly manifestPath: string }>,
): Violation[] {
  const seen = new Map<string, (typeof tools)[number]>();
  const out: Violation[] = [];
  for (const t of tools) {
    const key = `${t.manifest.id}@${t.manifest.version}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, t);
    else
      out.push({
        file: display(t.manifestPath),
        field: 'id',
        reason: `duplicate tool ${key}: also defined in ${display(first.manifestPath)}`,
      });
  }
  return out;
}

function documentViolation(file: string, p: DocumentProblem): Violation {
  const v: Violation = { file, field: fieldPath(p.path), reason: p.reason };
  return p.line === undefined ? v : { ...v, line: p.line };
}
