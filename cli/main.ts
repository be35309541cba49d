#!/usr/bin/env node
// The `helix` command line: validate toolpacks, list tools, call a tool, serve them over MCP,
// the plugin author's loop (new, build, test), and the store's upkeep (gc, store check).
// `helix --help` and `helix <command> --help` describe every option. Each command's module is
// imported when that command runs, so `helix call` does not load the MCP SDK or the toolchain.
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { packageRoot } from '../host/1-base/paths.js';
import { registerArtifactCommands } from './artifact-command.js';
import { registerJobCommands } from './job-command.js';
import { EXIT, TEMPLATE_LANGS } from './exit-codes.js';
import { callOptions, hostOptions, positiveInt } from './options.js';
import { registerRunsCommands } from './runs-command.js';
import { registerStoreCommands } from './store-command.js';

const version = (JSON.parse(readFileSync(`${packageRoot()}/package.json`, 'utf8')) as { version: string }).version;

/** Collects a repeatable option's values. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * An action that imports its command's module when it runs: `load` names the module, `pick`
 * the function in it.
 */
function lazy<M, A extends unknown[]>(
  load: () => Promise<M>,
  pick: (m: M) => (...args: A) => Promise<void> | void,
): (...args: A) => Promise<void> {
  return async (...args) => {
    await pick(await load())(...args);
  };
}

const program = new Command()
  .name('helix')
  .description('Helix: a capability-based host for sandboxed WebAssembly tools.')
  .version(version)
  .showHelpAfterError()
  .exitOverride((err) => {
    process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.invalid);
  });

hostOptions(program.command('validate').description('check every toolpack against the ABI; list all violations (exit 1 if any)')).action(
  lazy(
    () => import('./validate-command.js'),
    (m) => m.validateCommand,
  ),
);

hostOptions(program.command('tools').description('list the loaded tools'))
  .option('--json', 'print the tools with their schemas and limits as JSON')
  .action(
    lazy(
      () => import('./tools-command.js'),
      (m) => m.toolsCommand,
    ),
  );

callOptions(
  hostOptions(
    program
      .command('call')
      .description(
        'call a tool and print its response envelope as JSON (exit 0 success, 1 error, 2 invalid request, 3 host failed to start)',
      )
      .argument('<tool>', 'tool id, e.g. seq.gc_content'),
  )
    .option(
      '--input <json>',
      'the input, a JSON object; "@file:PATH" in a field the input schema marks as an artifact imports PATH under the policy\'s import roots (as helix artifact import) and passes its id; in any other field it stays the literal string',
    )
    .option('--input-file <file>', 'read the input JSON from a file (- for stdin)'),
)
  .option('--dry-run', 'validate and authorize without executing')
  .option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)')
  .option('--idempotency-key <key>', 'dedupe retries of this exact request (16+ characters)')
  .option('--compact', 'print the envelope on one line')
  .action(
    lazy(
      () => import('./call-command.js'),
      (m) => m.callCommand,
    ),
  );

hostOptions(
  program
    .command('serve')
    .description(
      'serve the tools to an MCP client (an agent) over stdio; stdout is the protocol, stderr the log (exit 3 if the host cannot start)',
    ),
)
  .option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)')
  .option(
    '--progress-interval-ms <n>',
    'how often a long call sends progress to a client that asked for it, ms (default: 1000)',
    positiveInt('--progress-interval-ms'),
  )
  .option(
    '--max-message-bytes <n>',
    "longest MCP message (one stdin line) in bytes, 1024 to 268435456 (default: the policy's ceilings.maxInputBytes + 1 MiB, 17 MiB with the default policy)",
  )
  .action(async (raw: { maxMessageBytes?: string }, cmd: Command) => {
    // Checked here rather than by an option parser, so that main.ts does not load the MCP modules.
    const serve = await import('./serve-command.js');
    let maxMessageBytes: number | undefined;
    const { maxMessageBytes: given, ...opts } = raw;
    if (given !== undefined) {
      try {
        maxMessageBytes = serve.maxMessageBytesOption(given);
      } catch (err) {
        cmd.error(`error: option '--max-message-bytes <n>' argument '${given}' is invalid. ${(err as Error).message}`, {
          exitCode: EXIT.invalid,
          code: 'commander.invalidArgument',
        });
      }
    }
    await serve.serveCommand({ ...opts, ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }) });
  });

