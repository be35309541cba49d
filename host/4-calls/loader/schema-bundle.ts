// Resolves `$ref`s to files in a tool's input/output schema, relative to the referencing file,
// and bundles everything into one self-contained JSON Schema (referenced files go under $defs),
// so validators and MCP clients see a single document. Nested and cyclic refs are supported;
// only files inside the toolpack are read, within the bounds of ABI-FILE-001..009.
import path from 'node:path';
import { fromPointer, SCHEMA_FILE_MAX_BYTES, SCHEMA_FILES_MAX_COUNT, SCHEMA_FILES_MAX_TOTAL_BYTES } from '../../../abi/index.js';
import { parseDocumentText } from '../../1-base/files/documents.js';
import { readRegularFile, realDir, resolveInPack } from '../../1-base/files/pack-files.js';
import { at } from './schema-words.js';

/** A JSON Schema as plain data. */
export type JsonSchema = Record<string, unknown>;

/** A problem found while bundling: which file, which JSON pointer inside it and, where known, the line. */
export interface BundleProblem {
  readonly file: string;
  readonly pointer: string;
  readonly reason: string;
  readonly line?: number;
}

/** A place in the bundled schema traced back to the file it came from. */
export interface SchemaPlace {
  readonly file: string;
  /** JSON pointer inside that file (for the manifest: inside the inputSchema/outputSchema value). */
  readonly pointer: string;
  readonly line?: number;
}

/**
 * The bundled schema with `locate`, which traces a JSON pointer into it back to its file, or the
 * problems that stopped it.
 */
export type BundleResult =
  | { ok: true; schema: JsonSchema; locate: (pointer: string) => SchemaPlace }
  | { ok: false; problems: BundleProblem[] };

/**
 * The schema files one toolpack has loaded, by real path: its input and output schema share
 * them, so each file is read, parsed and counted against the bounds once.
 */
export interface SchemaFiles {
  /** The toolpack directory (real path): no file outside it is read. */
  readonly packDir: string;
  readonly docs: Map<string, SchemaDoc | typeof REFUSED>;
  bytes: number;
}

/** An empty SchemaFiles for the toolpack in `packDir` (a real path). */
export function schemaFiles(packDir: string): SchemaFiles {
  return { packDir, docs: new Map(), bytes: 0 };
}

/** A parsed schema file, with the lines of its paths for messages. */
interface SchemaDoc {
  readonly doc: unknown;
  readonly lineOf: (path: readonly PropertyKey[]) => number | undefined;
}

const DEFS_PREFIX = 'file_';
const REMOTE = /^[a-z][a-z0-9+.-]*:/i;
// A file that was read but refused: later refs to it add no second report.
const REFUSED = Symbol('refused');

/**
 * Bundles `root` (which lives in `rootFile`, the manifest) into a single schema.
 * Every file-level `$ref` becomes `#/$defs/file_<name>...`; internal refs of a referenced
 * file are rewritten to point inside its new home.
 */
