// The import graph of the repository's own TypeScript, read from the source text: which file
// imports which (static imports, re-exports and dynamic imports of relative paths), and the
// cycles in it. The architecture test holds this graph against the floors of ARCHITECTURE.md.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** One import: the importing file, the imported file (both relative to the root), the line. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  readonly line: number;
}

// `import ... from '…'`, `export ... from '…'`, `import '…'` and `import('…')`, across lines.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm;

/** The source files under `dirs` (relative to `root`): .ts, not tests, not declarations, not AssemblyScript. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const visit = (rel: string): void => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const child = path.posix.join(rel, name);
      if (name === 'node_modules' || name === 'assembly' || name === 'test') continue;
      if (statSync(path.join(root, child)).isDirectory()) visit(child);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(child);
    }
  };
  for (const d of dirs) visit(d);
  return out;
}

/** Every relative import of `files`, resolved to the file it names (`.js` in a specifier, or none, is the `.ts` source). */
export function importEdges(root: string, files: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const text = readFileSync(path.join(root, from), 'utf8');
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[2]!;
      // TypeScript names the built `.js`; AssemblyScript names the module without an extension.
      const named = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
      const to = named.endsWith('.js') ? named.replace(/\.js$/, '.ts') : named.endsWith('.ts') ? named : `${named}.ts`;
      const line = text.slice(0, m.index).split('\n').length;
      edges.push({ from, to, line });
    }
  }
  return edges;
}

/** The cycles of the graph: its strongly connected components of more than one file, or a file importing itself (Tarjan). */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const strong = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) strong(v);
  return found;
}
