// Shared by the store commands (artifact, runs): load the policy, open the store named by
// --home / HELIX_HOME, run the body, always close the store, report failures with an exit code.
import type { Policy } from '../../abi/index.js';
import { HelixError } from '../../abi/index.js';
import { loadPolicy } from '../policy/load-policy.js';
import { openStore, resolveHome, type Store } from '../store/open-store.js';
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
 * store, runs `body`, and always closes the store; failures are printed with their exit code.
 */
export async function withStore(opts: StoreCommandOptions, body: (store: Store, policy: Policy) => Promise<void> | void): Promise<void> {
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
