// The MCP surface of Helix (README "Using Helix from an MCP client"): a server over a Host, its
// bounded stdio transport, and the mappings it uses (tool names, definitions, results, resources,
// logging).
export { createMcpServer, defaultMaxMessageBytes, type HelixMcpServer, type McpServerOptions, type StdioStreams } from './server.js';
export { StdioTransport, checkMaxMessageBytes, DEFAULT_MAX_BACKLOG_BYTES, MESSAGE_BYTES_RANGE, MESSAGE_MARGIN_BYTES, type StdioTransportOptions } from './stdio-transport.js';
export { DEFAULT_MAX_IN_FLIGHT } from './request-window.js';
export { GuardedTransport, REQUEST_SCHEMAS } from './method-guard.js';
export { mcpToolName, toolNameTable, MCP_TOOL_NAME_PATTERN } from './names.js';
export { exposeTools, mcpOutputSchema, toolAnnotations, type ExposedTool } from './tools.js';
export { toolResult, errorText, RESULT_TEXT_MAX_CHARS } from './results.js';
export { ARTIFACT_URI_PREFIX, ARTIFACT_TEMPLATE, DEFAULT_READ_BOUNDS, RESOURCE_PAGE_SIZE, artifactResource, listArtifactResources, readArtifactResource, type ReadBounds } from './resources.js';
export { DEFAULT_LOG_LEVEL, LogLevelGate, mcpLevelOf } from './logging.js';
export { clientConfig, startupBanner, type Invocation } from './banner.js';
