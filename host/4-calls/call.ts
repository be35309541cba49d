// One call, end to end (README "How a call runs"; abi/ABI.md, "A call"): envelope, resolution,
// limits, input validation, run identity, policy, replay or execution, output validation, response.
// Every failure becomes exactly one response envelope; nothing a caller or guest sends can make
// this throw.
import { randomUUID } from 'node:crypto';
import { types } from 'node:util';
import { performance } from 'node:perf_hooks';
import {
  type CallMetrics,
  checkJsonValue,
  type EffectiveLimits,
  ERROR_CODES,
  errorClassOf,
  HelixError,
  inputBytesOf,
  type RequestEnvelope,
  RequestEnvelopeSchema,
  type ResponseEnvelope,
  type RunEvent,
  type RunLink,
  type RunResult,
  statusForCode,
  WASM_PAGE_BYTES,
  type WireError,
} from '../../abi/index.js';
import { getArtifact } from './artifacts/index.js';
import { jsonRefusal } from '../1-base/json-entry.js';
import type { LoadedPolicy } from './policy/load-policy.js';
import { scaledLimits } from './policy/budgets.js';
import { explainFuelShortfall, type ShortfallInput } from './policy/fuel-shortfall.js';
import { callLimits, isToolAllowed, ungrantedCapabilities } from './policy/rules.js';
import type { ToolRegistry } from './registry.js';
import { errorResponse, successResponse, ZERO_METRICS, type Provenance } from '../1-base/response.js';
import type { RunCoordinator } from './runs/coordinator.js';
import { runIdentity } from './runs/identity.js';
import { prepareRunEnding } from './runs/run-ending.js';
import type { RunFinisher, RunStart } from './runs/run-store.js';
import type { Store } from '../3-store/open-store.js';
import type { Tool, ToolOutcome } from './tools/tool.js';

/** What a caller can attach to one call (the MCP server uses all four). */
export interface CallOptions {
  /** Aborting it cancels the call; a run in progress is stopped and recorded as failed. */
  readonly signal?: AbortSignal;
  /** Receives progress while the call runs: elapsed time and capability calls so far. */
  readonly onProgress?: (progress: { elapsed_ms: number; capability_calls: number }) => void;
  /** Receives the guest's log lines as they are emitted. */
  readonly onLog?: (line: { level: string; event: string; fields: Record<string, unknown> }) => void;
  /**
   * Called once with the run id when it is fixed and the policy allows the call, before anything
   * runs (or is replayed), so log lines can name their run; not called for a call refused
   * before then, nor for a dry run.
   */
  readonly onRunStarted?: (runId: string) => void;
  /**
   * Called once with the call's identity (ABI-RUNID-001) as soon as it is computed, before the
   * policy is asked, also for a dry run: what a job bundle carries so a node's run can be checked
   * against it (abi/ABI.md, "Fan-out").
   */
  readonly onIdentity?: (identity: CallIdentity) => void;
}

/** A call's run identity and the canonical documents it stands for. */
export interface CallIdentity {
  readonly run_id: string;
  readonly params_hash: string;
  readonly canonical_params: string;
  readonly policy_hash: string;
}

/** What a call needs from the host. */
export interface CallContext {
  readonly registry: ToolRegistry;
  readonly policy: LoadedPolicy;
  /** The policy's canonical text, stored once per hash with the first run under it. */
  readonly canonicalPolicy: string;
  readonly store: Store;
  readonly coordinator: RunCoordinator;
  /** Wall clock for deadlines, ms since the epoch. */
  readonly now: () => number;
  /** How often progress is reported while a call runs, ms. */
  readonly progressIntervalMs: number;
}

const encoder = new TextEncoder();

