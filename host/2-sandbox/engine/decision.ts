// Host decisions that end a call, shared by the helix/v1 sandbox and the Extism engine. A host
// function throws a GuestAbort to end the call (the call ceiling, a bad pointer, ...); the first
// one is final whatever the guest does afterwards (ABI-FINAL-001 to ABI-FINAL-004). Also what a
// guest's own uncaught `throw` becomes (ABI-FINAL-005).
import type { ErrorCode } from '../../../abi/index.js';

/** Thrown from a host function to end the call with a classified fault; the first one is final. */
export class GuestAbort extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The trap text of an uncaught guest exception, in `details.trap`. */
export const UNCAUGHT_EXCEPTION = 'uncaught WebAssembly exception';

/** Whether `err` is an exception the guest threw with its own tag (`throw`), which nothing caught. */
export function isGuestException(err: unknown): err is WebAssembly.Exception {
  return err instanceof WebAssembly.Exception;
}

/** The start of S-TOOL-TRAP's message for an uncaught guest exception in `phase`. */
export function uncaughtMessage(phase: string): string {
  return `The tool threw a WebAssembly exception that nothing caught, in ${phase}`;
}
