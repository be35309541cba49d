// The broker: the only path from a guest to a capability. Per call it checks the envelope, the
// call count, the allowlist and the policy (policy, second time), the arguments' schema and the
// payload sizes, runs the capability, records the call in the run's journal and every decision
// in the audit trail, and answers with bytes for the guest. Once it has aborted the run it serves,
// journals and audits nothing more (ABI-FINAL-002). Once the run has received a secret, its guard
// checks every write and redacts every record, and the journal's hashes are keyed.
import { CAPABILITY_ABI_VERSION, CapabilityRequestSchema, ERROR_CODES, type ErrorCode, HelixError, type JournalEntry, type Policy, type RunResult, scanJsonText, type WireError } from '../../abi/index.js';
import { CAPABILITIES, type CapabilityContext, type CapabilityDefinition } from '../../capabilities/index.js';
import type { BrokerAnswer } from '../engine/protocol.js';
import { jsonRefusal } from '../json-entry.js';
import { canonicalJson } from '../hashing.js';
import { isCapabilityGranted, secretWriteRules } from '../policy/rules.js';
import { appendAudit } from '../store/audit.js';
import type { Store } from '../store/open-store.js';
import { JournalBuilder, sha256Hex } from './journal.js';
import type { RunOutputs, SealedOutput } from './outputs.js';
import { artifactPort, kvPort, RunLog, SecretSource, systemClock, type LogLine } from './ports.js';
import { SecretGuard } from './secret-guard.js';
import { keyedHex, secretKey } from './secret-key.js';
import { sealResult } from './seal-result.js';

/** Largest request a guest may send (an artifact.write piece of 1 MiB, base64, plus envelope). */
export const MAX_REQUEST_BYTES = 1_500_000;
/** Largest answer (an artifact.read piece of 1 MiB, base64, plus envelope). */
export const MAX_RESPONSE_BYTES = 1_500_000;
/** Fuel for one capability call, plus one unit per 64 bytes moved: calls are not free work. */
export const CALL_FUEL = 1000;

const encoder = new TextEncoder();

/** Answer bytes for an error; the `forbidden` answer is the same bytes for every refused name. */
export function errorAnswer(error: WireError): Uint8Array {
  return encoder.encode(JSON.stringify({ status: 'error', abi_version: CAPABILITY_ABI_VERSION, error }));
}

