// What a built-in tool is made of before builtins.ts makes it a Tool: its name, schemas, identity
// beyond its input, and what it runs.
import type { JsonSchema } from '../loader/schema-bundle.js';
import type { Tool, ToolRunContext } from './tool.js';

/** One built-in tool, as builtins.ts lists it. */
export interface BuiltinSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly boundary?: Tool['snapshotBoundary'];
  readonly deterministic?: Tool['deterministic'];
  readonly run: (input: Record<string, unknown>, ctx: ToolRunContext) => unknown;
}
