// The bytes a broker answers a guest with, and what it charges: answer envelopes of either
// capability ABI version, the errors of a refused call, and the fuel of a call (ABI-CAP-001,
// ABI-CAP-006, ABI-BULK-001, ABI-BULK-004). Shared by the live broker and the replay broker.
import {
  BULK_ABI_VERSION,
  BULK_CAPABILITIES,
  CAPABILITY_ABI_VERSION,
  ERROR_CODES,
  type ErrorCode,
  HelixError,
  type WireError,
} from '../../../abi/index.js';
import type { BulkPart } from '../../2-sandbox/engine/protocol.js';

/** Fuel for one capability call, plus one unit per 64 bytes moved: calls are not free work. */
export const CALL_FUEL = 1000;

const encoder = new TextEncoder();

/** What the broker decided about a call, as the audit trail records it. */
export type Decision = 'allowed' | 'forbidden' | 'invalid' | 'failed' | 'refused' | 'aborted';

/** The `abi_version` an answer carries: 2 through the bulk import, else the request's (1 when it named none). */
export type AnswerVersion = 1 | 2;

/** Answer bytes for an error; the `forbidden` answer is the same bytes for every refused name. */
export function errorAnswer(error: WireError, version: AnswerVersion = CAPABILITY_ABI_VERSION): Uint8Array {
  return encoder.encode(JSON.stringify({ status: 'error', abi_version: version, error }));
}

/** Answer bytes for a result. */
export function okAnswer(name: string, result: unknown, version: AnswerVersion = CAPABILITY_ABI_VERSION): Uint8Array {
  return encoder.encode(JSON.stringify({ status: 'ok', abi_version: version, capability_result: { name, result } }));
}

/** The version of the answer to `request`, as far as it can be read (ABI-BULK-001). */
export function answerVersion(json: unknown, bulk: BulkPart | undefined): AnswerVersion {
  if (bulk !== undefined) return BULK_ABI_VERSION;
  const v = typeof json === 'object' && json !== null ? (json as { abi_version?: unknown }).abi_version : undefined;
  return v === 2 ? 2 : 1;
}

/** A capability served through the bulk import. */
export type BulkName = (typeof BULK_CAPABILITIES)[number];

/** Whether `name` is served through the bulk import (ABI-BULK-002). */
export function isBulkName(name: string): name is BulkName {
  return (BULK_CAPABILITIES as readonly string[]).includes(name);
}

/** The I-REQ-CAPABILITY-ARGS error listing `violations`. */
export function argsError(name: string, violations: ReadonlyArray<{ path: string; message: string }>): WireError {
  return wire(
    'I-REQ-CAPABILITY-ARGS',
    `The arguments of ${name} have ${violations.length} violation${violations.length === 1 ? '' : 's'}.`,
    { violations },
  );
}

/** How a capability that threw is answered: its HelixError, else R-UPSTREAM-CAPABILITY. */
export function failure(name: string, err: unknown): { kind: 'error'; error: WireError; decision: Decision; reason: string } {
  if (err instanceof HelixError)
    return { kind: 'error', error: err.toWire(), decision: err.code === 'A-AUTH-SECRET-WRITE' ? 'refused' : 'failed', reason: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { kind: 'error', error: wire('R-UPSTREAM-CAPABILITY', `${name} failed: ${message}`, {}), decision: 'failed', reason: message };
}

/** A wire error with the taxonomy's hint. */
export function wire(code: ErrorCode, message: string, details: Record<string, unknown>): WireError {
  return { code, message, details, hint: ERROR_CODES[code].hint };
}

/** A call's fuel (ABI-CAP-006): the base, and one unit per 64 bytes of request, answer and bulk bytes. */
export function fuelFor(request: Uint8Array, response: Uint8Array, bulkBytes: number): number {
  return CALL_FUEL + Math.ceil((request.length + response.length + bulkBytes) / 64);
}

/**
 * Why the broker answered `forbidden`, as the audit trail records it (the guest gets the same
 * bytes whatever the reason); `helix runs show` turns each into advice for the author.
 */
export const FORBIDDEN_REASONS = {
  unknown: 'unknown capability',
  unlisted: 'not in the manifest allowlist',
  ungranted: 'not granted by the policy',
  scope: (entry: string): string => `scope ${entry} not allowlisted or not granted`,
} as const;

/** The one refusal of every name not allowlisted and granted (ABI-CAP-002). */
export const FORBIDDEN: WireError = {
  code: 'A-AUTH-FORBIDDEN',
  message: ERROR_CODES['A-AUTH-FORBIDDEN'].message,
  details: {},
  hint: ERROR_CODES['A-AUTH-FORBIDDEN'].hint,
};

/** The bytes of the forbidden answer, the same for every refused name. */
export const FORBIDDEN_BYTES = errorAnswer(FORBIDDEN);
