// HelixError: the one error class of Helix. It carries a taxonomy code, machine details, a fix
// hint and a cause, and turns into the wire error of errors.ts when it crosses a boundary.
import type { WireError } from './envelopes.js';
import { ERROR_CODES, type ErrorCode } from './errors.js';

/** Options of a HelixError beyond its code. */
export interface HelixErrorOptions {
  readonly message?: string;
  readonly details?: Record<string, unknown>;
  readonly hint?: string;
  readonly cause?: unknown;
}

/** The brand every HelixError carries, shared by all copies of this module in one process. */
const BRAND = Symbol.for('helix.HelixError');

/** An error with a stable taxonomy code (errors.ts). */
export class HelixError extends Error {
  override readonly name = 'HelixError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly hint: string;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, options: HelixErrorOptions = {}) {
    const spec = ERROR_CODES[code];
    super(options.message ?? spec.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
    this.hint = options.hint ?? spec.hint;
  }

  /** The error as data, for response envelopes and stderr. */
  toWire(): WireError {
    return { code: this.code, message: this.message, details: this.details, hint: this.hint };
  }
}

/**
 * Whether a value is a HelixError, also one made by another copy of this module (a second
 * install of the package in one process): the check reads the shared brand, not the prototype.
 */
export function isHelixError(value: unknown): value is HelixError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}
