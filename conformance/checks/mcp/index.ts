// The mcp category, in the report's order: the MCP transport under broken frames. The real
// `helix serve` in a child process, spoken to raw over stdio as a hostile client would; each frame
// gets the answer JSON-RPC 2.0 prescribes (or none), and after each the same server must answer a
// good tools/call: that is this category's survival (the runner's canary covers the in-process host).
import type { Check } from '../../check.js';
import { flowChecks } from './flow.js';
import { frameChecks } from './frames.js';
import { messageChecks } from './messages.js';

/** The MCP checks. */
export const mcpChecks: readonly Check[] = [...frameChecks, ...messageChecks, ...flowChecks];
