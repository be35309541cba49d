// Parses a YAML manifest, schema or policy into JSON data within bounds: nesting depth, alias
// count and expanded size (ABI-FILE-007, -008, -009). Nothing recursive (yaml's composer, toJS,
// zod, Ajv, canonical JSON) sees a document before these bounds hold.
import { CST, isAlias, isMap, isScalar, isSeq, Lexer, LineCounter, parseDocument, type Node } from 'yaml';
import { DOCUMENT_MAX_DEPTH, DOCUMENT_MAX_NODES, YAML_MAX_ALIASES } from '../../../abi/index.js';

/** One reason a document was refused: where (a path into it, a line where known) and why. */
export interface DocumentProblem {
  readonly path: ReadonlyArray<string | number>;
  readonly reason: string;
  readonly line?: number;
}

/** A parsed document with a way to find the line of a path, or the problems that stopped it. */
export type ParsedDocument =
  | { ok: true; value: unknown; lineOf: (path: readonly PropertyKey[]) => number | undefined }
  | { ok: false; problems: DocumentProblem[] };

// YAML 1.2 core schema whatever the file's %YAML directive says: no timestamps, binary, sets or
// merge keys, only what JSON can hold.
const PARSE_OPTIONS = { version: '1.2', schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false } as const;

/** Parses YAML text into JSON data, or lists why not (with lines). */
export function parseYamlText(text: string): ParsedDocument {
  const deep = prescanDepth(text);
  if (deep !== undefined) return { ok: false, problems: [deep] };
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...PARSE_OPTIONS, lineCounter });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => ({
        path: [],
        reason: `invalid YAML: ${e.message.split('\n')[0]}`,
        line: lineCounter.linePos(e.pos[0]).line,
      })),
    };
  }
  const lineOfNode = (node: { range?: [number, number, number] | null } | null | undefined): number | undefined =>
    node?.range ? lineCounter.linePos(node.range[0]).line : undefined;
  const problem = walkDocument(doc.contents as Node | null, lineOfNode);
  if (problem !== undefined) return { ok: false, problems: [problem] };
  let value: unknown;
  try {
    // yaml's own alias bound stays on behind the walk; it counts the anchor as one use.
    value = doc.toJS({ maxAliasCount: YAML_MAX_ALIASES + 1 });
  } catch (err) {
    return { ok: false, problems: [{ path: [], reason: `invalid YAML: ${(err as Error).message}` }] };
  }
  return { ok: true, value, lineOf: (p) => lineOfNode(doc.getIn(p as unknown[], true) as Node | undefined) };
}

/** Collection tags yaml resolves even under the core schema, none of which is JSON data. */
const NON_JSON_COLLECTIONS = new Map([
  ['tag:yaml.org,2002:set', 'a YAML set (!!set)'],
  ['tag:yaml.org,2002:omap', 'a YAML ordered map (!!omap)'],
  ['tag:yaml.org,2002:pairs', 'a YAML list of pairs (!!pairs)'],
]);

const tooDeep = `nested deeper than ${DOCUMENT_MAX_DEPTH} levels of mappings and sequences (ABI-FILE-007)`;

/**
 * A cheap bound on nesting read from the lexer's tokens, before yaml's recursive composer runs:
 * open flow brackets plus the block collections open at increasing columns. It never counts more
 * levels than the document has, and at least half of them, so the composer stays shallow.
 */
function prescanDepth(text: string): DocumentProblem | undefined {
  const block: number[] = [];
  let flow = 0;
  let line = 1;
  let col = 0;
  let lineStart = true;
  let nodeCol = -1;
  let scalarNext = false;
  let blockScalar = false;
  for (const token of new Lexer().lex(text)) {
    // Control tokens mark what follows and take no room in the text.
    if (token === '\x02' || token === '\x18') continue;
    if (token === '\x1f') {
      scalarNext = true;
      continue;
    }
    // A block scalar's body (after `|` or `>`) is text on lines of its own, not structure.
    const body = scalarNext && blockScalar;
    const type = scalarNext ? 'scalar' : CST.tokenType(token);
    scalarNext = false;
    if (type === 'block-scalar-header') blockScalar = true;
    else if (type !== 'space' && type !== 'newline' && type !== 'comment') blockScalar = false;
    const blank = body || type === 'space' || type === 'newline' || type === 'comment' || type === 'byte-order-mark';
    if (!blank) {
      if (lineStart && flow === 0) while (block.length > 0 && block[block.length - 1]! >= col) block.pop();
      lineStart = false;
      if (type === 'doc-start' || type === 'doc-end') {
        block.length = 0;
        flow = 0;
      } else if (flow === 0 && (type === 'seq-item-ind' || type === 'explicit-key-ind')) {
        block.push(col);
        nodeCol = -1;
      } else if (flow === 0 && type === 'map-value-ind') {
        const keyCol = nodeCol === -1 ? col : nodeCol;
        if (block[block.length - 1] !== keyCol) block.push(keyCol);
        nodeCol = -1;
      } else if (type === 'flow-seq-start' || type === 'flow-map-start') {
        if (nodeCol === -1) nodeCol = col;
        flow += 1;
      } else if (type === 'flow-seq-end' || type === 'flow-map-end') {
        flow = Math.max(0, flow - 1);
      } else if (nodeCol === -1 && type !== 'comma') {
        nodeCol = col;
      }
      if (block.length + flow > DOCUMENT_MAX_DEPTH) return { path: [], reason: tooDeep, line };
    }
    for (let i = 0; i < token.length; i++) {
      if (token.charCodeAt(i) === 10) {
        line += 1;
        col = 0;
      } else {
        col += 1;
      }
    }
    if (token.endsWith('\n')) {
      lineStart = true;
      nodeCol = -1;
    }
  }
  return undefined;
}

