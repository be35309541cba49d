// The verdict primitives of a check: the failure it throws when the host does not hold a
// requirement, and the expectations that throw it. The engine adapters and the kit use them too.
import type { ResponseEnvelope } from '../abi/index.js';

/** A check's verdict against the host: the requirement does not hold. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
}

/** Fails the check with `message` unless `condition`. */
export function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(message);
}

/** The error code of a response, or undefined for success. */
export function codeOf(r: ResponseEnvelope): string | undefined {
  return r.error?.code;
}

/** Fails unless the response has `status` (and `code`, when given). */
export function expectOutcome(r: ResponseEnvelope, status: ResponseEnvelope['status'], code?: string): void {
  const got = `${r.status}${r.error === null || r.error === undefined ? '' : ` ${r.error.code}: ${r.error.message}`}`;
  if (r.status !== status || (code !== undefined && r.error?.code !== code)) {
    throw new CheckFailure(`expected ${status}${code === undefined ? '' : ` ${code}`}, got ${got}`);
  }
}

/** Fails unless the call succeeded; returns its output. */
export function expectSuccess(r: ResponseEnvelope): Record<string, unknown> {
  expectOutcome(r, 'success');
  return (r.output ?? {}) as Record<string, unknown>;
}
