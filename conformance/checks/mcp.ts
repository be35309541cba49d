// Conformance checks: mcp.
import type { Check } from '../check.js';

export const mcpChecks: readonly Check[] = [];
