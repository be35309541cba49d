// The MCP server of Helix, the package entry "./mcp" (README "Using Helix from an MCP client"): a
// server over a Host, the bounds of its stdio transport, the tool names and artifact resources
// it offers, and the client configuration that starts `helix serve`. The mappings behind them
// (definitions, results, the method guard) are the server's own.
export { createMcpServer, defaultMaxMessageBytes, type HelixMcpServer, type McpServerOptions, type StdioStreams } from './server.js';
export { checkMaxMessageBytes, DEFAULT_MAX_BACKLOG_BYTES, MESSAGE_BYTES_RANGE, MESSAGE_MARGIN_BYTES } from './stdio-transport.js';
export { DEFAULT_MAX_IN_FLIGHT } from './request-window.js';
export { mcpToolName, MCP_TOOL_NAME_PATTERN } from './names.js';
export type { ExposedTool } from './tools.js';
export { ARTIFACT_URI_PREFIX, ARTIFACT_TEMPLATE, DEFAULT_READ_BOUNDS, RESOURCE_PAGE_SIZE, type ReadBounds } from './resources.js';
export { DEFAULT_LOG_LEVEL } from './logging.js';
export { clientConfig, type Invocation } from './banner.js';
