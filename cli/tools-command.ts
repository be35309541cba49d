// `helix tools`: the callable tools (toolpacks, the container toolpacks the policy offers, and
// built-ins), as a table or as JSON with schemas and effective limits. Loads and checks toolpacks
// like the host, without a store.
import { bundledToolpacksDir } from '../host/1-base/paths.js';
import { listTools, loadEveryToolpackOrThrow, loadPolicy, type ToolListing } from '../host/5-host/toolpacks.js';
import { EXIT, printError, printJson } from './output.js';

/** Options of `helix tools`. */
export interface ToolsOptions {
  /** --toolpacks (or its former name --plugins). */
  readonly toolpacks?: string;
  readonly policy?: string;
  readonly json?: boolean;
}

/** Runs `helix tools`. */
export async function toolsCommand(opts: ToolsOptions): Promise<void> {
  let rows: ToolListing[];
  try {
    const policy = loadPolicy(opts.policy);
    rows = listTools(await loadEveryToolpackOrThrow(opts.toolpacks ?? bundledToolpacksDir(), policy.policy), policy.policy);
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