/** Performs one call from a raw (unvalidated) request envelope. */
export async function performCall(ctx: CallContext, raw: unknown, options: CallOptions = {}): Promise<ResponseEnvelope> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  // The request is checked as JSON data first (ABI-JSON-*): a value too deep, a number a
  // double cannot hold, a getter or a cycle must not reach zod, hashing or the store.
  const violation = checkJsonValue(raw, { envelope: true });
  if (violation !== undefined) {
    const refusal = jsonRefusal(violation, 'request', 'the request');
    const err = new HelixError(refusal.code, { message: refusal.message, details: refusal.details });
    const provenance = { tool_id: ownString(raw, 'tool_id') ?? '', tool_version: ownString(raw, 'tool_version') ?? '*', digest: null };
    return errorResponse(ownString(raw, 'call_id') ?? randomUUID(), err.toWire(), { ...ZERO_METRICS, duration_ms: elapsed() }, provenance);
  }
  const parsed = RequestEnvelopeSchema.safeParse(raw);
  if (!parsed.success) {
    const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const violations = parsed.error.issues.map((i) => ({ path: `/${i.path.join('/')}`, message: i.message }));
    const err = new HelixError('I-REQ-ENVELOPE', {
      message: `The request envelope has ${violations.length} violation${violations.length === 1 ? '' : 's'}.`,
      details: { violations },
    });
    const provenance = {
      tool_id: typeof r.tool_id === 'string' ? r.tool_id : '',
      tool_version: typeof r.tool_version === 'string' ? r.tool_version : '*',
      digest: null,
    };
    return errorResponse(
      typeof r.call_id === 'string' ? r.call_id : randomUUID(),
      err.toWire(),
      { ...ZERO_METRICS, duration_ms: elapsed() },
      provenance,
    );
  }
  const req = parsed.data;
  const callId = req.call_id ?? randomUUID();
  let provenance: Provenance = { tool_id: req.tool_id, tool_version: req.tool_version, digest: null };
  let tool: Tool | undefined;
  let runId: string | null = null;
  try {
    tool = ctx.registry.resolve(req.tool_id, req.tool_version);
    provenance = { tool_id: tool.id, tool_version: tool.version, digest: tool.moduleDigest };
    const prepared = prepare(ctx, tool, req);
    runId = prepared.start.run_id;
    options.onIdentity?.({
      run_id: runId,
      params_hash: prepared.start.params_hash,
      canonical_params: prepared.start.canonical_params,
      policy_hash: prepared.start.policy_hash,
    });

    // Policy, first time (README "How a call runs", step 2); a refusal is recorded as a blocked run.
    const refusal = authorize(ctx.policy, tool);
    if (refusal !== undefined) {
      await ctx.coordinator.block(prepared.start, { status: 'terminal_error', error: refusal.toWire(), warnings: [] });
      return errorResponse(callId, refusal.toWire(), { ...ZERO_METRICS, duration_ms: elapsed() }, provenance, tool.deterministic, {
        run_id: runId,
        replayed: false,
      });
    }
    if (req.dry_run) {
      return successResponse(
        callId,
        null,
        { ...ZERO_METRICS, duration_ms: elapsed() },
        provenance,
        ['dry_run: validated and authorized, not executed'],
        { run_id: runId, replayed: false },
      );
    }

    const t = tool;
    options.onRunStarted?.(runId);
    const outcome = await ctx.coordinator.run(prepared.start, ctx.now() + prepared.limits.timeoutMs, (unstoredEvents) =>
      execute(ctx, t, prepared, callId, elapsed, options, unstoredEvents),
    );
    const r = outcome.record.result;
    const run = { run_id: outcome.record.run_id, replayed: outcome.replayed };
    const metrics: CallMetrics =
      outcome.replayed || outcome.joined
        ? { ...ZERO_METRICS, duration_ms: elapsed() }
        : (outcome.record.metrics ?? { ...ZERO_METRICS, duration_ms: elapsed() });
    if (r === null) throw new Error(`run ${outcome.record.run_id} ended without a result`);
    const warnings = [...r.warnings];
    if (outcome.replayed)
      warnings.push(
        `replayed: run ${outcome.record.run_id} succeeded at ${new Date(outcome.record.finished_at ?? 0).toISOString()}; nothing was executed`,
      );
    if (outcome.joined) warnings.push(`joined: run ${outcome.record.run_id} was already in flight; this call shares its outcome`);
    if (r.status === 'success') return successResponse(callId, r.output, metrics, provenance, warnings, run);
    return { ...errorResponse(callId, r.error!, metrics, provenance, tool.deterministic, run), status: r.status, warnings };
  } catch (err) {
    if (err instanceof HelixError) {
      return errorResponse(callId, err.toWire(), { ...ZERO_METRICS, duration_ms: elapsed() }, provenance, tool?.deterministic, {
        run_id: runId,
        replayed: false,
      });
    }
    throw err;
  }
}

