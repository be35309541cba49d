// The fail-closed toolpack loader: finds every `*.tool.yaml` under a directory, validates each
// manifest, its schemas and its module, and reports every violation at once. One violation
// anywhere and the host does not start.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ToolManifestSchema, type Policy, type ToolManifest } from '../../abi/index.js';
import { CAPABILITIES, findCapability } from '../../capabilities/index.js';
import { HelixError } from '../errors.js';
import { toolLimits, type EffectiveLimits } from '../policy/rules.js';
import { compileJsonSchema, type RefValidator, type Validator } from './json-schema.js';
import { checkModule, type CheckedModule } from './module-check.js';
import { bundleSchema, type JsonSchema } from './schema-bundle.js';
import { fieldPath, formatViolation, issueReason, type Violation } from './violation.js';

/** A toolpack that passed every check. */
export interface LoadedTool {
  readonly manifest: ToolManifest;
  readonly manifestPath: string;
  readonly modulePath: string;
  /** The manifest's limits capped by the policy. */
  readonly limits: EffectiveLimits;
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

const MANIFEST_SUFFIX = '.tool.yaml';
const SKIP_DIRS = new Set(['node_modules', '.git', 'build', 'dist']);

/** Finds manifest files under `dir`, sorted, skipping dependency and build folders. */
export function findManifests(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.isDirectory() && !SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(path.join(d, entry.name));
      else if (entry.isFile() && entry.name.endsWith(MANIFEST_SUFFIX)) found.push(path.join(d, entry.name));
    }
  };
  walk(dir);
  return found;
}

/** Loads every toolpack under `dir`, checking each against the ABI and `policy`'s ceilings. */
export async function loadToolpacks(dir: string, policy: Policy): Promise<LoadResult> {
  const root = path.resolve(dir);
  try {
    if (!statSync(root).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    throw new HelixError('P-PRECOND-PLUGINS-DIR', { message: `The plugins directory ${dir} cannot be read: ${(err as Error).message}`, details: { dir } });
  }
  const violations: Violation[] = [];
  const tools: LoadedTool[] = [];
  const manifests = findManifests(root);
  if (manifests.length === 0) {
    violations.push({ file: display(root), field: '-', reason: `no *${MANIFEST_SUFFIX} manifests found` });
  }
  for (const file of manifests) {
    const result = await loadOne(file, root, policy);
    violations.push(...result.violations);
    if (result.tool !== undefined) tools.push(result.tool);
  }
  violations.push(...duplicateViolations(tools));
  tools.sort((a, b) => a.manifest.id.localeCompare(b.manifest.id) || a.manifest.version.localeCompare(b.manifest.version));
  return { tools, violations };
}

/** Loads like loadToolpacks, but throws P-PRECOND-MANIFEST-INVALID listing every violation (fail-closed). */
export async function loadToolpacksOrThrow(dir: string, policy: Policy): Promise<LoadedTool[]> {
  const { tools, violations } = await loadToolpacks(dir, policy);
  if (violations.length > 0) {
    throw new HelixError('P-PRECOND-MANIFEST-INVALID', {
      message: `${violations.length} toolpack violation${violations.length === 1 ? '' : 's'} under ${display(dir)}; the host refuses to start.`,
      details: { violations: violations.map(formatViolation) },
    });
  }
  return tools;
}

async function loadOne(file: string, root: string, policy: Policy): Promise<{ tool?: LoadedTool; violations: Violation[] }> {
  const shown = display(file);
  const violations: Violation[] = [];
  const text = readFileSync(file, 'utf8');
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return { violations: doc.errors.map((e) => ({ file: shown, field: '-', reason: `invalid YAML: ${e.message.split('\n')[0]}`, line: lineCounter.linePos(e.pos[0]).line })) };
  }
  const lineOf = (p: readonly PropertyKey[]): number | undefined => {
    const node = doc.getIn(p as unknown[], true) as { range?: [number, number, number] } | undefined;
    return node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
  };
  const at = (p: readonly PropertyKey[], reason: string): Violation => {
    const line = lineOf(p);
    return line === undefined ? { file: shown, field: fieldPath(p), reason } : { file: shown, field: fieldPath(p), reason, line };
  };

  const parsed = ToolManifestSchema.safeParse(doc.toJS());
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
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const bundled = bundleSchema(manifest[key], file);
    if (!bundled.ok) {
      for (const p of bundled.problems) {
        if (p.file === file) {
          violations.push({ ...at([key], p.reason), field: p.pointer === '' ? key : `${key}${p.pointer.replaceAll('/', '.')}` });
        } else {
          // A problem inside a referenced schema file is reported against that file.
          violations.push({ file: display(p.file), field: p.pointer === '' ? '-' : p.pointer.slice(1).replaceAll('/', '.'), reason: p.reason });
        }
      }
      continue;
    }
    const compiled = compileJsonSchema(bundled.schema);
    if (!compiled.ok) {
      for (const reason of compiled.problems) violations.push(at([key], `not a valid JSON Schema: ${reason}`));
      continue;
    }
    if (key === 'inputSchema' && bundled.schema.type !== 'object') {
      violations.push(at([key], 'must describe an object (type: object): tool input is a JSON object'));
      continue;
    }
    schemas[key] = { schema: bundled.schema, validate: compiled.validate, validateWithRefs: compiled.validateWithRefs };
  }

  const modulePath = path.resolve(path.dirname(file), manifest.module);
  let moduleBytes: Uint8Array | undefined;
  if (path.isAbsolute(manifest.module) || !isInside(modulePath, root)) {
    violations.push(at(['module'], `must be a relative path inside the plugins directory ${display(root)}`));
  } else {
    try {
      moduleBytes = readFileSync(modulePath);
    } catch (err) {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      violations.push(at(['module'], missing ? `${display(modulePath)} does not exist; build the toolpack first (npm run build)` : `cannot read ${display(modulePath)}: ${(err as Error).message}`));
    }
  }
  let checked: CheckedModule | undefined;
  if (moduleBytes !== undefined) {
    const result = await checkModule(moduleBytes, manifest, limits.maxMemoryPages);
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

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function display(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel === '' ? '.' : rel.startsWith('..') ? p : rel;
}
