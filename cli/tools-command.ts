// `helix tools`: the callable tools (toolpacks, the container toolpacks the policy offers, and
// built-ins), as a table or as JSON with schemas and effective limits. Loads and checks toolpacks
// like the host, without a store.
import { loadPluginsOrThrow } from '../host/4-calls/loader/load-toolpacks.js';
import { containerOffer } from '../host/4-calls/tools/container-tool.js';
import { bundledPluginsDir } from '../host/1-base/paths.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { builtinTools } from '../host/4-calls/tools/builtins.js';
import { EXIT, printError, printJson } from './output.js';

/** Options of `helix tools`. */
export interface ToolsOptions {
  readonly plugins?: string;
  readonly policy?: string;
  readonly json?: boolean;
}

/** One row of the listing. */
interface ToolRow {
  readonly id: string;
  readonly version: string;
  readonly kind: 'wasm' | 'builtin' | 'container';
  readonly description: string;
  readonly deterministic: string;
  readonly digest: string | null;
  readonly limits: unknown;
  readonly capabilities: readonly string[];
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
}

/** Runs `helix tools`. */
export async function toolsCommand(opts: ToolsOptions): Promise<void> {
  let rows: ToolRow[];
  try {
    const policy = loadPolicy(opts.policy);
    const { tools: loaded, containers } = await loadPluginsOrThrow(opts.plugins ?? bundledPluginsDir(), policy.policy);
    // A container toolpack is listed as it is offered: its digest is the image the policy resolves it to.
    const offered = containers.flatMap((c) => {
      const offer = containerOffer(c, policy.policy);
      return 'image' in offer
        ? [
            {
              id: c.manifest.id,
              version: c.manifest.version,
              kind: 'container' as const,
              description: c.manifest.description,
              deterministic: c.manifest.deterministic,
              digest: offer.image,
              limits: c.limits,
              capabilities: ['docker.run'],
              inputSchema: c.inputSchema,
              outputSchema: c.outputSchema,
            },
          ]
        : [];
    });
    rows = [
      ...loaded.map((t) => ({
        id: t.manifest.id,
        version: t.manifest.version,
        kind: 'wasm' as const,
        description: t.manifest.description,
        deterministic: t.manifest.deterministic,
        digest: t.manifest.digest,
        limits: t.limits,
        capabilities: t.manifest.capabilities.allow,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      })),
      ...offered,
      ...builtinTools(policy.policy).map((t) => ({
        id: t.id,
        version: t.version,
        kind: 'builtin' as const,
        description: t.description,
        deterministic: t.deterministic,
        digest: null,
        limits: t.limits,
        capabilities: t.capabilities,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      })),
    ];
  } catch (err) {
    printError(err);
    process.exitCode = EXIT.startup;
    return;
  }
  if (opts.json) {
    printJson(rows);
    return;
  }
  const cells = rows.map((r) => [r.id, r.version, r.kind, r.deterministic, r.description]);
  const heads = ['ID', 'VERSION', 'KIND', 'DETERMINISM'];
  const widths = heads.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]): string =>
    `${c
      .slice(0, 4)
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')}  ${c[4]}\n`;
  process.stdout.write(line([...heads, 'DESCRIPTION']));
  for (const c of cells) process.stdout.write(line(c));
}
