// `tools/call`: an MCP call becomes a request envelope for Host.call, with the request's abort
// signal (notifications/cancelled stops the run), progress for a progress token, and the guest's
// log lines as notifications/message at the client's level.
import { randomUUID } from 'node:crypto';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestEnvelopeInput } from '../../../abi/index.js';
import type { CallOptions } from '../../5-host/toolpacks.js';
import type { Host } from '../../5-host/host.js';
import { logNotification, mcpLevelOf, type LogLevelGate } from './logging.js';
import { toolResult } from './results.js';
import type { ExposedTool } from './tools.js';

/** The SDK's per-request handle: abort signal, `_meta`, notifications tied to the request. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What the tools/call handler works with. */
export interface CallToolContext {
  readonly host: Host;
  /** MCP tool name -> the tool behind it. */
  readonly tools: ReadonlyMap<string, ExposedTool>;
  readonly logLevel: LogLevelGate;
  /** The request envelope's `context.actor_id`, e.g. `mcp://claude-ai`. */
  readonly actor: () => string;
}

/** Progress as MCP sees it: elapsed milliseconds, strictly increasing, with a readable message. */
function progressReporter(toolId: string, token: string | number, extra: RequestExtra): NonNullable<CallOptions['onProgress']> {
  let last = 0;
  return (p) => {
    if (p.elapsed_ms <= last) return;
    last = p.elapsed_ms;
    const calls = `${p.capability_calls} capability call${p.capability_calls === 1 ? '' : 's'}`;
    const message = `${toolId}: running for ${(p.elapsed_ms / 1000).toFixed(1)} s, ${calls}`;
    // A client that went away cannot be told; the call itself goes on to its own end.
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: p.elapsed_ms, message } })
      .catch(() => undefined);
  };
}

/** Handles one tools/call request. Tool failures come back as isError results, never thrown. */
export async function callTool(ctx: CallToolContext, params: CallToolRequest['params'], extra: RequestExtra): Promise<CallToolResult> {
  const exposed = ctx.tools.get(params.name);
  if (exposed === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`, { name: params.name });
  const { tool } = exposed;
  const callId = randomUUID();
  const request: RequestEnvelopeInput = {
    call_id: callId,
    tool_id: tool.id,
    tool_version: tool.version,
    input: params.arguments ?? {},
    context: { actor_id: ctx.actor() },
  };
  const options: { -readonly [K in keyof CallOptions]: CallOptions[K] } = { signal: extra.signal };
  const token = extra._meta?.progressToken;
  if (token !== undefined) options.onProgress = progressReporter(tool.id, token, extra);
  // Only a toolpack granted log.emit can log. Its lines name the run the host fixes before the
  // guest starts, the same id the response carries.
  if (tool.kind === 'wasm' && tool.capabilities.includes('log.emit') && ctx.logLevel.allowsGuestLines()) {
    let runId: string | null = null;
    options.onRunStarted = (id) => {
      runId = id;
    };
    options.onLog = (line) => {
      if (!ctx.logLevel.allows(mcpLevelOf(line.level))) return;
      extra.sendNotification(logNotification(line, { tool_id: tool.id, run_id: runId, call_id: callId })).catch(() => undefined);
    };
  }
  // A request cancelled already gets no answer (the SDK drops it); do not start a run for it.
  if (extra.signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'The request was cancelled before the call started.');
  const response = await ctx.host.call(request, options);
  return toolResult(response, exposed.wrapsOutput);
}
