// MCP tool names for Helix tool ids. MCP names must match ^[a-zA-Z0-9_-]{1,64}$, Helix ids are
// dotted (`seq.gc_content`): the mapping is fixed and checked once at startup, fail-closed.
import { createHash } from 'node:crypto';
import { HelixError } from '../../../abi/index.js';
import { BUILTIN_PREFIX } from '../../5-host/toolpacks.js';

/** What MCP allows as a tool name. */
export const MCP_TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MAX_NAME = 64;
/** Hex digits of the id's hash kept when a long name is shortened. */
const HASH_DIGITS = 8;

/**
 * The MCP name of a tool id. Built-ins drop the `helix.` prefix (`artifact_get`); toolpack ids
 * turn their dots into dashes (`seq.gc_content` -> `seq-gc_content`). Toolpack ids never contain
 * a dash and always a dot, built-in names never a dash, so the two kinds cannot collide and the
 * mapping is reversible. A name past 64 characters keeps its head and gains a hash of the id.
 */
export function mcpToolName(toolId: string, kind: 'wasm' | 'builtin' | 'container'): string {
  const name = kind === 'builtin' && toolId.startsWith(BUILTIN_PREFIX) ? toolId.slice(BUILTIN_PREFIX.length) : toolId.replace(/\./g, '-');
  if (name.length <= MAX_NAME) return name;
  const hash = createHash('sha256').update(toolId).digest('hex').slice(0, HASH_DIGITS);
  return `${name.slice(0, MAX_NAME - HASH_DIGITS - 1)}-${hash}`;
}

/** A tool as the name table sees it. */
export interface NamedTool {
  readonly id: string;
  readonly kind: 'wasm' | 'builtin' | 'container';
}

/**
 * MCP name -> tool id for every distinct id. Throws P-PRECOND-MANIFEST-INVALID, listing every
 * clash, when two ids map to one name or a name is not a valid MCP name: a server that could
 * route a call to the wrong tool must not start.
 */
export function toolNameTable(tools: readonly NamedTool[]): Map<string, string> {
  const table = new Map<string, string>();
  const problems: string[] = [];
  for (const tool of tools) {
    const name = mcpToolName(tool.id, tool.kind);
    const taken = table.get(name);
    if (taken === tool.id) continue;
    if (taken !== undefined) problems.push(`${tool.id}: its MCP tool name "${name}" is already the name of ${taken}`);
    else if (!MCP_TOOL_NAME_PATTERN.test(name))
      problems.push(`${tool.id}: "${name}" is not a valid MCP tool name (${MCP_TOOL_NAME_PATTERN.source})`);
    else table.set(name, tool.id);
  }
  if (problems.length > 0) {
    throw new HelixError('P-PRECOND-MANIFEST-INVALID', {
      message: `${problems.length} tool id${problems.length === 1 ? '' : 's'} cannot be served over MCP; the server refuses to start.`,
      details: { violations: problems },
      hint: 'Rename the toolpack ids listed so each maps to its own MCP tool name.',
    });
  }
  return table;
}