/** What an anchored node expands to, for the aliases that name it. */
interface AnchorInfo {
  open: boolean;
  size: number;
  height: number;
  hasAlias: boolean;
}

interface Frame {
  readonly at: string | number | undefined;
  readonly depth: number;
  readonly children: Array<[string | number, Node | null]>;
  next: number;
  size: number;
  height: number;
  hasAlias: boolean;
  readonly anchor: AnchorInfo | undefined;
}

/**
 * Walks the composed document without recursion, aliases expanded through what their anchors
 * were measured to hold: the first breach of depth, alias or size bounds, a cycle, a key that is
 * not a scalar or a value JSON cannot hold, with its line.
 */
function walkDocument(root: Node | null, lineOf: (node: Node) => number | undefined): DocumentProblem | undefined {
  const anchors = new Map<string, AnchorInfo>();
  const stack: Frame[] = [];
  let nodes = 0;
  let aliases = 0;
  const pathOf = (last?: string | number): Array<string | number> => [
    ...stack.slice(1).map((f) => f.at!),
    ...(last === undefined ? [] : [last]),
  ];
  const fail = (node: Node, reason: string, at?: string | number): DocumentProblem => {
    const line = lineOf(node);
    return line === undefined ? { path: pathOf(at), reason } : { path: pathOf(at), reason, line };
  };
  const enter = (node: Node | null, at: string | number | undefined): DocumentProblem | undefined => {
    const parent = stack[stack.length - 1];
    const depth = parent?.depth ?? 0;
    nodes += 1;
    if (node === null) {
      if (parent) parent.size += 1;
      return undefined;
    }
    if (nodes > DOCUMENT_MAX_NODES)
      return fail(node, `holds more than ${DOCUMENT_MAX_NODES} values with its aliases expanded (ABI-FILE-008)`, at);
    const anchor = node.anchor ? { open: true, size: 1, height: 0, hasAlias: false } : undefined;
    if (node.anchor && anchor) anchors.set(node.anchor, anchor);
    if (isAlias(node)) {
      aliases += 1;
      if (aliases > YAML_MAX_ALIASES) return fail(node, `more than ${YAML_MAX_ALIASES} YAML aliases (ABI-FILE-008)`, at);
      const target = anchors.get(node.source);
      if (target === undefined) return fail(node, `alias *${node.source} has no anchor &${node.source} before it`, at);
      if (target.open)
        return fail(node, `alias *${node.source} refers to a node that contains it: a document must not refer to itself`, at);
      if (target.hasAlias)
        return fail(
          node,
          `alias *${node.source} refers to a node that itself holds an alias: aliases may not be nested (ABI-FILE-008)`,
          at,
        );
      if (depth + target.height > DOCUMENT_MAX_DEPTH) return fail(node, tooDeep, at);
      nodes += target.size - 1;
      if (nodes > DOCUMENT_MAX_NODES)
        return fail(node, `holds more than ${DOCUMENT_MAX_NODES} values with its aliases expanded (ABI-FILE-008)`, at);
      if (parent) {
        parent.size += target.size;
        parent.height = Math.max(parent.height, target.height + 1);
        parent.hasAlias = true;
      }
      return undefined;
    }
    if (isScalar(node)) {
      const v = node.value;
      if (typeof v === 'number' && !Number.isFinite(v))
        return fail(node, `${String(node.source ?? v)} is not a finite number: JSON has no infinities or NaN (ABI-FILE-009)`, at);
      if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
        return fail(node, 'holds a value JSON cannot represent', at);
      if (anchor) anchor.open = false;
      if (parent) parent.size += 1;
      return undefined;
    }
    if (!isMap(node) && !isSeq(node)) return fail(node, 'holds a node JSON cannot represent', at);
    // yaml resolves these tags whatever the schema: a set would reach the loader as a JS Set (JSON.stringify writes {}).
    const kind = typeof node.tag === 'string' ? NON_JSON_COLLECTIONS.get(node.tag) : undefined;
    if (kind !== undefined) return fail(node, `is ${kind}, which JSON cannot represent (ABI-FILE-009)`, at);
    if (depth + 1 > DOCUMENT_MAX_DEPTH) return fail(node, tooDeep, at);
    const children: Array<[string | number, Node | null]> = [];
    if (isSeq(node)) {
      for (const [i, item] of node.items.entries()) children.push([i, item as Node | null]);
    } else {
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        if (key !== null && !isScalar(key)) return fail(key, 'a mapping key must be a plain scalar, not a collection or an alias', at);
        children.push([String(key?.value ?? ''), pair.value as Node | null]);
      }
    }
    stack.push({ at, depth: depth + 1, children, next: 0, size: 1, height: 1, hasAlias: false, anchor });
    return undefined;
  };

  const first = enter(root, undefined);
  if (first !== undefined) return first;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.next < frame.children.length) {
      const [at, child] = frame.children[frame.next]!;
      frame.next += 1;
      const problem = enter(child, at);
      if (problem !== undefined) return problem;
      continue;
    }
    stack.pop();
    if (frame.anchor) Object.assign(frame.anchor, { open: false, size: frame.size, height: frame.height, hasAlias: frame.hasAlias });
    const parent = stack[stack.length - 1];
    if (parent) {
      parent.size += frame.size;
      parent.height = Math.max(parent.height, frame.height + 1);
      parent.hasAlias ||= frame.hasAlias;
    }
  }
  return undefined;
}