export function bundleSchema(
  root: unknown,
  rootFile: string,
  files: SchemaFiles = schemaFiles(realDir(path.dirname(rootFile))),
): BundleResult {
  const problems: BundleProblem[] = [];
  // A problem at a pointer of a file; inside a schema file it gets that file's line.
  const report = (file: string, pointer: string, reason: string): void => {
    const loaded = files.docs.get(file);
    const line = loaded === undefined || loaded === REFUSED ? undefined : loaded.lineOf(fromPointer(pointer));
    problems.push(line === undefined ? { file, pointer, reason } : { file, pointer, reason, line });
  };
  const keys = new Map<string, string>();
  const defs: Record<string, unknown> = {};
  const usedKeys = new Set<string>();
  // Refs in the manifest resolve from the toolpack directory; refs in a schema file from its own.
  const baseDir = (file: string): string => (file === rootFile ? files.packDir : path.dirname(file));

  const keyFor = (file: string): string => {
    const known = keys.get(file);
    if (known !== undefined) return known;
    const base =
      DEFS_PREFIX +
      path
        .basename(file)
        .replace(/\.(json|ya?ml)$/i, '')
        .replace(/[^A-Za-z0-9_]/g, '_');
    let key = base;
    for (let n = 2; usedKeys.has(key); n += 1) key = `${base}_${n}`;
    usedKeys.add(key);
    keys.set(file, key);
    return key;
  };

  // The parsed document a $ref names, or undefined after recording why it cannot be had.
  const fetch = (ref: string, target: string, fromFile: string, pointer: string): { file: string; doc: unknown } | undefined => {
    const refused = (reason: string): undefined => {
      report(fromFile, pointer, `$ref ${ref} ${reason}`);
      return undefined;
    };
    const resolved = resolveInPack(target, baseDir(fromFile), files.packDir);
    if (!resolved.ok) return refused(resolved.reason);
    const file = resolved.file;
    if (!files.docs.has(file)) {
      if (files.docs.size >= SCHEMA_FILES_MAX_COUNT)
        return refused(`would load more than ${SCHEMA_FILES_MAX_COUNT} schema files for this toolpack (ABI-FILE-006)`);
      const read = readRegularFile(file, SCHEMA_FILE_MAX_BYTES, files.packDir);
      if (!read.ok) return refused(read.reason);
      files.bytes += read.bytes.length;
      if (files.bytes > SCHEMA_FILES_MAX_TOTAL_BYTES)
        return refused(`brings this toolpack's schema files past ${SCHEMA_FILES_MAX_TOTAL_BYTES} bytes in total (ABI-FILE-006)`);
      files.docs.set(file, parseSchemaFile(read.bytes.toString('utf8'), file, problems));
    }
    const loaded = files.docs.get(file)!;
    return loaded === REFUSED ? undefined : { file, doc: loaded.doc };
  };

  const load = (ref: string, target: string, fromFile: string, pointer: string): { key: string; doc: unknown } | undefined => {
    const fetched = fetch(ref, target, fromFile, pointer);
    if (fetched === undefined) return undefined;
    if (keys.has(fetched.file)) return { key: keys.get(fetched.file)!, doc: fetched.doc };
    // Reserve the key before descending, so cycles terminate.
    const key = keyFor(fetched.file);
    const rewritten = rewrite(fetched.doc, fetched.file, false, '');
    if (isObject(rewritten)) {
      delete rewritten.$schema;
      delete rewritten.$id;
    }
    defs[key] = rewritten;
    return { key, doc: fetched.doc };
  };

  // A $ref's fragment must name a place in its document; said here, where the file and line are known.
  const checkFragment = (doc: unknown, fragment: string, ref: string, file: string, pointer: string, where: string): void => {
    if (fragment === '' || at(doc, fragment) !== undefined) return;
    const parent = fragment.slice(0, fragment.lastIndexOf('/'));
    const siblings = at(doc, parent);
    const has = isObject(siblings) ? ` (${parent || 'the root'} has: ${Object.keys(siblings).slice(0, 10).join(', ') || 'nothing'})` : '';
    report(file, pointer, `$ref ${ref} points at nothing: ${where} has no ${fragment}${has}`);
  };
  const docOf = (file: string): unknown => {
    if (file === rootDocFile) return rootNode;
    const loaded = files.docs.get(file);
    return loaded === undefined || loaded === REFUSED ? undefined : loaded.doc;
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
      report(file, pointer, `$ref ${ref}: only JSON pointer fragments (#/...) are supported`);
      return ref;
    }
    if (target === '') {
      checkFragment(docOf(file), fragment, ref, file, pointer, file === rootFile ? 'this schema' : path.basename(file));
      // Internal ref: still valid at the root; inside a bundled file it moves under $defs.
      return isRoot ? ref : `#/$defs/${keys.get(file) ?? ''}${fragment}`;
    }
    if (REMOTE.test(target)) {
      report(file, pointer, `$ref ${ref}: remote references are not allowed; use a file path relative to ${path.basename(file)}`);
      return ref;
    }
    const loaded = load(ref, target, file, pointer);
    if (loaded === undefined) return ref;
    checkFragment(loaded.doc, fragment, ref, file, pointer, target);
    return loaded.key === '' ? `#${fragment}` : `#/$defs/${loaded.key}${fragment}`;
  };

  if (!isObject(root)) {
    return { ok: false, problems: [{ file: rootFile, pointer: '', reason: 'a schema must be an object' }] };
  }
  // A root that is only a file ref becomes that file's document, so titles and types show.
  let rootNode: unknown = root;
  let rootDocFile = rootFile;
  if (Object.keys(root).length === 1 && typeof root.$ref === 'string' && !root.$ref.includes('#')) {
    if (REMOTE.test(root.$ref)) {
      return {
        ok: false,
        problems: [{ file: rootFile, pointer: '/$ref', reason: `$ref ${root.$ref}: remote references are not allowed` }],
      };
    }
    const fetched = fetch(root.$ref, root.$ref, rootFile, '/$ref');
    if (fetched === undefined) return { ok: false, problems };
    if (!isObject(fetched.doc)) {
      return { ok: false, problems: [{ file: fetched.file, pointer: '', reason: 'a JSON Schema must be an object' }] };
    }
    rootNode = fetched.doc;
    rootDocFile = fetched.file;
    keys.set(fetched.file, ''); // internal refs of the root document stay at the root
  }
  const bundled = rewrite(rootNode, rootDocFile, true, '') as JsonSchema;
  if (problems.length > 0) return { ok: false, problems };
  if (Object.keys(defs).length > 0) {
    const existing = isObject(bundled.$defs) ? bundled.$defs : {};
    bundled.$defs = { ...existing, ...defs };
  }
  delete bundled.$id;
  const fileOfKey = new Map([...keys].filter(([, key]) => key !== '').map(([file, key]) => [key, file]));
  const locate = (pointer: string): SchemaPlace => {
    const parts = fromPointer(pointer);
    const moved = parts[0] === '$defs' && parts[1] !== undefined ? fileOfKey.get(parts[1]) : undefined;
    const file = moved ?? rootDocFile;
    const inside = moved === undefined ? parts : parts.slice(2);
    const loaded = files.docs.get(file);
    // The place itself, or the nearest enclosing one the file has (Ajv may name a missing member).
    let line: number | undefined;
    for (let n = inside.length; line === undefined && n >= 0 && loaded !== undefined && loaded !== REFUSED; n--)
      line = loaded.lineOf(inside.slice(0, n));
    const place = { file, pointer: toPointer(inside) };
    return line === undefined ? place : { ...place, line };
  };
  return { ok: true, schema: bundled, locate };
}