/** Answer bytes for a result. */
export function okAnswer(name: string, result: unknown): Uint8Array {
  return encoder.encode(JSON.stringify({ status: 'ok', abi_version: CAPABILITY_ABI_VERSION, capability_result: { name, result } }));
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

const FORBIDDEN: WireError = { code: 'A-AUTH-FORBIDDEN', message: ERROR_CODES['A-AUTH-FORBIDDEN'].message, details: {}, hint: ERROR_CODES['A-AUTH-FORBIDDEN'].hint };

/** What a run's broker needs. */
export interface BrokerOptions {
  readonly store: Store;
  readonly policy: Policy;
  readonly toolId: string;
  /** The manifest's allowlist and network patterns. */
  readonly allow: readonly string[];
  readonly network: readonly string[];
  readonly runId: string;
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
  readonly maxCapabilityCalls: number;
  readonly outputs: RunOutputs;
  readonly now?: () => number;
  /** Sees each kept log line, scrubbed (for live logging to the caller). */
  readonly onLog?: (line: LogLine) => void;
  /** Sees the running count of capability calls (for progress). */
  readonly onCall?: (count: number) => void;
}

/** What a run leaves behind for its finishing transaction. */
export interface RunEffects {
  readonly journal: readonly JournalEntry[];
  readonly journalHead: string | null;
  readonly outputs: readonly SealedOutput[];
  /** Differences from the declared outputs; any makes a succeeded call fail. */
  readonly outputProblems: readonly string[];
  readonly log: readonly LogLine[];
  readonly logDropped: number;
  /**
   * The run's result as it may be recorded and returned: the output rule applied (a refused
   * output ends the run with A-AUTH-SECRET-WRITE), then every secret redacted (ABI-SECRET-006).
   */
  seal(result: RunResult): RunResult;
  /** The hash to record of the output bytes: keyed once the run received a secret (ABI-SECRET-008). */
  outputDigest(sha256: string): string;
}

/** The broker of one run. */
export interface RunBroker {
  /** Answers one `helix_v1.capability_call`. */
  handle(request: Uint8Array): Promise<BrokerAnswer>;
  /** A terminal capability call (ABI-OUTPUT-002): the same rules; its result becomes the output. */
  terminal(name: string, args: unknown): Promise<{ ok: true; result: unknown } | { ok: false; error: WireError }>;
  finish(): RunEffects;
}

type Decision = 'allowed' | 'forbidden' | 'invalid' | 'failed' | 'refused' | 'aborted';

/** Creates the broker of one run. */
export function createBroker(o: BrokerOptions): RunBroker {
  const now = o.now ?? Date.now;
  const journal = new JournalBuilder();
  const guard = new SecretGuard(secretWriteRules(o.policy));
  const secrets = new SecretSource(o.policy, guard);
  o.outputs.guardWith(guard);
  // Loaded before the first secret is handed out (see handle), so every hash from then on can be keyed.
  let key: Buffer | undefined;
  const hashKey = (): Buffer => (key ??= secretKey(o.store.home));
  // Declared before use below; log lines go to the audit trail too, scrubbed like everything else.
  let auditLine: (line: LogLine) => void = () => undefined;
  const log = new RunLog(now, (line) => auditLine(line), guard);
  let calls = 0;
  const ctx: CapabilityContext = {
    toolId: o.toolId,
    runId: o.runId,
    manifest: { allow: o.allow, network: o.network },
    policy: o.policy,
    deadlineMs: o.deadlineMs,
    signal: o.signal,
    artifacts: artifactPort(o.store, o.outputs),
    kv: kvPort(o.store, o.toolId, guard),
    log,
    secrets,
    clock: systemClock,
  };

  // Records keep their own field names; what the guest made is redacted, keys included.
  const text = (s: string | null): string | null => (s === null ? null : guard.redactText(s));
  const cleanLine = (l: LogLine): LogLine => ({ ...l, event: guard.redactText(l.event), fields: guard.redactJson(l.fields) });
  // Plain sha256 until the run has a secret; then HMAC under the store's key, and the entry says so.
  const digest = (data: Uint8Array | string): string => (guard.active ? keyedHex(hashKey(), data) : sha256Hex(data));

  auditLine = (line) => {
    const clean = cleanLine(line);
    appendAudit(o.store, line.at, { kind: 'log', tool_id: o.toolId, run_id: o.runId, level: clean.level, event: clean.event, fields: clean.fields });
    o.onLog?.(clean);
  };

  const audit = (decision: Decision, name: string | null, reason: string, code?: string): void => {
    appendAudit(o.store, now(), { kind: 'capability', decision, tool_id: o.toolId, run_id: o.runId, capability: text(name), reason: guard.redactText(reason), ...(code === undefined ? {} : { code }) });
  };

  /** Records the call, its answer and its decision; returns the answer for the guest. */
  const conclude = (
    request: Uint8Array,
    name: string | null,
    args: unknown,
    outcome: { kind: 'ok'; result: unknown; cap: CapabilityDefinition } | { kind: 'error'; error: WireError; decision: Decision; reason: string } | { kind: 'abort'; code: ErrorCode; message: string; details: Record<string, unknown> },
  ): BrokerAnswer => {
    let response: Uint8Array;
    let entry: Omit<JournalEntry, 'seq' | 'hash'>;
    const base = { name: text(name), args: guard.redactJson(journalArgs(name, args ?? null)), request_sha256: digest(request), ...(guard.active ? { keyed: true as const } : {}) };
    if (outcome.kind === 'abort') {
      response = new Uint8Array(0);
      entry = { ...base, outcome: 'abort', mode: 'value', result: null, result_sha256: null, error: guard.redactError({ code: outcome.code, message: outcome.message, details: outcome.details }), response_sha256: digest(response), fuel: 0 };
      audit('aborted', name, outcome.message, outcome.code);
      journal.append(entry);
      return { kind: 'abort', code: outcome.code, message: outcome.message, details: outcome.details };
    }
    if (outcome.kind === 'ok') {
      response = okAnswer(name!, outcome.result);
      if (response.length > MAX_RESPONSE_BYTES) {
        return conclude(request, name, args, { kind: 'error', error: wire('R-CAP-PAYLOAD', `The result of ${name} is ${response.length} bytes, above ${MAX_RESPONSE_BYTES}.`, { max_bytes: MAX_RESPONSE_BYTES }), decision: 'failed', reason: 'result too large' });
      }
      const mode = outcome.cap.journal;
      entry = {
        ...base,
        outcome: 'ok',
        mode,
        result: mode === 'value' ? guard.redactJson(outcome.result) : null,
        result_sha256: mode === 'digest' ? digest(canonicalJson(outcome.result)) : null,
        error: null,
        response_sha256: digest(response),
        fuel: fuelFor(request, response),
      };
      audit('allowed', name, 'granted');
    } else {
      response = outcome.error === FORBIDDEN ? FORBIDDEN_BYTES : errorAnswer(outcome.error);
      entry = { ...base, outcome: 'error', mode: 'value', result: null, result_sha256: null, error: guard.redactError(outcome.error), response_sha256: digest(response), fuel: fuelFor(request, response) };
      audit(outcome.decision, name, outcome.reason, outcome.error.code);
    }
    journal.append(entry);
    return { kind: 'answer', response, fuel: entry.fuel };
  };

  const handle = async (request: Uint8Array): Promise<BrokerAnswer> => {
    calls += 1;
    o.onCall?.(calls);
    if (calls > o.maxCapabilityCalls) {
      return conclude(request, null, null, { kind: 'abort', code: 'R-CAP-CALL-LIMIT', message: `The tool made more than ${o.maxCapabilityCalls} capability calls.`, details: { max_capability_calls: o.maxCapabilityCalls } });
    }
    if (request.length > MAX_REQUEST_BYTES) {
      return conclude(request, null, null, { kind: 'error', error: wire('R-CAP-PAYLOAD', `The request is ${request.length} bytes, above ${MAX_REQUEST_BYTES}.`, { max_bytes: MAX_REQUEST_BYTES }), decision: 'invalid', reason: 'request too large' });
    }
    let json: unknown;
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(request);
      // Bounded before JSON.parse, so nothing recursive (scrubbing, the journal, the audit) ever
      // sees a value too deep or a number a double cannot hold (ABI-JSON-001 to -004). Too deep
      // ends the run; any other breach is answered and the guest may go on.
      const violation = scanJsonText(text, { envelope: true });
      if (violation !== undefined) {
        const r = jsonRefusal(violation, 'capability', 'the capability request');
        if (r.code === 'S-TOOL-CAPABILITY-DEPTH') return conclude(request, null, null, { kind: 'abort', code: r.code, message: r.message, details: r.details });
        return conclude(request, null, null, { kind: 'error', error: wire(r.code, r.message, r.details), decision: 'invalid', reason: `JSON bounds: ${violation.kind}` });
      }
      json = JSON.parse(text);
    } catch (err) {
      return conclude(request, null, null, { kind: 'error', error: wire('I-REQ-ENVELOPE', `The capability request is not UTF-8 JSON: ${(err as Error).message}`, {}), decision: 'invalid', reason: 'not JSON' });
    }
    const env = CapabilityRequestSchema.safeParse(json);
    if (!env.success) {
      const violations = env.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      return conclude(request, null, json, { kind: 'error', error: wire('I-REQ-ENVELOPE', `The capability request is malformed: ${violations.join('; ')}`, { violations }), decision: 'invalid', reason: 'malformed envelope' });
    }
    const { name, args } = env.data;
    const cap = CAPABILITIES.get(name);
    // Deny by default, and say nothing about why: unknown, not allowlisted and not granted all
    // get the same bytes.
    const listed = cap !== undefined && (cap.scopeOf === undefined ? o.allow.includes(name) : o.allow.some((e) => e.startsWith(`${name}.`)));
    if (cap === undefined || !listed || !isCapabilityGranted(o.policy, o.toolId, cap.scopeOf === undefined ? name : o.allow.find((e) => e.startsWith(`${name}.`))!)) {
      return conclude(request, name, args, { kind: 'error', error: FORBIDDEN, decision: 'forbidden', reason: cap === undefined ? FORBIDDEN_REASONS.unknown : !listed ? FORBIDDEN_REASONS.unlisted : FORBIDDEN_REASONS.ungranted });
    }
    const parsed = cap.args.safeParse(args);
    if (!parsed.success) {
      const violations = parsed.error.issues.map((i) => ({ path: `/${i.path.join('/')}`, message: i.message }));
      return conclude(request, name, args, { kind: 'error', error: wire('I-REQ-CAPABILITY-ARGS', `The arguments of ${name} have ${violations.length} violation${violations.length === 1 ? '' : 's'}.`, { violations }), decision: 'invalid', reason: 'arguments' });
    }
    if (cap.scopeOf !== undefined) {
      const entry = `${name}.${cap.scopeOf(parsed.data)}`;
      if (!o.allow.includes(entry) || !isCapabilityGranted(o.policy, o.toolId, entry)) {
        return conclude(request, name, args, { kind: 'error', error: FORBIDDEN, decision: 'forbidden', reason: FORBIDDEN_REASONS.scope(entry) });
      }
    }
    try {
      // A capability whose answer is a secret (journal: redacted) needs the key before it answers.
      if (cap.journal === 'redacted') hashKey();
      const result = cap.result.parse(await cap.invoke(parsed.data, ctx));
      return conclude(request, name, args, { kind: 'ok', result, cap });
    } catch (err) {
      if (err instanceof HelixError) return conclude(request, name, args, { kind: 'error', error: err.toWire(), decision: err.code === 'A-AUTH-SECRET-WRITE' ? 'refused' : 'failed', reason: err.message });
      const message = err instanceof Error ? err.message : String(err);
      return conclude(request, name, args, { kind: 'error', error: wire('R-UPSTREAM-CAPABILITY', `${name} failed: ${message}`, {}), decision: 'failed', reason: message });
    }
  };

  // The first abort ends the run: every later request gets it again at once, uncounted and
  // unrecorded, whatever the guest did with the first (the sandbox refuses them too; an Extism
  // plugin's host function runs here, on the main thread).
  let aborted: (BrokerAnswer & { readonly kind: 'abort' }) | undefined;
  const handleOnce = async (request: Uint8Array): Promise<BrokerAnswer> => {
    if (aborted !== undefined) return aborted;
    const answer = await handle(request);
    if (answer.kind === 'abort') aborted ??= answer;
    return answer;
  };

  return {
    handle: handleOnce,
    async terminal(name, args) {
      const answer = await handleOnce(encoder.encode(JSON.stringify({ abi_version: CAPABILITY_ABI_VERSION, name, args })));
      if (answer.kind === 'abort') return { ok: false, error: { code: answer.code, message: answer.message, details: answer.details, hint: ERROR_CODES[answer.code].hint } };
      const parsed = JSON.parse(new TextDecoder().decode(answer.response)) as { status: string; capability_result?: { result: unknown }; error?: WireError };
      return parsed.status === 'ok' ? { ok: true, result: parsed.capability_result!.result } : { ok: false, error: parsed.error! };
    },
    finish() {
      const outputs = o.outputs.close();
      return {
        journal: journal.entries,
        journalHead: journal.head,
        outputs,
        outputProblems: o.outputs.check(outputs),
        log: log.lines.map(cleanLine),
        logDropped: log.dropped,
        seal: (result) => sealResult(guard, result),
        outputDigest: (sha256) => (guard.active ? keyedHex(hashKey(), sha256) : sha256),
      };
    },
  };
}

const FORBIDDEN_BYTES = errorAnswer(FORBIDDEN);

/** What the journal keeps of a call's arguments: all of them, unless its capability says less. */
function journalArgs(name: string | null, args: unknown): unknown {
  const summarize = name === null ? undefined : CAPABILITIES.get(name)?.journalArgs;
  return summarize !== undefined && typeof args === 'object' && args !== null && !Array.isArray(args) ? summarize(args as Record<string, unknown>) : args;
}

function wire(code: ErrorCode, message: string, details: Record<string, unknown>): WireError {
  return { code, message, details, hint: ERROR_CODES[code].hint };
}

function fuelFor(request: Uint8Array, response: Uint8Array): number {
  return CALL_FUEL + Math.ceil((request.length + response.length) / 64);
}
