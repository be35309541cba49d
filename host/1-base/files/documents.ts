// Parses the documents a host loads (manifests, schema files, policies, fixtures) from text into
// JSON data within the bounds of ABI-FILE-007..009, as YAML or JSON by file name. Every failure
// is a listed problem with a path and, where known, a line; nothing here recurses on the data.
// It serves files only, whose lines it reports; values from clients and guests are not its job.
import { LineCounter, parseDocument, type Node } from 'yaml';
import { DOCUMENT_MAX_DEPTH } from '../../../abi/index.js';
import { parseYamlText, type DocumentProblem, type ParsedDocument } from './yaml-document.js';

export type { DocumentProblem, ParsedDocument };

/** Whether a file name says YAML (`.yaml`, `.yml`); anything else is read as JSON. */
export function isYamlFile(file: string): boolean {
  return /\.ya?ml$/i.test(file);
}

/** Parses `text` as YAML or JSON, chosen by `file`'s name. */
export function parseDocumentText(text: string, file: string): ParsedDocument {
  return isYamlFile(file) ? parseYamlText(text) : parseJsonText(text);
}

/** Parses JSON text: depth checked on the text first, then non-finite numbers (`1e400`) refused. */
export function parseJsonText(text: string): ParsedDocument {
  const deep = jsonTextDepth(text);
  if (deep !== undefined)
    return {
      ok: false,
      problems: [{ path: [], reason: `nested deeper than ${DOCUMENT_MAX_DEPTH} levels of arrays and objects (ABI-FILE-007)`, line: deep }],
    };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [{ path: [], reason: `not valid JSON: ${(err as Error).message}` }] };
  }
  const lineOf = jsonLines(text);
  const bad = nonFinitePath(value);
  if (bad !== undefined) {
    const line = lineOf(bad);
    const reason = 'is a number too large for a double (it reads as infinity): write a smaller value (ABI-FILE-009)';
    return { ok: false, problems: [line === undefined ? { path: bad, reason } : { path: bad, reason, line }] };
  }
  return { ok: true, value, lineOf };
}

/** The line at which JSON text first nests deeper than the bound, or undefined; strings are skipped. */
function jsonTextDepth(text: string): number | undefined {
  let depth = 0;
  let line = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line += 1;
    if (inString) {
      if (c === 92)
        i += 1; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 91 || c === 123) {
      depth += 1;
      if (depth > DOCUMENT_MAX_DEPTH) return line;
    } else if (c === 93 || c === 125) {
      depth -= 1;
    }
  }
  return undefined;
}

/** The path of the first non-finite number in parsed JSON (iterative), or undefined. */
function nonFinitePath(root: unknown): Array<string | number> | undefined {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) return path;
    if (Array.isArray(value)) for (const [i, v] of value.entries()) stack.push({ value: v, path: [...path, i] });
    else if (typeof value === 'object' && value !== null)
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: [...path, k] });
  }
  return undefined;
}

// Lines of a JSON document, for messages only: JSON within the depth bound is YAML, so yaml's
// parser finds the line of a path; parsed once, on first use.
function jsonLines(text: string): (path: readonly PropertyKey[]) => number | undefined {
  let find: ((path: readonly PropertyKey[]) => number | undefined) | undefined;
  return (path) => {
    if (find === undefined) {
      const lineCounter = new LineCounter();
      const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
      find = (p) => {
        const node = doc.getIn(p as unknown[], true) as Node | undefined;
        return node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
      };
    }
    return find(path);
  };
}