/** Parses a schema file read from the toolpack; REFUSED (with its problems recorded) when it is not a schema. */
function parseSchemaFile(text: string, file: string, problems: BundleProblem[]): SchemaDoc | typeof REFUSED {
  const parsed = parseDocumentText(text, file);
  if (!parsed.ok) {
    for (const p of parsed.problems) {
      // JSON.parse names a character offset: the author needs the line and column.
      const offset = p.line === undefined ? /at position (\d+)/.exec(p.reason)?.[1] : undefined;
      if (offset === undefined) {
        problems.push({ file, pointer: toPointer(p.path), reason: p.reason, ...(p.line === undefined ? {} : { line: p.line }) });
        continue;
      }
      const before = text.slice(0, Number(offset)).split('\n');
      const column = before[before.length - 1]!.length + 1;
      const why = p.reason.replace(/^not valid JSON: /, '').replace(/ in JSON at position \d+( \(line \d+ column \d+\))?/, '');
      problems.push({
        file,
        pointer: toPointer(p.path),
        reason: `not valid JSON at line ${before.length}, column ${column}: ${why}`,
        line: before.length,
      });
    }
    return REFUSED;
  }
  if (!isObject(parsed.value) && typeof parsed.value !== 'boolean') {
    problems.push({ file, pointer: '', reason: 'a JSON Schema must be an object or a boolean' });
    return REFUSED;
  }
  return { doc: parsed.value, lineOf: parsed.lineOf };
}

function toPointer(p: ReadonlyArray<string | number>): string {
  return p.map((s) => `/${escapePointer(String(s))}`).join('');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
