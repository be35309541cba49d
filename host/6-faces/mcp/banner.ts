// What `helix serve` tells a person on stderr at startup: what it loaded (tools, store, policy)
// and the client configuration that starts this same server.
import path from 'node:path';
import type { Host } from '../../5-host/host.js';
import { policyRefusal } from '../../5-host/toolpacks.js';
import type { ExposedTool } from './tools.js';

/** How this server was started, for the client snippet. */
export interface Invocation {
  /** The CLI entry point (dist/cli/main.js). */
  readonly cliPath: string;
  /** --toolpacks, when given. */
  readonly toolpacks?: string;
  /** --policy, when given. */
  readonly policy?: string;
  /** Any further serve options to repeat, e.g. ['--progress-interval-ms', '500']. */
  readonly extraArgs?: readonly string[];
  /** The stdio message bound in force, for the log. */
  readonly maxMessageBytes?: number;
}

/** The `mcpServers` entry that starts this server (absolute paths, the home as HELIX_HOME). */
export function clientConfig(inv: Invocation, home: string): Record<string, unknown> {
  const args = [path.resolve(inv.cliPath), 'serve'];
  if (inv.toolpacks !== undefined) args.push('--toolpacks', path.resolve(inv.toolpacks));
  if (inv.policy !== undefined) args.push('--policy', path.resolve(inv.policy));
  args.push(...(inv.extraArgs ?? []));
  return { mcpServers: { helix: { command: process.execPath, args, env: { HELIX_HOME: path.resolve(home) } } } };
}

/** A short summary of a tool's hints, e.g. `read-only, idempotent`. */
function hints(t: ExposedTool): string {
  const a = t.definition.annotations ?? {};
  const parts = [
    a.readOnlyHint ? 'read-only' : a.destructiveHint ? 'destructive' : 'writes',
    a.idempotentHint ? 'idempotent' : 'not idempotent',
  ];
  if (a.openWorldHint) parts.push('open world');
  return parts.join(', ');
}

/** Why the policy would refuse every call of a tool, if it would. */
function refusal(host: Host, t: ExposedTool): string | undefined {
  return policyRefusal(host.policy.policy, t.tool.id, t.tool.capabilities);
}

/** The startup message: loaded tools, store, policy, and how to connect. */
export function startupBanner(host: Host, tools: readonly ExposedTool[], inv: Invocation): string {
  const width = Math.max(...tools.map((t) => t.name.length));
  const lines = [
    'helix serve: an MCP server on stdin/stdout (this log is stderr; stdout carries only the protocol)',
    `  store:    ${host.storePath}`,
    `  policy:   ${host.policy.hash} (${host.policy.source === '(default)' ? 'the bundled default policy' : host.policy.source})`,
    `  toolpacks: ${host.toolpacksDir}`,
  ];
  if (inv.maxMessageBytes !== undefined)
    lines.push(
      `  messages: up to ${inv.maxMessageBytes} bytes a line (--max-message-bytes); a longer line is answered with an error and skipped`,
    );
  if (host.interrupted.length > 0)
    lines.push(`  recovered: ${host.interrupted.length} run(s) a dead process left running, now marked interrupted`);
  lines.push(`  tools (${tools.length}):`);
  for (const t of tools) {
    const notes = [hints(t)];
    if (t.hidden.length > 0) notes.push(`older ${t.hidden.join(', ')} not exposed`);
    const refused = refusal(host, t);
    if (refused !== undefined) notes.push(`every call fails: ${refused}`);
    lines.push(`    ${t.name.padEnd(width)}  ${t.tool.id} ${t.tool.version}  (${notes.join('; ')})`);
  }
  lines.push('  resources: helix://artifact/<id> for every artifact in the store');
  lines.push(
    'Connect: add this to your MCP client configuration (e.g. claude_desktop_config.json, .mcp.json, .vscode/mcp.json under "servers"):',
  );
  lines.push(JSON.stringify(clientConfig(inv, host.home), null, 2));
  lines.push('Ready. Stops when stdin closes, or on SIGINT/SIGTERM (calls in flight are cancelled and recorded).');
  return `${lines.join('\n')}\n`;
}
