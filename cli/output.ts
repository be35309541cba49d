// How the CLI reports: JSON on stdout, human messages on stderr, stable exit codes.
import type { ResponseEnvelope } from '../abi/index.js';
import { HelixError, violationLines } from '../abi/index.js';
import { EXIT } from './exit-codes.js';

export { EXIT };

/** The exit code for a response envelope's status. */
export function exitCodeFor(response: ResponseEnvelope): number {
  if (response.status === 'success') return EXIT.ok;
  return response.status === 'invalid_request' ? EXIT.invalid : EXIT.failed;
}

/** Writes a HelixError for a person: code and message, each violation on its own line, the hint. */
export function printError(err: unknown, stderr: NodeJS.WritableStream = process.stderr): void {
  if (err instanceof HelixError) {
    stderr.write(`helix: ${err.code}: ${err.message}\n`);
    for (const line of violationLines(err.details).lines) stderr.write(`  ${line}\n`);
    stderr.write(`hint: ${err.hint}\n`);
    return;
  }
  stderr.write(`helix: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}

/** Writes JSON to stdout, pretty unless compact. */
export function printJson(value: unknown, compact = false): void {
  process.stdout.write(`${JSON.stringify(value, null, compact ? undefined : 2)}\n`);
}
