// How the CLI reports: JSON on stdout, human messages on stderr, stable exit codes.
import type { ResponseEnvelope } from '../../abi/index.js';
import { HelixError } from '../../abi/index.js';

/** Exit codes of every helix command. */
export const EXIT = {
  ok: 0,
  /** The call ended in retryable_error or terminal_error; `helix validate` found violations. */
  failed: 1,
  /** invalid_request, or bad command-line usage. */
  invalid: 2,
  /** The host could not start (fail-closed: invalid toolpacks or policy). */
  startup: 3,
} as const;

/** The exit code for a response envelope's status. */
export function exitCodeFor(response: ResponseEnvelope): number {
  if (response.status === 'success') return EXIT.ok;
  return response.status === 'invalid_request' ? EXIT.invalid : EXIT.failed;
}

/** Writes a HelixError for a person: code and message, each violation on its own line, the hint. */
export function printError(err: unknown, stderr: NodeJS.WritableStream = process.stderr): void {
  if (err instanceof HelixError) {
    stderr.write(`helix: ${err.code}: ${err.message}\n`);
    const violations = err.details.violations;
    if (Array.isArray(violations)) for (const v of violations) stderr.write(`  ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
    stderr.write(`hint: ${err.hint}\n`);
    return;
  }
  stderr.write(`helix: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}

/** Writes JSON to stdout, pretty unless compact. */
export function printJson(value: unknown, compact = false): void {
  process.stdout.write(`${JSON.stringify(value, null, compact ? undefined : 2)}\n`);
}
