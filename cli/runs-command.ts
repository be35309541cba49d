// `helix runs list | show | export`: what ran, from what, under which policy, and the RO-Crate
// of a run with its ancestry. Reads the store's records (host-records.ts); no toolpacks are loaded.
import type { Command } from 'commander';
import { HelixError, RUN_STATUSES, type RunStatus } from '../abi/index.js';
import { EXIT, printJson } from './output.js';
import { argumentsPass, checkRunIdArgument, noRunHere, withRecords } from './with-store.js';
import { InvalidArgumentError } from 'commander';

function limitOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`--limit must be a positive integer, got "${value}"`);
  return n;
}

function checkStatus(status: string | undefined): void {
  if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) {
    throw new HelixError('I-REQ-ENVELOPE', {
      message: `--status ${status} is not a run status.`,
      hint: `Use one of ${RUN_STATUSES.join(', ')}.`,
    });
  }
}

/** Runs `helix verify`: prints the report as JSON; exit 1 when the run does not reproduce. */
export async function verifyCommand(runId: string, opts: { home?: string }): Promise<void> {
  if (!argumentsPass(() => checkRunIdArgument(runId))) return;
  await withRecords(
    opts,
    async ({ runs }) => {
      const report = await runs.verify(runId);
      printJson(report);
      if (!report.match) process.exitCode = EXIT.failed;
    },
    noRunHere(runId),
  );
}

/** Adds the `runs` commands to the program. */
export function registerRunsCommands(program: Command): void {
  const runs = program.command('runs').description('inspect recorded runs and export their provenance');
  runs
    .command('list')
    .description('recorded runs, newest first')
    .option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)')
    .option('--status <status>', `only runs in this status (${RUN_STATUSES.join(', ')})`)
    .option('--tool <id>', 'only runs of this tool')
    .option('--limit <n>', 'at most this many (default 50)', limitOption, 50)
    .option('--json', 'print the run records as JSON')
    .action(async (opts: { home?: string; status?: string; tool?: string; limit: number; json?: boolean }) => {
      // Checked before the store is opened, so a wrong command line makes no store.
      if (!argumentsPass(() => checkStatus(opts.status))) return;
      await withRecords(opts, ({ runs }) => {
        const list = runs.list({ status: opts.status as RunStatus | undefined, toolId: opts.tool, limit: opts.limit });
        if (opts.json) return printJson(list);
        process.stdout.write(`${['RUN', 'STATUS', 'TOOL', 'STARTED', 'MS'].join('\t')}\n`);
        for (const r of list) {
          const when = r.started_at === null ? '-' : new Date(r.started_at).toISOString();
          process.stdout.write(
            `${[r.run_id, r.status, `${r.tool_id}@${r.tool_version}`, when, r.metrics?.duration_ms ?? '-'].join('\t')}\n`,
          );
        }
      });
    });
  runs
    .command('show')
    .description('one run: record, refused capability calls, canonical params, events')
    .argument('<run_id>')
    .option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)')
    .action(async (runId: string, opts: { home?: string }) => {
      if (!argumentsPass(() => checkRunIdArgument(runId))) return;
      await withRecords(
        opts,
        ({ runs }) => {
          // Refusals come first after the record: a run can succeed although its code was refused a
          // capability (it caught the `forbidden` answer), and the author should not miss that.
          const shown = runs.show(runId);
          printJson(shown);
          for (const r of shown.refused_calls)
            process.stderr.write(`refused: call ${r.seq} ${r.capability ?? '(no capability name)'}: ${r.code}, ${r.reason}. ${r.hint}\n`);
        },
        noRunHere(runId),
      );
    });
  runs
    .command('export')
    .description('write the run and the runs that produced its inputs as an RO-Crate (Workflow Run Crate)')
    .argument('<run_id>')
    .argument('<dir>', 'a new or empty directory')
    .option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)')
    .option('--no-data', "metadata only, without the artifacts' bytes")
    .action(async (runId: string, dir: string, opts: { home?: string; data: boolean }) => {
      if (!argumentsPass(() => checkRunIdArgument(runId))) return;
      await withRecords(
        opts,
        async ({ runs }) => {
          const crate = await runs.exportCrate(runId, dir, { includeData: opts.data });
          process.stdout.write(
            `exported ${crate.runs.length} run${crate.runs.length === 1 ? '' : 's'} and ${crate.files.length} file${crate.files.length === 1 ? '' : 's'} to ${crate.dir}\n`,
          );
        },
        noRunHere(runId),
      );
    });
}
