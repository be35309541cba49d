// Oracles for the fuzz cases: what the ABI says the host must answer a guest's output bytes
// (helix/v1 envelope, extism/v1 value and error text) and a guest's capability request bytes
// with, decided in the order the ABI gives (UTF-8, JSON bounds, JSON, schema, class). Shared by
// the property tests (test/fuzz-*.test.ts) and the conformance checks (checks/fuzz.ts).
import { CapabilityRequestSchema, GuestOutputSchema, scanJsonText, statusForCode, type ResponseEnvelope } from '../../abi/index.js';
import { CAPABILITIES } from '../../capabilities/index.js';
import { jsonRefusal } from '../../host/1-base/json-entry.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An expected outcome: the status, the error code unless success, and the output when success. */
export interface Expected {
  readonly status: ResponseEnvelope['status'];
  readonly code?: string;
  readonly output?: unknown;
}

/** The text of bytes, or undefined when they are not UTF-8. */
export function decode(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** What the host must answer a helix/v1 guest's output bytes with, under an output schema of any object. */
export function expectedForOutput(bytes: Uint8Array): Expected {
  const text = decode(bytes);
  if (text === undefined) return { status: 'terminal_error', code: 'S-TOOL-OUTPUT-ENCODING' };
  const violation = scanJsonText(text, { envelope: true });
  if (violation !== undefined) return { status: 'terminal_error', code: jsonRefusal(violation, 'output', '').code };
  const parsed = parseJson(text);
  if (!parsed.ok) return { status: 'terminal_error', code: 'S-TOOL-OUTPUT-JSON' };
  const envelope = GuestOutputSchema.safeParse(parsed.value);
  if (!envelope.success) return { status: 'terminal_error', code: 'S-TOOL-OUTPUT-ENVELOPE' };
  const out = envelope.data;
  if (out.status === 'ok') {
    const isObject = typeof out.output === 'object' && out.output !== null && !Array.isArray(out.output);
    return isObject ? { status: 'success', output: out.output } : { status: 'terminal_error', code: 'C-CONTRACT-OUTPUT-SCHEMA' };
  }
  if (out.status === 'error') return { status: statusForCode(out.error.code, 'pure'), code: out.error.code };
  return { status: 'terminal_error', code: 'A-AUTH-FORBIDDEN' };
}

/** What the host must answer an extism/v1 plugin's output bytes with (the value itself, ABI-EXTISM-007), under an output schema of any object. */
export function expectedForExtismOutput(bytes: Uint8Array): Expected {
  const text = decode(bytes);
  if (text === undefined) return { status: 'terminal_error', code: 'S-TOOL-OUTPUT-ENCODING' };
  const violation = scanJsonText(text);
  if (violation !== undefined) return { status: 'terminal_error', code: jsonRefusal(violation, 'output', '').code };
  const parsed = parseJson(text);
  if (!parsed.ok) return { status: 'terminal_error', code: 'S-TOOL-OUTPUT-JSON' };
  const isObject = typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value);
  return isObject ? { status: 'success', output: parsed.value } : { status: 'terminal_error', code: 'C-CONTRACT-OUTPUT-SCHEMA' };
}

/** What the host must answer an extism/v1 plugin's error text with (ABI-EXTISM-008). */
export function expectedForExtismError(bytes: Uint8Array): Expected & { readonly code: string } {
  const text = new TextDecoder().decode(bytes);
  const parsed = parseJson(text);
  if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null) {
    const violation = scanJsonText(text);
    if (violation !== undefined) return { status: 'terminal_error', code: jsonRefusal(violation, 'output', '').code };
  }
  const envelope = GuestOutputSchema.safeParse({ status: 'error', error: parsed.ok ? parsed.value : undefined });
  if (envelope.success && envelope.data.status === 'error')
    return { status: statusForCode(envelope.data.error.code, 'pure'), code: envelope.data.error.code };
  return { status: 'terminal_error', code: 'S-TOOL-EXTISM-ERROR' };
}

/** The answer a guest allowed `allowed` (and granted them) must get for request bytes, short of what the capability itself does. */
export function expectedAnswer(bytes: Uint8Array, allowed: readonly string[]): string | 'depth' | 'answered' {
  const text = decode(bytes);
  if (text === undefined) return 'I-REQ-ENVELOPE';
  const violation = scanJsonText(text, { envelope: true });
  if (violation?.kind === 'depth') return 'depth';
  if (violation !== undefined) return jsonRefusal(violation, 'capability', '').code;
  const parsed = parseJson(text);
  if (!parsed.ok) return 'I-REQ-ENVELOPE';
  const request = CapabilityRequestSchema.safeParse(parsed.value);
  if (!request.success) return 'I-REQ-ENVELOPE';
  if (!allowed.includes(request.data.name)) return 'A-AUTH-FORBIDDEN';
  if (!CAPABILITIES.get(request.data.name)!.args.safeParse(request.data.args).success) return 'I-REQ-CAPABILITY-ARGS';
  return 'answered';
}
