// `helix tools`: the loaded tools, as a table or as JSON with schemas and effective limits.
import { createHost } from '../host.js';
import { EXIT, printError, printJson } from './output.js';

/** Options of `helix tools`. */
export interface ToolsOptions {
  readonly plugins?: string;
  readonly policy?: string;
  readonly json?: boolean;
}

/** Runs `helix tools`. */
export async function toolsCommand(opts: ToolsOptions): Promise<void> {
  let host;
  try {
    host = await createHost({ pluginsDir: opts.plugins, policyFile: opts.policy, engine: { minThreads: 0 } });
  } catch (err) {
    printError(err);
    process.exitCode = EXIT.startup;
    return;
  }
  try {
    const tools = host.tools();
    if (opts.json) {
      printJson(
        tools.map((t) => ({
          id: t.manifest.id,
          version: t.manifest.version,
          description: t.manifest.description,
          abi: t.manifest.abi,
          digest: t.manifest.digest,
          deterministic: t.manifest.deterministic,
          limits: t.limits,
          capabilities: t.manifest.capabilities.allow,
          inputSchema: t.inputSchema,
          outputSchema: t.outputSchema,
        })),
      );
      return;
    }
    const rows = tools.map((t) => [t.manifest.id, t.manifest.version, t.manifest.deterministic, t.manifest.description]);
    const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['ID', 'VERSION', 'DETERMINISM'][i]!.length));
    const line = (r: string[]): string => `${r.slice(0, 3).map((c, i) => c.padEnd(widths[i]!)).join('  ')}  ${r[3]}\n`;
    process.stdout.write(line(['ID', 'VERSION', 'DETERMINISM', 'DESCRIPTION']));
    for (const r of rows) process.stdout.write(line(r as string[]));
  } finally {
    await host.close();
  }
}
