// `helix call TOOL`: build a request envelope from the options, call the tool, print the
// response envelope on stdout, exit with the code of its status. A module built from sources
// that have since changed gets one warning line on stderr; `"@file:PATH"` in an artifact field
// is imported first (file-inputs.ts), one line on stderr for each.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cutReportText, type ErrorCode, HelixError, RequestEnvelopeSchema, scanJsonText } from '../abi/index.js';
import { staleBuild } from '../host/6-faces/toolchain/source-stamp.js';
import { jsonRefusal } from '../host/1-base/json-entry.js';
import type { Host } from '../host/5-host/host.js';
import { checkVersionRange, openHost, toolOffered } from './open-host.js';
import type { WasmTool } from '../host/5-host/toolpacks.js';
import { errorResponse, ZERO_METRICS } from '../host/1-base/response.js';
import { importFileFields } from './file-inputs.js';
import { EXIT, exitCodeFor, printError, printJson } from './output.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Options of `helix call`. */
export interface CallCommandOptions {
  /** --toolpacks (or its former name --plugins). */
  readonly toolpacks?: string;
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
export async function callCommand(toolId: string, opts: CallCommandOptions): Promise<void> {
  const callId = randomUUID();
  const provenance = { tool_id: toolId, tool_version: opts.versionRange, digest: null };
  const refuse = (message: string, hint?: string, code: ErrorCode = 'I-REQ-JSON', details: Record<string, unknown> = {}): void => {
    const err = new HelixError(code, { message, details, ...(hint === undefined ? {} : { hint }) });
    printJson(errorResponse(callId, err.toWire(), ZERO_METRICS, provenance), opts.compact);
    process.exitCode = EXIT.invalid;
  };
  if ((opts.input === undefined) === (opts.inputFile === undefined)) {
    refuse('Give the input with exactly one of --input or --input-file.', 'e.g. helix call seq.gc_content --input \'{"sequence":"ACGT"}\'');
    return;
  }
  let source: string | Uint8Array;
  try {
    source = opts.input ?? readFileSync(opts.inputFile === '-' ? 0 : opts.inputFile!);
  } catch (err) {
    refuse(`Cannot read ${opts.inputFile}: ${(err as Error).message}`, 'Pass a readable file, or - for stdin.');
    return;
  }
  // A file is decoded strictly: invalid UTF-8 would otherwise become U+FFFD, another input.
  let text: string;
  try {
    text = typeof source === 'string' ? source : utf8.decode(source);
  } catch {
    refuse(`${opts.inputFile === '-' ? 'stdin' : opts.inputFile} is not UTF-8 text.`, 'Save the input as UTF-8 JSON.');
    return;
  }
  // The text is bounded before it is parsed (ABI-JSON-001 to -004), naming the literal, and
  // where as host.call would: a pointer into the request envelope, cut again once prefixed so it
  // stays within JSON_REPORT_MAX_CHARS as host.call's does (ABI-JSON-007).
  const violation = scanJsonText(text);
  if (violation !== undefined) {
    const refusal = jsonRefusal({ ...violation, pointer: cutReportText(`/input${violation.pointer}`) }, 'request', 'the request');
    refuse(refusal.message, undefined, refusal.code, refusal.details);
    return;
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (err) {
    refuse(`The input is not valid JSON: ${(err as Error).message}`, 'Pass a JSON object, e.g. --input \'{"sequence":"ACGT"}\'.');
    return;
  }
  const constraints: Record<string, number | string> = {};
  if (opts.timeoutMs !== undefined) constraints.timeout_ms = opts.timeoutMs;
  if (opts.memoryMb !== undefined) constraints.memory_mb_limit = opts.memoryMb;
  if (opts.idempotencyKey !== undefined) constraints.idempotency_key = opts.idempotencyKey;
  const request = { call_id: callId, tool_id: toolId, tool_version: opts.versionRange, input, constraints, dry_run: opts.dryRun ?? false };
  // The request is checked as the host would check it before a host (and a store) is made.
  const parsed = RequestEnvelopeSchema.safeParse(request);
  if (!parsed.success) {
    const violations = parsed.error.issues.map((i) => ({ path: `/${i.path.join('/')}`, message: i.message }));
    const message = `The request envelope has ${violations.length} violation${violations.length === 1 ? '' : 's'}.`;
    refuse(message, undefined, 'I-REQ-ENVELOPE', { violations });
    return;
  }
  let refused: HelixError | undefined;
  let host: Host;
  try {
    host = await openHost(opts, (tools) => {
      try {
        checkVersionRange(opts.versionRange);
        toolOffered(toolId, opts.versionRange)(tools);
      } catch (err) {
        if (err instanceof HelixError) refused = err;
        throw err;
      }
    });
  } catch (err) {
    if (refused !== undefined && err === refused) {
      const response = errorResponse(callId, refused.toWire(), ZERO_METRICS, provenance);
      printJson(response, opts.compact);
      process.exitCode = exitCodeFor(response);
      return;
    }
    printError(err);
    process.exitCode = EXIT.startup;
    return;
  }
  warnStale(host, toolId);
  try {
    // "@file:PATH" in an artifact field: imported first; a refused import calls nothing.
    try {
      const resolved = await importFileFields(host, toolId, opts.versionRange, input);
      request.input = resolved.input;
      for (const i of resolved.imports) process.stderr.write(`helix: imported ${i.path} as ${i.artifact_id} for ${i.field}\n`);
    } catch (err) {
      if (!(err instanceof HelixError)) throw err;
      const response = errorResponse(callId, err.toWire(), ZERO_METRICS, provenance);
      printJson(response, opts.compact);
      process.exitCode = exitCodeFor(response);
      return;
    }
    const response = await host.call(request);
    printJson(response, opts.compact);
    process.exitCode = exitCodeFor(response);
  } finally {
    await host.close();
  }
}

/**
 * One line on stderr when the called tool's module is older than its sources: the call goes
 * ahead (the author may be comparing), but never without saying it runs the last build.
 */
function warnStale(host: Host, toolId: string): void {
  for (const tool of host.tools()) {
    if (tool.kind !== 'wasm' || tool.id !== toolId) continue;
    const stale = staleBuild((tool as WasmTool).loaded);
    if (stale !== undefined) process.stderr.write(`helix: ${stale}; calling the module as last built\n`);
  }
}
