// What a breach of the JSON bounds (abi/json-bounds.ts, ABI-JSON-*) becomes at each place a value
// enters the host: a client's request, a guest's output, a guest's capability request.
import { MAX_JSON_DEPTH, type ErrorCode, type JsonViolation, type JsonViolationKind } from '../../abi/index.js';

/** Where the value came from. */
export type JsonEntry = 'request' | 'output' | 'capability';

/** The refusal: its code, a message naming what and where, and details for machines. */
export interface JsonRefusal {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

const CODES: Record<Exclude<JsonEntry, 'capability'>, Record<JsonViolationKind, ErrorCode>> = {
  request: {
    depth: 'I-REQ-JSON-DEPTH',
    number: 'I-REQ-JSON-NUMBER',
    key: 'I-REQ-JSON-VALUE',
    string: 'I-REQ-JSON-VALUE',
    value: 'I-REQ-JSON-VALUE',
  },
  output: {
    depth: 'S-TOOL-OUTPUT-DEPTH',
    number: 'S-TOOL-OUTPUT-NUMBER',
    key: 'S-TOOL-OUTPUT-VALUE',
    string: 'S-TOOL-OUTPUT-VALUE',
    value: 'S-TOOL-OUTPUT-VALUE',
  },
};

/**
 * The refusal of `violation` found in a value from `entry`; `subject` names the value in the
 * message ("the request", "the output", "the capability request"). A capability request too deep
 * ends the run (S-TOOL-CAPABILITY-DEPTH); any other breach there is answered like a schema
 * violation, I-REQ-CAPABILITY-ARGS inside `args` and I-REQ-ENVELOPE outside, so the guest can go on.
 */
export function jsonRefusal(violation: JsonViolation, entry: JsonEntry, subject: string): JsonRefusal {
  const message = `At ${violation.pointer === '' ? 'its root' : violation.pointer}, ${subject} has ${violation.problem}.`;
  const details: Record<string, unknown> = {
    pointer: violation.pointer,
    problem: violation.kind,
    ...(violation.kind === 'depth' ? { max_depth: MAX_JSON_DEPTH } : {}),
  };
  if (entry !== 'capability') return { code: CODES[entry][violation.kind], message, details };
  if (violation.kind === 'depth') return { code: 'S-TOOL-CAPABILITY-DEPTH', message, details };
  const inArgs = violation.pointer === '/args' || violation.pointer.startsWith('/args/');
  const path = inArgs ? violation.pointer.slice('/args'.length) || '/' : violation.pointer;
  return {
    code: inArgs ? 'I-REQ-CAPABILITY-ARGS' : 'I-REQ-ENVELOPE',
    message,
    details: { ...details, violations: [{ path, message: violation.problem }] },
  };
}
