// Builds response envelopes (abi/schemas/response-envelope.json): exactly one of four outcomes, metrics and
// provenance always present.
import { statusForCode, type CallMetrics, type Determinism, type ResponseEnvelope, type WireError } from '../../abi/index.js';

/** Which build answered, as far as the call got. */
export interface Provenance {
  readonly tool_id: string;
  readonly tool_version: string;
  readonly digest: string | null;
}

/** Metrics of a call that never reached a guest. */
export const ZERO_METRICS: CallMetrics = { duration_ms: 0, fuel_used: 0, memory_peak_pages: 0 };

/** The run a response belongs to. */
export interface RunRef {
  readonly run_id: string | null;
  readonly replayed: boolean;
}

/** For responses to calls that never became runs. */
export const NO_RUN: RunRef = { run_id: null, replayed: false };

/** A success envelope. */
export function successResponse(
  callId: string,
  output: unknown,
  metrics: CallMetrics,
  provenance: Provenance,
  warnings: string[] = [],
  run: RunRef = NO_RUN,
): ResponseEnvelope {
  return { call_id: callId, status: 'success', output, side_effects: [], metrics, provenance, warnings, commit_token: null, ...run };
}

/** An error envelope; the status follows from the code's class and the tool's determinism. */
export function errorResponse(
  callId: string,
  error: WireError,
  metrics: CallMetrics,
  provenance: Provenance,
  determinism: Determinism = 'pure',
  run: RunRef = NO_RUN,
): ResponseEnvelope {
  return {
    call_id: callId,
    status: statusForCode(error.code, determinism),
    error,
    side_effects: [],
    metrics,
    provenance,
    warnings: [],
    commit_token: null,
    ...run,
  };
}
