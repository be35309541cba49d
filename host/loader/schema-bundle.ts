// Resolves `$ref`s to files in a tool's input/output schema, relative to the referencing file,
// and bundles everything into one self-contained JSON Schema (referenced files go under $defs),
// so validators and MCP clients see a single document. Nested and cyclic refs are supported.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

/** A JSON Schema as plain data. */
export type JsonSchema = Record<string, unknown>;

/** A problem found while bundling: which file and which JSON pointer inside it. */
export interface BundleProblem {
  readonly file: string;
  readonly pointer: string;
  readonly reason: string;
}

/** The bundled schema, or the problems that stopped it. */
export type BundleResult = { ok: true; schema: JsonSchema } | { ok: false; problems: BundleProblem[] };

const DEFS_PREFIX = 'file_';

/**
 * Bundles `root` (which lives in `rootFile`, for relative refs) into a single schema.
 * Every file-level `$ref` becomes `#/$defs/file_<name>...`; internal refs of a referenced
 * file are rewritten to point inside its new home.
 */
export function bundleSchema(root: unknown, rootFile: string): BundleResult {
  const problems: BundleProblem[] = [];
  const keys = new Map<string, string>();
  const defs: Record<string, unknown> = {};
  const usedKeys = new Set<string>();

  const keyFor = (file: string): string => {
    const known = keys.get(file);
    if (known !== undefined) return known;
    const base = DEFS_PREFIX + path.basename(file).replace(/\.(json|ya?ml)$/i, '').replace(/[^A-Za-z0-9_]/g, '_');
    let key = base;
    for (let n = 2; usedKeys.has(key); n += 1) key = `${base}_${n}`;
    usedKeys.add(key);
    keys.set(file, key);
    return key;
  };

  const load = (file: string, fromFile: string, pointer: string): string | undefined => {
    if (keys.has(file)) return keys.get(file);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `$ref target ${file} does not exist` : `$ref target ${file} cannot be read: ${(err as Error).message}`;
      problems.push({ file: fromFile, pointer, reason });
      return undefined;
    }
    let doc: unknown;
    try {
      doc = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
    } catch (err) {
      problems.push({ file, pointer: '', reason: `not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(err as Error).message}` });
      return undefined;
    }
    if (!isObject(doc) && typeof doc !== 'boolean') {
      problems.push({ file, pointer: '', reason: 'a JSON Schema must be an object or a boolean' });
      return undefined;
    }
    // Reserve the key before descending, so cycles terminate.
    const key = keyFor(file);
    const rewritten = rewrite(doc, file, false, '');
    if (isObject(rewritten)) {
      delete rewritten.$schema;
      delete rewritten.$id;
    }
    defs[key] = rewritten;
    return key;
  };

  const rewrite = (node: unknown, file: string, isRoot: boolean, pointer: string): unknown => {
    if (Array.isArray(node)) return node.map((item, i) => rewrite(item, file, isRoot, `${pointer}/${i}`));
    if (!isObject(node)) return node;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(node)) {
      const here = `${pointer}/${escapePointer(k)}`;
      if (k === '$ref' && typeof v === 'string') {
        out[k] = rewriteRef(v, file, isRoot, here);
      } else if (k === 'const' || k === 'enum' || k === 'default' || k === 'examples') {
        out[k] = v; // data, not schema: never rewrite refs inside it
      } else {
        out[k] = rewrite(v, file, isRoot, here);
      }
    }
    return out;
  };

  const rewriteRef = (ref: string, file: string, isRoot: boolean, pointer: string): string => {
    const hash = ref.indexOf('#');
    const target = hash === -1 ? ref : ref.slice(0, hash);
    const fragment = hash === -1 ? '' : ref.slice(hash + 1);
    if (fragment !== '' && !fragment.startsWith('/')) {
      problems.push({ file, pointer, reason: `$ref ${ref}: only JSON pointer fragments (#/...) are supported` });
      return ref;
    }
    if (target === '') {
      // Internal ref: still valid at the root; inside a bundled file it moves under $defs.
      return isRoot ? ref : `#/$defs/${keys.get(file) ?? ''}${fragment}`;
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      problems.push({ file, pointer, reason: `$ref ${ref}: remote references are not allowed; use a file path relative to ${path.basename(file)}` });
      return ref;
    }
    const resolved = path.resolve(path.dirname(file), target);
    const key = load(resolved, file, pointer);
    if (key === undefined) return ref;
    return key === '' ? `#${fragment}` : `#/$defs/${key}${fragment}`;
  };

  if (!isObject(root)) {
    return { ok: false, problems: [{ file: rootFile, pointer: '', reason: 'a schema must be an object' }] };
  }
  // A root that is only a file ref becomes that file's document, so titles and types show.
  const keys0 = Object.keys(root);
  let rootNode: unknown = root;
  let rootDocFile = rootFile;
  if (keys0.length === 1 && typeof root.$ref === 'string' && !root.$ref.startsWith('#') && !root.$ref.includes('#')) {
    const target = path.resolve(path.dirname(rootFile), root.$ref);
    if (/^[a-z][a-z0-9+.-]*:/i.test(root.$ref)) {
      return { ok: false, problems: [{ file: rootFile, pointer: '/$ref', reason: `$ref ${root.$ref}: remote references are not allowed` }] };
    }
    try {
      const text = readFileSync(target, 'utf8');
      rootNode = /\.ya?ml$/i.test(target) ? parseYaml(text) : JSON.parse(text);
      rootDocFile = target;
      keys.set(target, ''); // internal refs of the root document stay at the root
    } catch (err) {
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      const reason = missing ? `$ref target ${target} does not exist` : `$ref target ${target} is not valid: ${(err as Error).message}`;
      return { ok: false, problems: [{ file: missing ? rootFile : target, pointer: missing ? '/$ref' : '', reason }] };
    }
    if (!isObject(rootNode)) {
      return { ok: false, problems: [{ file: target, pointer: '', reason: 'a JSON Schema must be an object' }] };
    }
  }
  const bundled = rewrite(rootNode, rootDocFile, true, '') as JsonSchema;
  if (problems.length > 0) return { ok: false, problems };
  if (Object.keys(defs).length > 0) {
    const existing = isObject(bundled.$defs) ? bundled.$defs : {};
    bundled.$defs = { ...existing, ...defs };
  }
  delete bundled.$id;
  return { ok: true, schema: bundled };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
