// `helix artifact import|export|list|show`: the artifact layer on the command line. Records go
// to stdout as JSON (list also as a table), errors to stderr with their taxonomy code.
import { Command, InvalidArgumentError, Option } from 'commander';
import type { ArtifactRecord, Policy } from '../../abi/index.js';
import { exportArtifact, getArtifact, importFile, listArtifacts } from '../artifacts/index.js';
import { HelixError } from '../errors.js';
import { loadPolicy } from '../policy/load-policy.js';
import { openStore, resolveHome, type Store } from '../store/open-store.js';
import { EXIT, printError, printJson } from './output.js';

/** Options every artifact command takes. */
export interface ArtifactCommonOptions {
  readonly home?: string;
  readonly policy?: string;
}

function common(cmd: Command): Command {
  return cmd
    .addOption(new Option('--home <dir>', 'Helix home holding the store (default: $HELIX_HOME or ./.helix)'))
    .addOption(new Option('--policy <file>', 'policy file whose paths.importRoots/exportRoots bound import and export (default: the bundled policy: the working directory)'));
}

function limitOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`--limit must be a positive integer, got "${value}"`);
  return n;
}

/** The exit code for a failure: 2 for invalid input, 3 when the policy or store cannot be used, else 1. */
function exitCodeOf(err: unknown): number {
  if (!(err instanceof HelixError)) return EXIT.failed;
  if (err.code.startsWith('I-REQ-')) return EXIT.invalid;
  // The same failures make every other command exit with "could not start".
  if (err.code === 'P-PRECOND-POLICY-INVALID' || err.code === 'P-PRECOND-STORE') return EXIT.startup;
  return EXIT.failed;
}

/**
 * Loads the policy (validated, so a bad file is reported even where roots are unused), opens the
 * store, runs `body`, and always closes the store; failures are printed with their exit code.
 */
async function withStore(opts: ArtifactCommonOptions, body: (store: Store, policy: Policy) => Promise<void>): Promise<void> {
  let store: Store | undefined;
  try {
    const { policy } = loadPolicy(opts.policy);
    store = openStore(resolveHome(opts.home));
    await body(store, policy);
  } catch (err) {
    printError(err);
    process.exitCode = exitCodeOf(err);
  } finally {
    await store?.close();
  }
}

function humanSize(bytes: number): string {
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
  const line = (r: string[]): string => `${r.slice(0, 4).map((c, i) => c.padEnd(widths[i]!)).join('  ')}  ${r[4]}\n`;
  return [header, ...rows].map(line).join('');
}

/** Adds `helix artifact` and its subcommands to `program`. */
export function registerArtifactCommands(program: Command): void {
  const artifact = program.command('artifact').description('import, export, list and show artifacts (content-addressed data in the store)');

  common(artifact.command('import').description('import a file inside the policy import roots; print its record as JSON').argument('<path>', 'file to import'))
    .option('--label <label>', 'a short label for people')
    .option('--type <type>', 'the type, overriding detection (a lowercase word such as fasta)')
    .action(async (file: string, opts: ArtifactCommonOptions & { label?: string; type?: string }) => {
      await withStore(opts, async (store, policy) => {
        printJson(await importFile(store, policy, file, { label: opts.label ?? null, ...(opts.type === undefined ? {} : { type: opts.type }) }));
      });
    });

  common(
    artifact
      .command('export')
      .description('write an artifact to a new file inside the policy export roots (hash-checked, atomic)')
      .argument('<id>', 'artifact id')
      .argument('<path>', 'destination file'),
  )
    .option('--overwrite', 'replace an existing file')
    .action(async (id: string, dest: string, opts: ArtifactCommonOptions & { overwrite?: boolean }) => {
      await withStore(opts, async (store, policy) => {
        const written = await exportArtifact(store, policy, id, dest, { overwrite: opts.overwrite === true });
        printJson({ id, ...written });
      });
    });

  common(artifact.command('list').description('list artifacts in creation order'))
    .option('--json', 'print the records as JSON')
    .option('--limit <n>', 'at most this many artifacts', limitOption)
    .action(async (opts: ArtifactCommonOptions & { json?: boolean; limit?: number }) => {
      await withStore(opts, async (store) => {
        const records = listArtifacts(store, opts.limit === undefined ? {} : { limit: opts.limit });
        if (opts.json) printJson(records);
        else process.stdout.write(artifactTable(records));
      });
    });

  common(artifact.command('show').description('print the record of an artifact as JSON').argument('<id>', 'artifact id')).action(
    async (id: string, opts: ArtifactCommonOptions) => {
      await withStore(opts, async (store) => {
        printJson(getArtifact(store, id));
      });
    },
  );
}
