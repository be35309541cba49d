// The outcome every typed capability wrapper returns: `ok`, or the host's error as fields.
// Wrappers never abort on a capability error; the tool decides what a failure means.

import { CapabilityResult } from "../capability";
import { JSONObject } from "../json/value";
import { ErrorCode, isTaxonomyCode, Result } from "../result";

/** Code a tool reports when a capability refused the arguments the tool itself built. */
export const CAPABILITY_REQUEST_CODE = "S-TOOL-CAPABILITY-REQUEST";

/**
 * Base of every wrapper's result: `ok`, else `errorCode` (a taxonomy code such as
 * `A-AUTH-FORBIDDEN` or `P-PRECOND-ARTIFACT-NOT-FOUND`), `errorMessage`, `errorHint` and
 * `errorDetails` as the host sent them. Typed fields of a failed result keep their defaults.
 */
export class CapabilityStatus {
  ok: bool = true;
  errorCode: string = "";
  errorMessage: string = "";
  errorHint: string = "";
  errorDetails: JSONObject | null = null;

  /** Records the error of a failed reply (`reply.ok` must be false). */
  takeError(reply: CapabilityResult): void {
    this.fail(reply.errorCode, reply.errorMessage, reply.errorHint, reply.errorDetails);
  }

  /** Records an error found by the wrapper itself (a result of the wrong shape, a limit). */
  fail(code: string, message: string, hint: string, details: JSONObject | null = null): void {
    this.ok = false;
    this.errorCode = code;
    this.errorMessage = message;
    this.errorHint = hint;
    this.errorDetails = details;
  }

  /** Copies another outcome's error into this one. */
  failFrom(other: CapabilityStatus): void {
    this.fail(other.errorCode, other.errorMessage, other.errorHint, other.errorDetails);
  }

  /**
   * The failure as the tool's own error result, for tools that pass it on: the message is
   * `context: <host message>`, hint and details are kept. Codes pass through unchanged (a
   * forbidden call stays `A-AUTH-FORBIDDEN`, a missing artifact `P-PRECOND-ARTIFACT-NOT-FOUND`,
   * an upstream failure stays retryable), except `I-REQ-*`: arguments the tool built are the
   * tool's fault, not the caller's, so they become `S-TOOL-CAPABILITY-REQUEST` with the
   * original code in `details.capability_code`.
   */
  toResult(context: string): Result {
    let code = this.errorCode;
    const source = this.errorDetails;
    const details = new JSONObject();
    if (source !== null) for (let i = 0; i < source.size; i++) details.set(source.keyAt(i), source.valueAt(i));
    if (code.startsWith("I-REQ-") || !isTaxonomyCode(code)) {
      details.setString("capability_code", code);
      code = isTaxonomyCode(code) ? CAPABILITY_REQUEST_CODE : ErrorCode.DATA_FORMAT;
    }
    const message = this.errorMessage.length > 0 ? this.errorMessage : "capability call failed";
    return Result.error(code, context.length > 0 ? context + ": " + message : message, this.errorHint, details);
  }
}

/** Fails `status` with D-DATA-FORMAT for a result that lacks `field` (a host of another version). */
export function badResult(status: CapabilityStatus, capability: string, field: string): void {
  status.fail(
    ErrorCode.DATA_FORMAT,
    capability + ": the result has no valid '" + field + "'",
    "the host speaks another version of this capability; update the SDK or the host",
    new JSONObject().setString("capability", capability).setString("field", field),
  );
}