/** Runs the tool and returns how to finish its run (inside the finishing transaction). */
async function execute(
  ctx: CallContext,
  tool: Tool,
  prepared: Prepared,
  callId: string,
  elapsed: () => number,
  options: CallOptions,
  unstoredEvents: () => RunEvent[],
): Promise<RunFinisher> {
  const runId = prepared.start.run_id;
  const deadlineMs = ctx.now() + prepared.limits.timeoutMs;
  // Capabilities stop their own waits (HTTP) when the call's deadline passes or it is cancelled.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), prepared.limits.timeoutMs);
  timer.unref();
  const onCancel = (): void => abort.abort();
  options.signal?.addEventListener('abort', onCancel, { once: true });
  let calls = 0;
  const report = (): void => options.onProgress?.({ elapsed_ms: elapsed(), capability_calls: calls });
  const ticker = options.onProgress === undefined ? undefined : setInterval(report, ctx.progressIntervalMs);
  let result: ToolOutcome;
  try {
    result = await tool.execute({
      input: prepared.input,
      inputBytes: prepared.inputBytes,
      limits: prepared.limits,
      store: ctx.store,
      policy: ctx.policy,
      runId,
      boundary: prepared.boundary,
      deadlineMs,
      signal: abort.signal,
      ...(options.signal === undefined ? {} : { cancel: options.signal }),
      ...(options.onLog === undefined ? {} : { onLog: options.onLog }),
      onCapabilityCall: (n) => {
        calls = n;
      },
    });
  } finally {
    clearTimeout(timer);
    clearInterval(ticker);
    options.signal?.removeEventListener('abort', onCancel);
  }
  const metrics: CallMetrics = { duration_ms: elapsed(), fuel_used: result.fuelUsed, memory_peak_pages: result.memoryPages };
  return prepareRunEnding(ctx.store, ctx.now, {
    runId,
    callId,
    toolId: tool.id,
    toolVersion: tool.version,
    result: toRunResult(tool, explained(ctx, tool, prepared, result)),
    metrics,
    effects: result.effects,
    guestInput: tool.kind === 'wasm' ? prepared.inputBytes : undefined,
    outputSha256: result.kind === 'output' ? result.outputSha256 : undefined,
    unstoredEvents,
  });
}

/** What prepare computes for a call. */
interface Prepared {
  readonly start: RunStart;
  readonly limits: EffectiveLimits;
  /** The request's input with its schema's defaults filled in. */
  readonly input: RequestEnvelope['input'];
  readonly inputBytes: Uint8Array;
  readonly boundary: Record<string, unknown> | undefined;
  /** The input artifacts with the sizes budgets count, for a fuel-exhausted call's figures. */
  readonly inputArtifacts: readonly ShortfallInput[];
}

