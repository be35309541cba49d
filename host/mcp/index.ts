// The MCP surface of Helix (DESIGN.md section 11): a server over a Host, and the mappings it
// uses (tool names, tool definitions, results, artifact resources, logging levels).
export { createMcpServer, type HelixMcpServer, type McpServerOptions } from './server.js';
export { mcpToolName, toolNameTable, MCP_TOOL_NAME_PATTERN } from './names.js';
export { exposeTools, mcpOutputSchema, toolAnnotations, type ExposedTool } from './tools.js';
export { toolResult, errorText, RESULT_TEXT_MAX_CHARS } from './results.js';
export { ARTIFACT_URI_PREFIX, ARTIFACT_TEMPLATE, DEFAULT_READ_BOUNDS, RESOURCE_PAGE_SIZE, artifactResource, listArtifactResources, readArtifactResource, type ReadBounds } from './resources.js';
export { DEFAULT_LOG_LEVEL, LogLevelGate, mcpLevelOf } from './logging.js';
export { clientConfig, startupBanner, type Invocation } from './banner.js';
