// A response envelope as an MCP tool result: success carries the output as structuredContent,
// any failure the whole envelope with isError (a tool failure is never a protocol error).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type ResponseEnvelope, violationLines } from '../../../abi/index.js';

/** Longest text rendering of a result, in UTF-16 code units; structuredContent is never cut. */
export const RESULT_TEXT_MAX_CHARS = 16 * 1024;
/** Violations listed in the text of an error; all of them stay in structuredContent. */
const MAX_VIOLATION_LINES = 20;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `text` cut to `max` characters (never inside a surrogate pair), with a note of what is left out. */
export function truncateText(text: string, max: number, where: string): string {
  if (text.length <= max) return text;
  let cut = max;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut)}… [truncated: ${text.length - cut} more characters; ${where}]`;
}

/** What `_meta` of every tool result carries: which run answered and whether it was replayed. */
function resultMeta(r: ResponseEnvelope): Record<string, unknown> {
  return {
    'helix/run_id': r.run_id,
    'helix/replayed': r.replayed,
    'helix/call_id': r.call_id,
    'helix/status': r.status,
    'helix/tool_version': r.provenance.tool_version,
    'helix/metrics': r.metrics,
    ...(r.warnings.length === 0 ? {} : { 'helix/warnings': r.warnings }),
  };
}

/** The text an agent reads for a failure: status, code and message, violations, hint, run. */
export function errorText(r: ResponseEnvelope): string {
  const e = r.error;
  const lines = [`${r.status} ${e?.code ?? '(no code)'}: ${e?.message ?? 'the call failed without an error'}`];
  const shown = violationLines(e?.details, MAX_VIOLATION_LINES);
  for (const line of shown.lines) lines.push(`  ${line}`);
  if (shown.more > 0) lines.push(`  … ${shown.more} more in structuredContent.error.details.violations`);
  if (e?.hint) lines.push(`hint: ${e.hint}`);
  if (r.run_id !== null) lines.push(`run: ${r.run_id}`);
  return truncateText(lines.join('\n'), RESULT_TEXT_MAX_CHARS, 'the whole envelope is in structuredContent');
}

/**
 * The MCP result of a response envelope. `wrapsOutput`: the tool's output is not an object and
 * travels as `{ "value": <output> }` (see mcpOutputSchema).
 */
export function toolResult(r: ResponseEnvelope, wrapsOutput: boolean): CallToolResult {
  if (r.status !== 'success') {
    return {
      isError: true,
      structuredContent: r as unknown as Record<string, unknown>,
      content: [{ type: 'text', text: errorText(r) }],
      _meta: resultMeta(r),
    };
  }
  const structured = wrapsOutput || !isRecord(r.output) ? { value: r.output ?? null } : r.output;
  const where =
    r.run_id === null ? 'the whole output is in structuredContent' : `the whole output is in structuredContent and in run_get ${r.run_id}`;
  const text = truncateText(JSON.stringify(structured), RESULT_TEXT_MAX_CHARS, where);
  return { structuredContent: structured, content: [{ type: 'text', text }], _meta: resultMeta(r) };
}