/** Everything checked and computed before policy: limits, input, artifacts, identity. */
function prepare(ctx: CallContext, tool: Tool, req: RequestEnvelope): Prepared {
  if (req.fn !== undefined && req.fn !== tool.entrypoint) {
    throw new HelixError('C-CONTRACT-FN-UNKNOWN', {
      message: `Tool "${tool.id}" has no function "${req.fn}".`,
      details: { fn: req.fn, available: [tool.entrypoint] },
    });
  }
  const requested = {
    timeoutMs: req.constraints.timeout_ms,
    deadlineUnixMs: req.constraints.deadline_unix_ms,
    memoryMbLimit: req.constraints.memory_mb_limit,
  };
  const now = ctx.now();
  checkRequested(tool, callLimits(tool.limits, requested, now), req);
  checkInputSize(tool, encoder.encode(JSON.stringify(req.input)).length);
  // The canonical input: the request's, with the defaults of the input schema filled in
  // (ABI-RUNID-010). The identity, the guest and the run's record all see this one.
  const { violations, artifacts, value } = tool.validateInput(req.input);
  if (violations.length > 0) {
    throw new HelixError('I-REQ-INPUT', {
      message: `The input has ${violations.length} schema violation${violations.length === 1 ? '' : 's'}.`,
      details: { violations },
    });
  }
  // A copy of the request's object input, with members added: an object still.
  const input = value as RequestEnvelope['input'];
  const inputBytes = encoder.encode(JSON.stringify(input));
  if (input !== req.input) checkInputSize(tool, inputBytes.length);
  // Input linking: every referenced artifact must exist; its content hash enters
  // the run's identity, so identical bytes identify identical work, and its size the budget.
  const records = artifacts.map((ref) => getArtifact(ctx.store, ref.artifact_id));
  const inputs: RunLink[] = artifacts.map((ref, i) => ({
    role: ref.path.slice(1) || 'input',
    artifact_id: ref.artifact_id,
    sha256: records[i]!.sha256,
  }));
  const scaled = scaledLimits(tool.limits, ctx.policy.policy, ctx.policy.source, tool.id, inputBytesOf(records));
  const limits = callLimits(scaled, requested, now);
  const boundary = tool.snapshotBoundary?.(ctx.store, input);
  const identity = runIdentity(
    {
      tool_id: tool.id,
      tool_version: tool.version,
      contract_version: tool.contractVersion,
      module_digest: tool.moduleDigest,
      ...(tool.contractDigest === undefined ? {} : { contract_digest: tool.contractDigest }),
      entrypoint: tool.entrypoint,
      input,
      input_artifacts: artifacts.map((ref, i) => ({ path: ref.path, artifact_id: ref.artifact_id, sha256: inputs[i]!.sha256 })),
      ...(boundary === undefined ? {} : { boundary }),
      limits: { fuel: limits.fuel, max_memory_pages: limits.maxMemoryPages, max_output_bytes: limits.maxOutputBytes },
    },
    ctx.policy.hash,
  );
  const start: RunStart = {
    run_id: identity.run_id,
    tool_id: tool.id,
    tool_version: tool.version,
    contract_version: tool.contractVersion,
    module_digest: tool.moduleDigest,
    policy_hash: ctx.policy.hash,
    canonical_policy: ctx.canonicalPolicy,
    params_hash: identity.params_hash,
    canonical_params: identity.canonical_params,
    inputs,
    idempotency_key: req.constraints.idempotency_key ?? null,
    call_id: req.call_id ?? '',
  };
  const inputArtifacts = records.map((r, i) => ({ id: artifacts[i]!.artifact_id, size: r.size, compression: r.compression }));
  return { start, limits, input, inputBytes, boundary, inputArtifacts };
}

/** Refuses an input longer than the tool accepts. */
function checkInputSize(tool: Tool, bytes: number): void {
  if (bytes > tool.limits.maxInputBytes) {
    throw new HelixError('I-REQ-INPUT-SIZE', {
      message: `The input is ${bytes} bytes; "${tool.id}" accepts at most ${tool.limits.maxInputBytes}.`,
      details: { input_bytes: bytes, max_input_bytes: tool.limits.maxInputBytes },
    });
  }
}

/** Refuses a request whose deadline has passed or whose memory cap is below what the module needs to start. */
function checkRequested(tool: Tool, limits: EffectiveLimits, req: RequestEnvelope): void {
  if (limits.timeoutMs <= 0) {
    throw new HelixError('R-TIMEOUT-001', {
      message: 'The deadline passed before the call was dispatched.',
      details: { deadline_unix_ms: req.constraints.deadline_unix_ms, phase: 'dispatch' },
    });
  }
  if (limits.maxMemoryPages < tool.minMemoryPages) {
    const needMb = Math.ceil((tool.minMemoryPages * WASM_PAGE_BYTES) / (1024 * 1024));
    throw new HelixError('I-REQ-ENVELOPE', {
      message: `constraints.memory_mb_limit is below the ${needMb} MiB the module needs to start.`,
      details: { violations: [{ path: '/constraints/memory_mb_limit', message: `must be at least ${needMb}` }] },
    });
  }
}

