// `helix gc` and `helix store check`: reclaim what nothing refers to, and verify everything the
// store holds. A report for people on stdout, or JSON with --json; exit 0 clean, 1 otherwise.
import type { Command } from 'commander';
import { HelixError } from '../abi/index.js';
import type { CheckReport, CompactReport, GcReport } from '../host/5-host/store-upkeep.js';
import { humanSize } from './artifact-command.js';
import { EXIT, printError, printJson } from './output.js';
import { argumentsPass, withUpkeep } from './with-store.js';

const HOME = 'Helix home holding the store (default: $HELIX_HOME or ./.helix)';

interface GcOptions {
  readonly home?: string;
  readonly dryRun?: boolean;
  readonly compact?: boolean;
  readonly json?: boolean;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The gc report as lines for people. */
export function gcText(r: GcReport, compaction?: CompactReport): string {
  const verb = r.dry_run ? 'would remove' : 'removed';
  const lines = [
    `gc ${verb} ${plural(r.removed.chunks, 'chunk')} (${humanSize(r.removed.chunk_bytes)}), ${plural(r.removed.blobs, 'blob')}, ${plural(r.removed.pending_writes, 'pending write')} of dead processes`,
    `kept ${plural(r.kept.chunks, 'chunk')} of ${plural(r.kept.blobs, 'blob')} and ${plural(r.kept.live_pending_writes, 'pending write')} of live processes`,
    `file ${humanSize(r.space_after.file_bytes)}; free for reuse by later writes ${humanSize(r.space_after.free_bytes)} (before: ${humanSize(r.space_before.free_bytes)})`,
  ];
  if (compaction !== undefined)
    lines.push(`compacted ${humanSize(compaction.file_bytes_before)} -> ${humanSize(compaction.file_bytes_after)}`);
  return `${lines.join('\n')}\n`;
}

/** The check report as lines for people: one line per problem, then a summary. */
export function checkText(r: CheckReport): string {
  const lines = r.problems.map((p) => `${p.code} ${p.database} ${p.key}: ${p.message}`);
  if (r.problem_count > r.problems.length) lines.push(`... and ${r.problem_count - r.problems.length} more`);
  for (const note of r.notes) lines.push(`note: ${note}`);
  const entries = Object.values(r.checked).reduce((a, b) => a + b, 0);
  lines.push(
    `store check: ${entries} entries in ${Object.keys(r.checked).length} databases, ${humanSize(r.bytes_hashed)} re-hashed: ${r.ok ? 'clean' : plural(r.problem_count, 'problem')}`,
  );
  return `${lines.join('\n')}\n`;
}

async function gcCommand(opts: GcOptions): Promise<void> {
  // Checked before the store is opened, so a wrong command line makes no store.
  const conflict = () => {
    if (opts.dryRun && opts.compact)
      throw new HelixError('I-REQ-ENVELOPE', {
        message: '--dry-run removes and compacts nothing; it cannot go with --compact.',
        hint: 'Run `helix gc --dry-run` to see what gc would remove, then `helix gc --compact`.',
      });
  };
  if (!argumentsPass(conflict)) return;
  let report: GcReport | undefined;
  await withUpkeep(opts, async (upkeep) => {
    report = await upkeep.gc({ dryRun: opts.dryRun === true });
  });
  if (report === undefined) return;
  let compaction: CompactReport | undefined;
  let failure: unknown;
  if (opts.compact) {
    // The store is closed again here: compaction needs every process out, this one included.
    compaction = await (await import('../host/5-host/store-upkeep.js')).compactHome(opts.home).catch((err: unknown) => {
      failure = err;
      return undefined;
    });
  }
  if (opts.json) printJson({ ...report, ...(compaction === undefined ? {} : { compaction }) });
  else process.stdout.write(gcText(report, compaction));
  if (failure !== undefined) {
    printError(failure);
    process.exitCode = EXIT.failed;
  }
}

async function checkCommand(opts: { home?: string; json?: boolean }): Promise<void> {
  await withUpkeep(opts, (upkeep) => {
    const report = upkeep.check();
    if (opts.json) printJson(report);
    else process.stdout.write(checkText(report));
    if (!report.ok) process.exitCode = EXIT.failed;
  });
}

/** Adds `helix gc` and `helix store check` to the program. */
export function registerStoreCommands(program: Command): void {
  program
    .command('gc')
    .description(
      'remove chunks, blobs and pending writes nothing refers to (never a run, an artifact or an audit record), safely alongside other processes; print what went and the space freed for reuse',
    )
    .option('--home <dir>', HOME)
    .option('--dry-run', 'decide as gc would and report, removing nothing')
    .option(
      '--compact',
      'then shrink the file by rewriting it without its free pages (refused, exit 1, while another process has the store open)',
    )
    .option('--json', 'print the report as JSON')
    .action(gcCommand);
  program
    .command('store')
    .description('check the store')
    .command('check')
    .description(
      'walk every database: re-hash every chunk and blob, parse every record, follow every reference, re-chain every journal; one line per problem (D-DATA code, database, key); exit 0 clean, 1 with problems',
    )
    .option('--home <dir>', HOME)
    .option('--json', 'print the report as JSON')
    .action(checkCommand);
}
