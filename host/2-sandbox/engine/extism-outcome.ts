// How an Extism plugin's call ended, mapped onto the taxonomy (ABI-EXTISM-006 to 008): the host
// function's decision first (ABI-FINAL-006), then fuel, what escaped the plugin (a trap, a stack
// overflow, its own uncaught exception, a kernel function's error), an error it set, its return
// code and its output. Runs in the worker, beside the plugin (extism-sandbox.ts).
import { createHash } from 'node:crypto';
import { GuestOutputSchema, scanJsonText, type EffectiveLimits, type GuestOutput, type JsonViolation } from '../../../abi/index.js';
import { jsonRefusal } from '../../1-base/json-entry.js';
import { isGuestException, UNCAUGHT_EXCEPTION, uncaughtMessage, type GuestAbort } from './decision.js';
import type { ExecuteFault, ExecuteResult } from './protocol.js';
import { fault } from './runner.js';
import { utf8Prefix, wellFormed } from './report-text.js';
import { siteDetails, siteText, trapSite } from './trap-site.js';

/** Most bytes of a plugin's error message kept in a fault's details. */
const PLUGIN_ERROR_MAX = 1024;

/** The plugin's counters when its call ended. */
export interface Report {
  /** The fuel counter (when a decision was made, at that moment); negative when the budget ran out. */
  readonly remaining: bigint;
  /** The entry function's i32 result, or null when it did not return (trap, decision). */
  readonly returnCode: number | null;
  readonly memoryPages: number;
}

/** Everything known when a plugin's call has ended. */
export interface Ending {
  /** The output block's bytes, or null when none was set. */
  readonly output: Uint8Array | null;
  /** The error block's bytes (`error_set`), or null when none was set. */
  readonly pluginError: Uint8Array | null;
  /** What escaped the plugin's start or entry function, if anything. */
  readonly failure: unknown;
  /** The first exit the host function threw, if any: it wins over everything else. */
  readonly decision: GuestAbort | undefined;
  readonly report: Report;
  readonly limits: Pick<EffectiveLimits, 'fuel' | 'maxMemoryPages' | 'maxOutputBytes'>;
  readonly entrypoint: string;
  /** The export a function index belongs to, for plugins without a name section. */
  readonly exportName?: (index: number) => string | undefined;
}

