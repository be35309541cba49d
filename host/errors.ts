// HelixError: the one error class of the host. It carries a taxonomy code, machine details,
// a fix hint and a cause, and turns into the wire error of abi/ when it crosses a boundary.
import { ERROR_CODES, type ErrorCode, type WireError } from '../abi/index.js';

/** Options of a HelixError beyond its code. */
export interface HelixErrorOptions {
  readonly message?: string;
  readonly details?: Record<string, unknown>;
  readonly hint?: string;
  readonly cause?: unknown;
}

/** An error with a stable taxonomy code (abi/errors.ts). */
export class HelixError extends Error {
  override readonly name = 'HelixError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly hint: string;

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

/** Whether a value is a HelixError (also across module copies). */
export function isHelixError(value: unknown): value is HelixError {
  return value instanceof HelixError;
}
