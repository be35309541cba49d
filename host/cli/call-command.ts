// `helix call TOOL`: build a request envelope from the options, call the tool, print the
// response envelope on stdout, exit with the code of its status.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HelixError } from '../errors.js';
import { createHost } from '../host.js';
import { errorResponse, ZERO_METRICS } from '../response.js';
import { EXIT, exitCodeFor, printError, printJson } from './output.js';

/** Options of `helix call`. */
export interface CallOptions {
  readonly plugins?: string;
  readonly policy?: string;
  readonly input?: string;
  readonly inputFile?: string;
  readonly versionRange: string;
  readonly timeoutMs?: number;
  readonly memoryMb?: number;
  readonly dryRun?: boolean;
  readonly compact?: boolean;
  readonly home?: string;
  readonly idempotencyKey?: string;
}

/** Runs `helix call`. */
export async function callCommand(toolId: string, opts: CallOptions): Promise<void> {
  const callId = randomUUID();
  const provenance = { tool_id: toolId, tool_version: opts.versionRange, digest: null };
  const refuse = (message: string, hint: string): void => {
    const err = new HelixError('I-REQ-JSON', { message, hint });
    printJson(errorResponse(callId, err.toWire(), ZERO_METRICS, provenance), opts.compact);
    process.exitCode = EXIT.invalid;
  };
  if ((opts.input === undefined) === (opts.inputFile === undefined)) {
    refuse('Give the input with exactly one of --input or --input-file.', 'e.g. helix call seq.gc_content --input \'{"sequence":"ACGT"}\'');
    return;
  }
  let text: string;
  try {
    text = opts.input ?? readFileSync(opts.inputFile === '-' ? 0 : opts.inputFile!, 'utf8');
  } catch (err) {
    refuse(`Cannot read ${opts.inputFile}: ${(err as Error).message}`, 'Pass a readable file, or - for stdin.');
    return;
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    refuse(`The input is not valid JSON: ${(err as Error).message}`, 'Pass a JSON object, e.g. --input \'{"sequence":"ACGT"}\'.');
    return;
  }
  let host;
  try {
    host = await createHost({ pluginsDir: opts.plugins, policyFile: opts.policy, home: opts.home });
  } catch (err) {
    printError(err);
    process.exitCode = EXIT.startup;
    return;
  }
  try {
    const constraints: Record<string, number | string> = {};
    if (opts.timeoutMs !== undefined) constraints.timeout_ms = opts.timeoutMs;
    if (opts.memoryMb !== undefined) constraints.memory_mb_limit = opts.memoryMb;
    if (opts.idempotencyKey !== undefined) constraints.idempotency_key = opts.idempotencyKey;
    const response = await host.call({
      call_id: callId,
      tool_id: toolId,
      tool_version: opts.versionRange,
      input,
      constraints,
      dry_run: opts.dryRun ?? false,
    });
    printJson(response, opts.compact);
    process.exitCode = exitCodeFor(response);
  } finally {
    await host.close();
  }
}