/** Maps how a plugin call ended onto the taxonomy (ABI-EXTISM-006..008). */
export function classify({
  output,
  pluginError: errorBytes,
  failure,
  decision,
  report,
  limits,
  entrypoint,
  exportName,
}: Ending): ExecuteResult {
  const fuelUsed = limits.fuel - Number(report.remaining);
  const pages = report.memoryPages;
  if (decision !== undefined) return fault(decision.code, decision.message, decision.details, fuelUsed, pages);
  if (report.remaining < 0n) {
    return fault(
      'S-TOOL-FUEL-EXHAUSTED',
      `The tool used up its fuel budget of ${limits.fuel}.`,
      { fuel_limit: limits.fuel, fuel_used: fuelUsed, phase: 'execute' },
      fuelUsed,
      pages,
    );
  }
  if (failure !== undefined) {
    const { name, message } = describe(failure);
    if (name === 'RangeError' && /call stack/i.test(message))
      return fault('S-TOOL-STACK-OVERFLOW', 'The tool exhausted its call stack.', { phase: 'execute' }, fuelUsed, pages);
    const atCap =
      pages >= limits.maxMemoryPages
        ? ` Memory is at its cap of ${limits.maxMemoryPages} pages, so a failed allocation is the likely cause.`
        : '';
    const memory = { memory_pages: pages, max_memory_pages: limits.maxMemoryPages };
    if (isGuestException(failure)) {
      return fault(
        'S-TOOL-TRAP',
        `${uncaughtMessage('execute')}.${atCap}`,
        { trap: UNCAUGHT_EXCEPTION, uncaught_exception: true, phase: 'execute', ...memory },
        fuelUsed,
        pages,
      );
    }
    if (name !== 'RuntimeError')
      return fault(
        'S-TOOL-TRAP',
        `The tool trapped in the Extism kernel: ${message}.${atCap}`,
        { trap: message, phase: 'execute', ...memory },
        fuelUsed,
        pages,
      );
    // The export the host called, and the plugin's own function at the top of the trap's stack.
    const site = trapSite((failure as { stack?: unknown }).stack, exportName);
    const at = site === undefined ? '' : `, at ${siteText(site)}`;
    return fault(
      'S-TOOL-TRAP',
      `The tool trapped in ${entrypoint}: ${message}${at}.${atCap}`,
      { trap: message, phase: 'execute', export: entrypoint, ...siteDetails(site), ...memory },
      fuelUsed,
      pages,
    );
  }
  if (errorBytes !== null) return pluginError(new TextDecoder().decode(errorBytes), fuelUsed, pages);
  if (report.returnCode !== 0) {
    return fault(
      'S-TOOL-EXTISM-ERROR',
      `${entrypoint} returned ${report.returnCode} without setting an error.`,
      { return_code: report.returnCode, output_preview: preview(output) },
      fuelUsed,
      pages,
    );
  }
  const bytes = output ?? new Uint8Array(0);
  if (bytes.length > limits.maxOutputBytes) {
    return fault(
      'S-TOOL-OUTPUT-TOO-LARGE',
      `The output is ${bytes.length} bytes, above the limit of ${limits.maxOutputBytes}.`,
      { output_bytes: bytes.length, max_output_bytes: limits.maxOutputBytes },
      fuelUsed,
      pages,
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fault('S-TOOL-OUTPUT-ENCODING', 'The output is not valid UTF-8.', { output_bytes: bytes.length }, fuelUsed, pages);
  }
  // The output is the value itself (no envelope), bounded before JSON.parse (ABI-JSON-001 to -004).
  const violation = scanJsonText(text);
  if (violation !== undefined) return outputRefusal(violation, fuelUsed, pages);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return fault(
      'S-TOOL-OUTPUT-JSON',
      `The output is not JSON: ${wellFormed((err as Error).message)}`,
      { preview: preview(bytes) },
      fuelUsed,
      pages,
    );
  }
  const measures = { fuelUsed, memoryPages: pages, recycled: false };
  return {
    kind: 'output',
    output: { status: 'ok', output: json } as GuestOutput,
    outputSha256: createHash('sha256').update(bytes).digest('hex'),
    ...measures,
  };
}

/**
 * An error the plugin set with `extism_error_set`: a JSON taxonomy error (`{"code","message",...}`)
 * is the tool's own error, as a helix/v1 error envelope would be; any other text is
 * S-TOOL-EXTISM-ERROR carrying it.
 */
function pluginError(text: string, fuelUsed: number, pages: number): ExecuteResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // A JSON error object is bounded like a helix/v1 envelope's `error` member (ABI-JSON-001 to -004).
  const violation = typeof parsed === 'object' && parsed !== null ? scanJsonText(text) : undefined;
  if (violation !== undefined) return outputRefusal(violation, fuelUsed, pages);
  const envelope = GuestOutputSchema.safeParse({ status: 'error', error: parsed });
  if (envelope.success && envelope.data.status === 'error') {
    return {
      kind: 'output',
      output: envelope.data,
      outputSha256: createHash('sha256').update(text).digest('hex'),
      fuelUsed,
      memoryPages: pages,
      recycled: false,
    };
  }
  return fault(
    'S-TOOL-EXTISM-ERROR',
    `The plugin reported an error: ${utf8Prefix(text, 200)}`,
    { plugin_error: utf8Prefix(text, PLUGIN_ERROR_MAX) },
    fuelUsed,
    pages,
  );
}

function outputRefusal(violation: JsonViolation, fuelUsed: number, pages: number): ExecuteFault {
  const r = jsonRefusal(violation, 'output', 'the output');
  return fault(r.code, r.message, r.details, fuelUsed, pages);
}

/** The class and message of what escaped a plugin. */
function describe(err: unknown): { name: string; message: string } {
  return err instanceof Error ? { name: err.constructor.name, message: err.message } : { name: 'Error', message: String(err) };
}

function preview(bytes: Uint8Array | null): string {
  return bytes === null ? '' : new TextDecoder().decode(bytes.subarray(0, 200));
}
