// Command-line options several commands share: the host's (toolpacks and policy), the limits of
// a call, and the parser of a positive integer option. main.ts and the command modules that
// register their own commands (job-command.ts) both take them from here.
import { type Command, InvalidArgumentError, Option } from 'commander';

/** Parses a positive integer option value, naming the option in the error. */
export function positiveInt(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive integer, got "${value}"`);
    return n;
  };
}

/**
 * Options every command that loads toolpacks shares. `--plugins`, the flag's former name, is still
 * read (not shown in the help): it sets `toolpacks` when `--toolpacks` is not given.
 */
export function hostOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--toolpacks <dir>', 'directory searched for *.tool.yaml (default: the bundled toolpacks)'))
    .addOption(new Option('--plugins <dir>', 'the former name of --toolpacks').hideHelp())
    .addOption(new Option('--policy <file>', 'policy file (default: the bundled default policy)'))
    .hook('preAction', (command) => {
      const { toolpacks, plugins } = command.opts<{ toolpacks?: string; plugins?: string }>();
      if (plugins === undefined) return;
      if (toolpacks !== undefined && toolpacks !== plugins)
        command.error('error: give the toolpacks directory once: --toolpacks (or its former name --plugins), not both');
      command.setOptionValue('toolpacks', plugins);
    });
}

/** Options of the commands that make calls: the tool's version and the call's limits. */
export function callOptions(cmd: Command): Command {
  return cmd
    .option('--version-range <range>', 'semver version or range of the tool', '*')
    .option('--timeout-ms <n>', 'deadline for this call', positiveInt('--timeout-ms'))
    .option('--memory-mb <n>', 'memory limit for this call', positiveInt('--memory-mb'));
}
