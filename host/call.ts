// One call, end to end (DESIGN.md section 3): envelope, resolution, policy, limits, input
// validation, execution in the engine, output validation, response. Every failure becomes
// exactly one response envelope; nothing a caller or guest sends can make this throw.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ERROR_CODES, errorClassOf, RequestEnvelopeSchema, WASM_PAGE_BYTES, type CallMetrics, type ResponseEnvelope, type WireError } from '../abi/index.js';
import type { Engine } from './engine/engine.js';
import { HelixError } from './errors.js';
import type { LoadedTool } from './loader/load-toolpacks.js';
import type { LoadedPolicy } from './policy/load-policy.js';
import { callLimits, isToolAllowed, ungrantedCapabilities } from './policy/rules.js';
import type { ToolRegistry } from './registry.js';
import { errorResponse, successResponse, ZERO_METRICS, type Provenance } from './response.js';

/** What a call needs from the host. */
export interface CallContext {
  readonly registry: ToolRegistry;
  readonly policy: LoadedPolicy;
  readonly engine: Engine;
  /** Wall clock for deadlines, ms since the epoch. */
  readonly now: () => number;
}

const encoder = new TextEncoder();

/** Performs one call from a raw (unvalidated) request envelope. */
export async function performCall(ctx: CallContext, raw: unknown): Promise<ResponseEnvelope> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const parsed = RequestEnvelopeSchema.safeParse(raw);
  if (!parsed.success) {
    const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const violations = parsed.error.issues.map((i) => ({ path: `/${i.path.join('/')}`, message: i.message }));
    const err = new HelixError('I-REQ-ENVELOPE', { message: `The request envelope has ${violations.length} violation${violations.length === 1 ? '' : 's'}.`, details: { violations } });
    const provenance = { tool_id: typeof r.tool_id === 'string' ? r.tool_id : '', tool_version: typeof r.tool_version === 'string' ? r.tool_version : '*', digest: null };
    return errorResponse(typeof r.call_id === 'string' ? r.call_id : randomUUID(), err.toWire(), { ...ZERO_METRICS, duration_ms: elapsed() }, provenance);
  }
  const req = parsed.data;
  const callId = req.call_id ?? randomUUID();
  let provenance: Provenance = { tool_id: req.tool_id, tool_version: req.tool_version, digest: null };
  let tool: LoadedTool | undefined;
  try {
    tool = ctx.registry.resolve(req.tool_id, req.tool_version);
    provenance = { tool_id: tool.manifest.id, tool_version: tool.manifest.version, digest: tool.manifest.digest };
    const entrypoint = tool.manifest.entrypoint ?? 'execute';
    if (req.fn !== undefined && req.fn !== entrypoint) {
      throw new HelixError('C-CONTRACT-FN-UNKNOWN', { message: `Tool "${tool.manifest.id}" has no function "${req.fn}".`, details: { fn: req.fn, available: [entrypoint] } });
    }
    // Policy, first time (DESIGN.md section 3, step 4).
    if (!isToolAllowed(ctx.policy.policy, tool.manifest.id)) {
      throw new HelixError('A-AUTH-TOOL-DENIED', { message: `The policy ${ctx.policy.source} does not allow "${tool.manifest.id}".`, details: { tool_id: tool.manifest.id, policy: ctx.policy.source } });
    }
    const ungranted = ungrantedCapabilities(ctx.policy.policy, tool.manifest);
    if (ungranted.length > 0) {
      throw new HelixError('A-AUTH-CAPABILITY-NOT-GRANTED', { message: `The policy does not grant ${ungranted.join(', ')} to "${tool.manifest.id}".`, details: { capabilities: ungranted, policy: ctx.policy.source } });
    }
    const limits = callLimits(tool.limits, { timeoutMs: req.constraints.timeout_ms, deadlineUnixMs: req.constraints.deadline_unix_ms, memoryMbLimit: req.constraints.memory_mb_limit }, ctx.now());
    if (limits.timeoutMs <= 0) {
      throw new HelixError('R-TIMEOUT-001', { message: 'The deadline passed before the call was dispatched.', details: { deadline_unix_ms: req.constraints.deadline_unix_ms, phase: 'dispatch' } });
    }
    const initialPages = Math.max(0, ...tool.module.info.memories.map((m) => m.initial));
    if (limits.maxMemoryPages < initialPages) {
      const needMb = Math.ceil((initialPages * WASM_PAGE_BYTES) / (1024 * 1024));
      throw new HelixError('I-REQ-ENVELOPE', {
        message: `constraints.memory_mb_limit is below the ${needMb} MiB the module needs to start.`,
        details: { violations: [{ path: '/constraints/memory_mb_limit', message: `must be at least ${needMb}` }] },
      });
    }
    const input = encoder.encode(JSON.stringify(req.input));
    if (input.length > limits.maxInputBytes) {
      throw new HelixError('I-REQ-INPUT-SIZE', { message: `The input is ${input.length} bytes; "${tool.manifest.id}" accepts at most ${limits.maxInputBytes}.`, details: { input_bytes: input.length, max_input_bytes: limits.maxInputBytes } });
    }
    const violations = tool.validateInput(req.input);
    if (violations.length > 0) {
      throw new HelixError('I-REQ-INPUT', { message: `The input has ${violations.length} schema violation${violations.length === 1 ? '' : 's'}.`, details: { violations } });
    }
    if (req.dry_run) {
      return successResponse(callId, null, { ...ZERO_METRICS, duration_ms: elapsed() }, provenance, ['dry_run: validated and authorized, not executed']);
    }

    const result = await ctx.engine.execute({ tool, input, limits });
    const metrics: CallMetrics = { duration_ms: elapsed(), fuel_used: result.fuelUsed, memory_peak_pages: result.memoryPages };
    if (result.kind === 'fault') {
      const error: WireError = { code: result.code, message: result.message, details: result.details, hint: ERROR_CODES[result.code].hint };
      return errorResponse(callId, error, metrics, provenance, tool.manifest.deterministic);
    }
    const out = result.output;
    switch (out.status) {
      case 'ok': {
        const outViolations = tool.validateOutput(out.output);
        if (outViolations.length > 0) {
          const err = new HelixError('C-CONTRACT-OUTPUT-SCHEMA', { message: `The output of "${tool.manifest.id}" has ${outViolations.length} schema violation${outViolations.length === 1 ? '' : 's'}.`, details: { violations: outViolations } });
          return errorResponse(callId, err.toWire(), metrics, provenance, tool.manifest.deterministic);
        }
        return successResponse(callId, out.output, metrics, provenance);
      }
      case 'error':
        return errorResponse(callId, guestError(out.error), metrics, provenance, tool.manifest.deterministic);
      case 'capability_call': {
        // A terminal call goes through the same allowlist as the import: deny by default.
        const err = new HelixError('A-AUTH-FORBIDDEN', { details: {} });
        return errorResponse(callId, err.toWire(), metrics, provenance, tool.manifest.deterministic);
      }
    }
  } catch (err) {
    if (err instanceof HelixError) return errorResponse(callId, err.toWire(), { ...ZERO_METRICS, duration_ms: elapsed() }, provenance, tool?.manifest.deterministic);
    throw err;
  }
}

/** A guest's own error: its code and message as sent, a hint from the taxonomy when it gave none. */
function guestError(error: WireError): WireError {
  if (error.hint !== undefined) return error;
  const known = (ERROR_CODES as Record<string, { hint: string }>)[error.code];
  const cls = errorClassOf(error.code);
  return { ...error, hint: known?.hint ?? (cls === undefined ? '' : `See the ${cls} class in abi/ABI.md.`) };
}
