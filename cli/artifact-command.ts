// `helix artifact import|export|list|show`: the artifact layer on the command line. Records go
// to stdout as JSON (list also as a table), errors to stderr with their taxonomy code.
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { ArtifactRecord } from '../abi/index.js';
import { HelixError } from '../abi/index.js';
import { printError, printJson } from './output.js';
import { argumentsPass, checkArtifactIdArgument, exitCodeOf, noArtifactHere, withRecords, type StoreCommandOptions } from './with-store.js';
import { loadPolicy } from '../host/5-host/toolpacks.js';

/** Options every artifact command takes. */
export type ArtifactCommonOptions = StoreCommandOptions;

function common(cmd: Command): Command {
  return cmd
    .addOption(new Option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)'))
    .addOption(
      new Option(
        '--policy <file>',
        'policy file whose paths.importRoots/exportRoots bound import and export (default: the bundled policy: the working directory)',
      ),
    );
}

function limitOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`--limit must be a positive integer, got "${value}"`);
  return n;
}

/** A byte count for people: B, KiB, MiB, GiB, TiB with one decimal. */
export function humanSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The artifacts as a table: ID, TYPE, SIZE, LABEL, CREATED. */
export function artifactTable(records: readonly ArtifactRecord[]): string {
  const rows = records.map((r) => [
    r.id,
    r.compression === null ? r.type : `${r.type}+${r.compression}`,
    humanSize(r.size),
    new Date(r.created_at).toISOString(),
    r.label ?? '-',
  ]);
  const header = ['ID', 'TYPE', 'SIZE', 'CREATED', 'LABEL'];
  const widths = header.slice(0, 4).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string =>
    `${r
      .slice(0, 4)
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')}  ${r[4]}\n`;
  return [header, ...rows].map(line).join('');
}

/** Adds `helix artifact` and its subcommands to `program`. */
export function registerArtifactCommands(program: Command): void {
  const artifact = program.command('artifact').description('import, export, list and show artifacts (content-addressed data in the store)');

  common(
    artifact
      .command('import')
      .description('import a file inside the policy import roots, or inline text with --text; print its record as JSON')
      .argument('[path]', 'file to import'),
  )
    .option('--text <text>', 'import this text instead of a file')
    .option('--label <label>', 'a short label for people')
    .option('--type <type>', 'the type, overriding detection (a lowercase word such as fasta)')
    .option('-q, --quiet', 'print only the artifact id (for scripts)')
    .action(
      async (file: string | undefined, opts: ArtifactCommonOptions & { label?: string; type?: string; text?: string; quiet?: boolean }) => {
        // Checked before the store is opened, so a wrong command line leaves no store behind.
        if ((file === undefined) === (opts.text === undefined)) {
          const err = new HelixError('I-REQ-ENVELOPE', {
            message: 'Give exactly one of a path or --text.',
            hint: 'helix artifact import reads.fastq, or helix artifact import --text ">r1\nACGT"',
          });
          printError(err);
          process.exitCode = exitCodeOf(err);
          return;
        }
        const meta = { label: opts.label ?? null, ...(opts.type === undefined ? {} : { type: opts.type }) };
        // The label, the type and the file (roots, kind, size) too: a refused import makes no store.
        try {
          const { checkFileImport } = await import('../host/5-host/host-records.js');
          await checkFileImport(loadPolicy(opts.policy).policy, file, meta);
        } catch (err) {
          printError(err);
          process.exitCode = exitCodeOf(err);
          return;
        }
        await withRecords(opts, async ({ artifacts }, policy) => {
          const record =
            opts.text !== undefined
              ? await artifacts.importInline(opts.text, { ...meta, maxBytes: policy.ceilings.maxImportBytes })
              : await artifacts.importFile(file!, meta);
          if (opts.quiet === true) process.stdout.write(`${record.id}\n`);
          else printJson(record);
        });
      },
    );

  common(
    artifact
      .command('export')
      .description('write an artifact to a new file inside the policy export roots (hash-checked, atomic)')
      .argument('<id>', 'artifact id')
      .argument('<path>', 'destination file'),
  )
    .option('--overwrite', 'replace an existing file')
    .action(async (id: string, dest: string, opts: ArtifactCommonOptions & { overwrite?: boolean }) => {
      if (!argumentsPass(() => checkArtifactIdArgument(id))) return;
      await withRecords(
        opts,
        async ({ artifacts }) => {
          const written = await artifacts.export(id, dest, { overwrite: opts.overwrite === true });
          printJson({ id, ...written });
        },
        noArtifactHere(id),
      );
    });

  common(artifact.command('list').description('list artifacts in creation order'))
    .option('--json', 'print the records as JSON')
    .option('--limit <n>', 'at most this many artifacts', limitOption)
    .action(async (opts: ArtifactCommonOptions & { json?: boolean; limit?: number }) => {
      await withRecords(opts, async ({ artifacts }) => {
        const records = artifacts.list(opts.limit === undefined ? {} : { limit: opts.limit });
        if (opts.json) printJson(records);
        else process.stdout.write(artifactTable(records));
      });
    });

  common(artifact.command('show').description('print the record of an artifact as JSON').argument('<id>', 'artifact id')).action(
    async (id: string, opts: ArtifactCommonOptions) => {
      if (!argumentsPass(() => checkArtifactIdArgument(id))) return;
      await withRecords(
        opts,
        async ({ artifacts }) => {
          printJson(artifacts.get(id));
        },
        noArtifactHere(id),
      );
    },
  );
}
