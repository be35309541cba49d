// Shared by the store commands (artifact, runs, gc, store check): load the policy, open the store
// named by --home / HELIX_HOME, run the body, always close the store, report failures with an
// exit code. The store's code is imported when a command runs, not when the command line starts.
import type { Policy } from '../abi/index.js';
import { HelixError } from '../abi/index.js';
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

/** Runs `body` over the artifacts and runs of the store (artifact and runs commands). */
export function withRecords(
  opts: StoreCommandOptions,
  body: (records: StoreRecords, policy: Policy) => Promise<void> | void,
): Promise<void> {
  return withOpened(
    opts,
    async (policy) =>
      (await import('../host/5-host/host-records.js')).openRecords({ ...(opts.home === undefined ? {} : { home: opts.home }), policy }),
    body,
  );
}

/** Runs `body` over the store's upkeep (gc, store check). */
export function withUpkeep(opts: StoreCommandOptions, body: (upkeep: StoreUpkeep) => Promise<void> | void): Promise<void> {
  return withOpened(opts, async () => (await import('../host/5-host/store-upkeep.js')).openUpkeep(opts.home), body);
}
