// `helix validate`: load every toolpack (container toolpacks too), print each violation as `file: field: reason`.
import { loadToolpacks, loadPolicy } from '../host/5-host/toolpacks.js';
import { formatViolation } from '../host/1-base/files/violation.js';
import { bundledToolpacksDir } from '../host/1-base/paths.js';
import { EXIT, printError } from './output.js';

/** Options of `helix validate`. */
export interface ValidateOptions {
  /** --toolpacks (or its former name --plugins). */
  readonly toolpacks?: string;
  readonly policy?: string;
}

/** Runs `helix validate`. */
export async function validateCommand(opts: ValidateOptions): Promise<void> {
  try {
    const policy = loadPolicy(opts.policy);
    const dir = opts.toolpacks ?? bundledToolpacksDir();
    const { tools, containers, violations } = await loadToolpacks(dir, policy.policy);
    if (violations.length > 0) {
      for (const v of violations) process.stderr.write(`${formatViolation(v)}\n`);
      process.stderr.write(`helix: ${violations.length} violation${violations.length === 1 ? '' : 's'}; the host would refuse to start.\n`);
      process.exitCode = EXIT.failed;
      return;
    }
    const count = tools.length + containers.length;
    const ofThem = containers.length === 0 ? '' : `, ${containers.length} of them container toolpack${containers.length === 1 ? '' : 's'}`;
    process.stdout.write(`ok: ${count} toolpack${count === 1 ? '' : 's'} valid under ${dir}${ofThem} (policy ${policy.source})\n`);
  } catch (err) {
    printError(err);
    process.exitCode = EXIT.startup;
  }
}