program
  .command('new')
  .description('create a toolpack from a template: source, manifest, schemas, fixtures (exit 2 on a bad name or id, or a non-empty target)')
  .argument('<name>', 'directory name of the new pack, e.g. hello-tool')
  .addOption(new Option('--lang <lang>', 'language of the template').choices(TEMPLATE_LANGS).default('as'))
  .option('--id <id>', 'tool id (default from the name: hello-tool gives hello.tool)')
  .option('--dir <parent>', 'directory to create the pack in', '.')
  .option('--description <text>', "the manifest's description, which agents read to choose the tool")
  .option(
    '--bare',
    "the skeleton without the worked example: one handler that counts an artifact's bytes and lines, one passing fixture, limits that grow with the input",
  )
  .action(
    lazy(
      () => import('./new-command.js'),
      (m) => m.newCommand,
    ),
  );

program
  .command('build')
  .description(
    'compile the toolpack in DIR, or every toolpack under it, and write each module digest into its manifest (exit 1 with the compiler message on failure)',
  )
  .argument('[dir]', 'a toolpack directory, or a directory holding toolpacks', '.')
  .action(
    lazy(
      () => import('./build-command.js'),
      (m) => m.buildCommand,
    ),
  );

program
  .command('test')
  .description(
    'run every fixture of the toolpack(s) in DIR through a real host, each on a fresh store unless it continues another: one line per fixture, a summary (exit 0 all passed, 1 a failure, 2 --only names no fixture, 3 the host refused to start)',
  )
  .argument('[dir]', 'a toolpack directory, or a directory holding toolpacks', '.')
  .option('--policy <file>', 'policy file (default: the bundled default policy)')
  .option('--home <dir>', "keep each fixture's store in DIR/<tool id>/<fixture>/ (default: temporary stores, removed afterwards)")
  .option(
    '--only <names>',
    'run only these fixtures (file names, with or without .json; repeat or separate with commas), and the fixtures they continue',
    collect,
  )
  .option('--json', 'print the results as JSON')
  .action(
    lazy(
      () => import('./test-command.js'),
      (m) => m.testCommand,
    ),
  );

program
  .command('dev')
  .description(
    'build and test the toolpack(s) in DIR, then again on every change of a source, schema, manifest, fixture or data file, until Ctrl-C (exit 0)',
  )
  .argument('[dir]', 'a toolpack directory, or a directory holding toolpacks', '.')
  .option('--policy <file>', 'policy file (default: the bundled default policy)')
  .option('--only <names>', 'run only these fixtures, as helix test --only', collect)
  .action(
    lazy(
      () => import('./dev-command.js'),
      (m) => m.devCommand,
    ),
  );

registerRunsCommands(program);

program
  .command('verify')
  .description(
    're-execute a succeeded run offline against its journal; exit 0 when it reproduces the same output, 1 with the first difference',
  )
  .argument('<run_id>')
  .option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)')
  .action(
    lazy(
      () => import('./runs-command.js'),
      (m) => m.verifyCommand,
    ),
  );

registerArtifactCommands(program);

registerJobCommands(program);

registerStoreCommands(program);

program
  .command('conformance')
  .description(
    'run the conformance suite against this host: adversarial modules and requests, each check tied to requirement ids of abi/ABI.md, after each a well-behaved call on the same host (exit 0 all passed and every requirement has a check, 1 otherwise, 2 bad usage)',
  )
  .option(
    '--engine <engine>',
    'run the checks of this engine only: helix (helix/v1 modules), extism (extism/v1 plugins), container (Docker and Slurm, which must be running); repeat or separate with commas (default: all three)',
    collect,
  )
  .option(
    '--only <selector>',
    'run only the checks with this id, in this category, or citing this ABI id (e.g. cpu.infinite-loop, cpu, ABI-FUEL-001); repeat or separate with commas',
    collect,
  )
  .option('--json <file>', 'write the report as JSON to FILE')
  .option('--html <file>', 'write the report as an HTML page to FILE')
  .action(
    lazy(
      () => import('./conformance-command.js'),
      (m) => m.conformanceCommand,
    ),
  );

await program.parseAsync(process.argv);
