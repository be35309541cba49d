// Shared by the store commands (artifact, runs, gc, store check): load the policy, open the store
// named by --home / HELIX_HOME, run the body, always close the store, report failures with an
// exit code. The store's code is imported when a command runs, not when the command line starts.
// A command checks its arguments before it comes here, and one that only reads something the
// store must already hold says so when there is no store, rather than making an empty one.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Policy } from '../abi/index.js';
import { ARTIFACT_ID_PATTERN, HelixError, RUN_ID_PATTERN } from '../abi/index.js';
import type { StoreRecords } from '../host/5-host/host-records.js';
import { loadPolicy } from '../host/5-host/toolpacks.js';
import type { StoreUpkeep } from '../host/5-host/store-upkeep.js';
import { EXIT, printError } from './output.js';

/** Options every store command takes. */
export interface StoreCommandOptions {
  readonly home?: string;
  readonly policy?: string;
}

/** Failures that keep the store from being opened at all. */
const STARTUP_CODES: ReadonlySet<string> = new Set(['P-PRECOND-POLICY-INVALID', 'P-PRECOND-STORE', 'D-DATA-STORE-HEADER']);

/** The exit code for a failure: 2 for invalid input, 3 when the policy or store cannot be used, else 1. */
export function exitCodeOf(err: unknown): number {
  if (!(err instanceof HelixError)) return EXIT.failed;
  if (err.code.startsWith('I-REQ-')) return EXIT.invalid;
  // The same failures make every other command exit with "could not start".
  if (STARTUP_CODES.has(err.code)) return EXIT.startup;
  return EXIT.failed;
}

/**
 * Loads the policy (validated, so a bad file is reported even where roots are unused), opens the
 * store with `open`, runs `body`, and always closes the store; failures are printed with their
 * exit code.
 */
async function withOpened<T extends { close(): Promise<void> }>(
  opts: StoreCommandOptions,
  open: (policy: Policy) => Promise<T>,
  body: (opened: T, policy: Policy) => Promise<void> | void,
): Promise<void> {
  let opened: T | undefined;
  try {
    const { policy } = loadPolicy(opts.policy);
    opened = await open(policy);
    await body(opened, policy);
  } catch (err) {
    printError(err);
    process.exitCode = exitCodeOf(err);
  } finally {
    await opened?.close();
  }
}

/**
 * Runs `body` over the artifacts and runs of the store (artifact and runs commands). With
 * `absent`, a command that reads what the store must hold: when the home has no store, the
 * error `absent` makes from the home is reported and no store is made.
 */
export function withRecords(
  opts: StoreCommandOptions,
  body: (records: StoreRecords, policy: Policy) => Promise<void> | void,
  absent?: (home: string) => HelixError,
): Promise<void> {
  return withOpened(
    opts,
    async (policy) => {
      const records = await import('../host/5-host/host-records.js');
      const where = records.storeAt(opts.home);
      if (absent !== undefined && !where.exists) throw absent(where.home);
      return records.openRecords({ ...(opts.home === undefined ? {} : { home: opts.home }), policy });
    },
    body,
  );
}

/** Runs `check` and reports its HelixError with the exit code; true when the arguments passed. */
export function argumentsPass(check: () => void): boolean {
  try {
    check();
    return true;
  } catch (err) {
    printError(err);
    process.exitCode = exitCodeOf(err);
    return false;
  }
}

/** P-PRECOND-RUN-NOT-FOUND for a home without a store. */
export function noRunHere(runId: string): (home: string) => HelixError {
  return (home) =>
    new HelixError('P-PRECOND-RUN-NOT-FOUND', {
      message: `No run ${runId}: there is no store at ${home}.`,
      details: { run_id: runId, home },
      hint: 'Pass the --home (or HELIX_HOME) the run was made in; `helix runs list --home DIR` shows its runs.',
    });
}

/** P-PRECOND-ARTIFACT-NOT-FOUND for a home without a store. */
export function noArtifactHere(id: string): (home: string) => HelixError {
  return (home) =>
    new HelixError('P-PRECOND-ARTIFACT-NOT-FOUND', {
      message: `No artifact ${id}: there is no store at ${home}.`,
      details: { artifact_id: id, home },
      hint: 'Pass the --home (or HELIX_HOME) the artifact was imported into; `helix artifact list --home DIR` shows its artifacts.',
    });
}

/** I-REQ-INPUT when `id` is not a run id (run_ and 32 hex digits). */
export function checkRunIdArgument(id: string): void {
  if (!RUN_ID_PATTERN.test(id))
    throw new HelixError('I-REQ-INPUT', {
      message: `${JSON.stringify(id)} is not a run id (run_ followed by 32 hex digits).`,
      details: { violations: [`run id: ${JSON.stringify(id)} is not a run id`] },
      hint: 'Copy the run_id from `helix runs list` or from the response of the call.',
    });
}

/** I-REQ-INPUT when `id` is not an artifact id (art_ and 26 Crockford base32 characters). */
export function checkArtifactIdArgument(id: string): void {
  if (!ARTIFACT_ID_PATTERN.test(id))
    throw new HelixError('I-REQ-INPUT', {
      message: `Invalid artifact id: ${JSON.stringify(id)} is not an artifact id (art_ followed by 26 Crockford base32 characters).`,
      details: {
        violations: [`artifact id: ${JSON.stringify(id)} is not an artifact id (art_ followed by 26 Crockford base32 characters)`],
      },
      hint: 'Copy the id from `helix artifact list` or from the import output, e.g. art_01JD3Q4Z8X9V0W1Y2Z3A4B5C6D.',
    });
}

/** I-REQ-TARGET-NOT-EMPTY when `dir` exists and is not an empty directory: a job bundle's directory must be new or empty. */
export function checkNewDirectory(dir: string, what: string): void {
  if (!existsSync(dir)) return;
  const isDir = statSync(dir).isDirectory();
  if (isDir && readdirSync(dir).length === 0) return;
  throw new HelixError('I-REQ-TARGET-NOT-EMPTY', {
    message: `The ${what} directory ${path.resolve(dir)} ${isDir ? 'is not empty' : 'exists and is not a directory'}.`,
    details: { dir: path.resolve(dir) },
    hint: `Give a new or empty directory for the ${what}.`,
  });
}
/** Runs `body` over the store's upkeep (gc, store check). */
export function withUpkeep(opts: StoreCommandOptions, body: (upkeep: StoreUpkeep) => Promise<void> | void): Promise<void> {
  return withOpened(opts, async () => (await import('../host/5-host/store-upkeep.js')).openUpkeep(opts.home), body);
}