/** The policy's refusal of this tool, if any. */
function authorize(policy: LoadedPolicy, tool: Tool): HelixError | undefined {
  if (!isToolAllowed(policy.policy, tool.id)) {
    return new HelixError('A-AUTH-TOOL-DENIED', {
      message: `The policy ${policy.source} does not allow "${tool.id}".`,
      details: { tool_id: tool.id, policy: policy.source },
    });
  }
  const ungranted = ungrantedCapabilities(policy.policy, tool.id, tool.capabilities);
  if (ungranted.length > 0) {
    return new HelixError('A-AUTH-CAPABILITY-NOT-GRANTED', {
      message: `The policy does not grant ${ungranted.join(', ')} to "${tool.id}".`,
      details: { capabilities: ungranted, policy: policy.source },
    });
  }
  return undefined;
}

/** A fuel-exhausted outcome with the figures to size a budget from (ABI-BUDGET-006); any other as it is. */
function explained(ctx: CallContext, tool: Tool, prepared: Prepared, outcome: ToolOutcome): ToolOutcome {
  if (outcome.kind !== 'fault' || outcome.error.code !== 'S-TOOL-FUEL-EXHAUSTED') return outcome;
  const error = explainFuelShortfall(outcome.error, {
    limits: tool.limits,
    policy: ctx.policy.policy,
    policySource: ctx.policy.source,
    inputs: prepared.inputArtifacts,
    journal: outcome.effects?.journal ?? [],
  });
  return { ...outcome, error };
}

/** How a tool's outcome reads as a run result: output validated, guest errors classed. */
function toRunResult(tool: Tool, outcome: ToolOutcome): RunResult {
  if (outcome.kind === 'fault') return { status: statusOf(tool, outcome.error.code), error: outcome.error, warnings: [] };
  const out = outcome.output;
  switch (out.status) {
    case 'ok': {
      const violations = tool.validateOutput(out.output);
      if (violations.length === 0) return { status: 'success', output: out.output, warnings: [] };
      const err = new HelixError('C-CONTRACT-OUTPUT-SCHEMA', {
        message: `The output of "${tool.id}" has ${violations.length} schema violation${violations.length === 1 ? '' : 's'}.`,
        details: { violations },
      });
      return { status: 'terminal_error', error: err.toWire(), warnings: [] };
    }
    case 'error':
      return { status: statusOf(tool, out.error.code), error: guestError(out.error), warnings: [] };
    case 'capability_call': {
      // A terminal call goes through the same allowlist as the import: deny by default.
      const err = new HelixError('A-AUTH-FORBIDDEN', { details: {} });
      return { status: 'terminal_error', error: err.toWire(), warnings: [] };
    }
  }
}

function statusOf(tool: Tool, code: string): RunResult['status'] {
  return statusForCode(code, tool.deterministic);
}

/** A guest's own error: its code and message as sent, a hint from the taxonomy when it gave none. */
function guestError(error: WireError): WireError {
  if (error.hint !== undefined) return error;
  const known = (ERROR_CODES as Record<string, { hint: string }>)[error.code];
  const cls = errorClassOf(error.code);
  return { ...error, hint: known?.hint ?? (cls === undefined ? '' : `See the ${cls} class in abi/ABI.md.`) };
}

/** A string field of a value that failed the JSON check, read without running anything of the caller's. */
function ownString(raw: unknown, key: string): string | undefined {
  if (typeof raw !== 'object' || raw === null || types.isProxy(raw)) return undefined;
  const d = Object.getOwnPropertyDescriptor(raw, key);
  return d !== undefined && 'value' in d && typeof d.value === 'string' ? d.value : undefined;
}
