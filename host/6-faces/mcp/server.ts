// The Helix MCP server (README "Using Helix from an MCP client"): the SDK's low-level Server wired
// to a Host, so the tools' own JSON Schemas pass through untouched (the high-level McpServer wants
// zod).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type LoggingLevel,
} from '@modelcontextprotocol/sdk/types.js';
import type { Host } from '../../5-host/host.js';
import { packageRoot } from '../../1-base/paths.js';
import { callTool, type CallToolContext } from './call-tool.js';
import { LogLevelGate } from './logging.js';
import { ARTIFACT_TEMPLATE, DEFAULT_READ_BOUNDS, listArtifactResources, readArtifactResource, type ReadBounds } from './resources.js';
import { GuardedTransport } from './method-guard.js';
import {
  checkMaxMessageBytes,
  MESSAGE_BYTES_RANGE,
  MESSAGE_MARGIN_BYTES,
  StdioTransport,
  type StdioTransportOptions,
} from './stdio-transport.js';
import { exposeTools, type ExposedTool } from './tools.js';

/** Options of createMcpServer; everything has a default. */
export interface McpServerOptions {
  /** Bounds of `resources/read`; default 1 MiB of text, 4 MiB of binary. */
  readonly readBounds?: ReadBounds;
  /** The logging level before the client sets one; default info. */
  readonly logLevel?: LoggingLevel;
  /**
   * Longest stdio message in bytes (ABI-MCP-001); default the policy's `ceilings.maxInputBytes`
   * plus 1 MiB, so the largest input any tool may accept fits in a tools/call.
   */
  readonly maxMessageBytes?: number;
  /** Unread stdio output past which the client is behind (ABI-MCP-008); default 32 MiB. */
  readonly maxBacklogBytes?: number;
  /** Requests a stdio client may have unanswered at once (ABI-MCP-009); default 64. */
  readonly maxInFlight?: number;
}

/** The streams and log of `connectStdio`; default process.stdin, process.stdout, onerror. */
export type StdioStreams = Pick<StdioTransportOptions, 'stdin' | 'stdout' | 'log'>;

/** A Helix MCP server, not yet connected. */
export interface HelixMcpServer {
  /** The SDK server (for a transport, or a test's in-memory pair). */
  readonly server: Server;
  /** The MCP tools and the Helix tools behind them. */
  readonly tools: readonly ExposedTool[];
  /** The stdio message bound in force (ABI-MCP-001). */
  readonly maxMessageBytes: number;
  /** Connects over any transport; unknown methods and bad params are answered before the SDK's handlers. */
  connect(transport: Transport): Promise<void>;
  /** Connects over stdio (or the given streams) with the message and backlog bounds. */
  connectStdio(streams?: StdioStreams): Promise<void>;
  /** Closes the connection; calls in flight are cancelled (their runs recorded as failed). */
  close(): Promise<void>;
}

const INSTRUCTIONS = [
  'Helix runs sandboxed WebAssembly tools. Every call is a recorded run: the result carries its run id in _meta["helix/run_id"], and a repeated identical call replays the stored result instead of running again.',
  "Files enter as artifacts (artifact_import, under the operator's import roots) and are passed to tools by id (art_...); tool outputs that are files come back as artifact ids.",
  'Read an artifact as the resource helix://artifact/<id>, or look at it with artifact_preview. A failed call returns isError with the error envelope: its error.code, message and hint say what to fix.',
].join(' ');

/** The default message bound for a policy: its largest input plus the request around it, within range. */
export function defaultMaxMessageBytes(host: Pick<Host, 'policy'>): number {
  return Math.min(host.policy.policy.ceilings.maxInputBytes + MESSAGE_MARGIN_BYTES, MESSAGE_BYTES_RANGE.max);
}

function helixVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * Creates the MCP server over `host`: one MCP tool per tool id, artifacts as resources, logging.
 * Throws (before anything is connected) when tool names collide, or with a RangeError naming
 * the option when maxMessageBytes is out of range.
 */
export function createMcpServer(host: Host, options: McpServerOptions = {}): HelixMcpServer {
  const tools = exposeTools(host.tools());
  const byName = new Map(tools.map((t) => [t.name, t]));
  const bounds = options.readBounds ?? DEFAULT_READ_BOUNDS;
  const logLevel = new LogLevelGate(options.logLevel);
  const maxMessageBytes =
    options.maxMessageBytes === undefined ? defaultMaxMessageBytes(host) : checkMaxMessageBytes(options.maxMessageBytes);
  const server = new Server(
    { name: 'helix', title: 'Helix', version: helixVersion() },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false }, logging: {} },
      instructions: INSTRUCTIONS,
    },
  );
  const ctx: CallToolContext = {
    host,
    tools: byName,
    logLevel,
    actor: () => `mcp://${server.getClientVersion()?.name ?? 'client'}`,
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => t.definition) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(ctx, request.params, extra));
  server.setRequestHandler(ListResourcesRequestSchema, (request) => listArtifactResources(host.artifacts, request.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [ARTIFACT_TEMPLATE] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => readArtifactResource(host.artifacts, request.params.uri, bounds));
  // Replaces the SDK's own handler: the level also decides whether a call listens for log lines.
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    logLevel.set(request.params.level);
    return {};
  });

  return {
    server,
    tools,
    maxMessageBytes,
    connect: (transport) => server.connect(new GuardedTransport(transport)),
    connectStdio: (streams = {}) =>
      server.connect(
        new GuardedTransport(
          new StdioTransport({ ...streams, maxMessageBytes, maxBacklogBytes: options.maxBacklogBytes, maxInFlight: options.maxInFlight }),
        ),
      ),
    close: () => server.close(),
  };
}
