// Helix tools as MCP tools: one per tool id (its newest version), with the tool's own JSON
// Schemas, a description, and annotations derived from the manifest (README "Using Helix from an
// MCP client").
import type { Tool as McpTool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ResponseEnvelopeSchema } from '../../../abi/index.js';
import type { JsonSchema, Tool } from '../../5-host/toolpacks.js';
import { mcpToolName, toolNameTable } from './names.js';

/** One MCP tool and the Helix tool build behind it. */
export interface ExposedTool {
  /** The MCP tool name. */
  readonly name: string;
  /** The newest loaded version of the id; calls pin exactly this version. */
  readonly tool: Tool;
  /** Older versions of the id that are loaded but not reachable over MCP. */
  readonly hidden: readonly string[];
  /**
   * True when the tool's outputSchema does not describe an object: MCP structured content must
   * be an object, so the output travels as `{ "value": <output> }`.
   */
  readonly wrapsOutput: boolean;
  /** The definition `tools/list` returns. */
  readonly definition: McpTool;
}

/** Capabilities through which a guest changes the world outside its own run (docker.run registers its outputs and logs as artifacts). */
const WRITING_CAPABILITIES = ['artifact.write', 'kv.put', 'kv.delete', 'http.request', 'docker.run'];
/** Built-ins known to write nothing; any other built-in (e.g. a future one) is assumed to write. */
const READ_ONLY_BUILTINS = new Set([
  'helix.artifact_get',
  'helix.artifact_list',
  'helix.artifact_preview',
  'helix.run_get',
  'helix.run_verify',
]);

const uses = (tool: Tool, capability: string): boolean => tool.capabilities.some((c) => c === capability || c.startsWith(`${capability}.`));

/**
 * The MCP hints of a tool. Read-only: it can write nothing (no artifact.write, kv.put,
 * kv.delete, http.request or docker.run; for built-ins, a fixed list). Idempotent: pure or idempotent.
 * Open world: it may use http.request. Destructive: only a side_effectful tool. Recording the
 * run itself is the host's bookkeeping and does not count as a write.
 */
export function toolAnnotations(tool: Tool): ToolAnnotations {
  const readOnly = tool.kind === 'builtin' ? READ_ONLY_BUILTINS.has(tool.id) : !WRITING_CAPABILITIES.some((c) => uses(tool, c));
  return {
    title: tool.id,
    readOnlyHint: readOnly,
    destructiveHint: tool.deterministic === 'side_effectful',
    idempotentHint: tool.deterministic !== 'side_effectful',
    openWorldHint: uses(tool, 'http.request'),
  };
}

/** The error envelope (a response envelope whose status is not success), from abi's zod schema. */
function errorEnvelopeSchema(): JsonSchema {
  const { $schema: _dialect, ...envelope } = z.toJSONSchema(ResponseEnvelopeSchema) as JsonSchema;
  const properties = envelope.properties as Record<string, JsonSchema>;
  const required = envelope.required as string[];
  return {
    ...envelope,
    description: 'A failed call: the Helix response envelope, with the error code, message, details and hint.',
    properties: { ...properties, status: { type: 'string', enum: ['retryable_error', 'terminal_error', 'invalid_request'] } },
    required: [...required, 'error'],
  };
}
const ERROR_ENVELOPE = errorEnvelopeSchema();

/**
 * The MCP outputSchema: the tool's schema or the error envelope. MCP clients built on the
 * official SDK (1.x) check structuredContent against outputSchema even when isError is set, so
 * the schema admits both shapes; the tool's own schema stays intact as the first branch (its
 * `$schema`, `$id` and definitions move to the root, where its `#/$defs/...` refs still land).
 */
export function mcpOutputSchema(schema: JsonSchema): { schema: JsonSchema & { type: 'object' }; wrapsOutput: boolean } {
  const { $schema, $id, $defs, definitions, ...rest } = schema;
  const wrapsOutput = rest.type !== 'object';
  const success: JsonSchema = wrapsOutput
    ? { type: 'object', required: ['value'], additionalProperties: false, properties: { value: rest } }
    : rest;
  const defs = { ...(($defs ?? {}) as Record<string, unknown>) };
  let key = 'helix_error_envelope';
  while (key in defs) key = `${key}_`;
  defs[key] = ERROR_ENVELOPE;
  return {
    wrapsOutput,
    schema: {
      ...($schema === undefined ? {} : { $schema }),
      ...($id === undefined ? {} : { $id }),
      ...(definitions === undefined ? {} : { definitions }),
      $defs: defs,
      type: 'object',
      anyOf: [success, { $ref: `#/$defs/${key}` }],
    },
  };
}

/** The MCP definition of one tool build. */
function definition(name: string, tool: Tool, hidden: readonly string[]): { definition: McpTool; wrapsOutput: boolean } {
  const output = mcpOutputSchema(tool.outputSchema);
  return {
    wrapsOutput: output.wrapsOutput,
    definition: {
      name,
      title: tool.id,
      description: tool.description,
      inputSchema: tool.inputSchema as McpTool['inputSchema'],
      outputSchema: output.schema,
      annotations: toolAnnotations(tool),
      _meta: {
        'helix/tool_id': tool.id,
        'helix/version': tool.version,
        'helix/kind': tool.kind,
        'helix/deterministic': tool.deterministic,
        'helix/capabilities': [...tool.capabilities],
        'helix/digest': tool.moduleDigest,
        'helix/hidden_versions': [...hidden],
      },
    },
  };
}

/**
 * The MCP tools for `tools` (sorted by id, newest version first, as Host.tools() gives them):
 * the newest version of each id. Throws when two ids map to one MCP name (fail-closed).
 */
export function exposeTools(tools: readonly Tool[]): ExposedTool[] {
  toolNameTable(tools);
  const exposed: ExposedTool[] = [];
  const seen = new Map<string, { tool: Tool; hidden: string[] }>();
  for (const tool of tools) {
    const entry = seen.get(tool.id);
    if (entry === undefined) seen.set(tool.id, { tool, hidden: [] });
    else entry.hidden.push(tool.version);
  }
  for (const { tool, hidden } of seen.values()) {
    const name = mcpToolName(tool.id, tool.kind);
    exposed.push({ name, tool, hidden, ...definition(name, tool, hidden) });
  }
  return exposed;
}
