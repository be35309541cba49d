// The broker: the only path from a guest to a capability. Per call it checks the envelope, the
// call count, the allowlist and the policy (policy, second time), the arguments' schema and the
// payload sizes, runs the capability, records the call in the run's journal and every decision
// in the audit trail, and answers with bytes for the guest. Once it has aborted the run it serves,
// journals and audits nothing more (ABI-FINAL-002). Once the run has received a secret, its guard
// checks every write and redacts every record, and the journal's hashes are keyed. Calls through
// the bulk import pass the same checks; their bytes bypass the envelope, and the journal names
// them by one hash (ABI-BULK-001 to -006).
import {
  BULK_ABI_VERSION,
  BULK_CAPABILITIES,
  CAPABILITY_ABI_VERSION,
  CapabilityRequestSchema,
  ERROR_CODES,
  type ErrorCode,
  type JournalEntry,
  type Policy,
  type RunResult,
  scanJsonText,
  type WireError,
} from '../../../abi/index.js';
import {
  bulkRead,
  bulkWrite,
  CAPABILITIES,
  parseBulkArgs,
  type CapabilityContext,
  type CapabilityDefinition,
} from '../../../capabilities/index.js';
import type { BrokerAnswer, BulkPart } from '../../2-sandbox/engine/protocol.js';
import { jsonRefusal } from '../../1-base/json-entry.js';
import { canonicalJson } from '../../1-base/hashing.js';
import { isCapabilityGranted, secretWriteRules } from '../policy/rules.js';
import type { AuditEntry } from '../../3-store/audit.js';
import type { Store } from '../../3-store/open-store.js';
import { JournalBuilder, sha256Hex } from './journal.js';
import {
  answerVersion,
  argsError,
  type AnswerVersion,
  type BulkName,
  type Decision,
  errorAnswer,
  failure,
  FORBIDDEN,
  FORBIDDEN_BYTES,
  FORBIDDEN_REASONS,
  fuelFor,
  isBulkName,
  okAnswer,
  wire,
} from './answers.js';
import { ReadAhead } from './read-ahead.js';
import type { RunOutputs, SealedOutput } from './outputs.js';
import { artifactPort, checkpointPort, importPort, kvPort, RunLog, SecretSource, systemClock, type LogLine } from './ports.js';
import { SecretGuard } from './secret-guard.js';
import { keyedHex, secretKey } from './secret-key.js';
import { sealResult } from './seal-result.js';

/** Largest request a guest may send (an artifact.write piece of 1 MiB, base64, plus envelope). */
export const MAX_REQUEST_BYTES = 1_500_000;
/** Largest answer (an artifact.read piece of 1 MiB, base64, plus envelope). */
export const MAX_RESPONSE_BYTES = 1_500_000;
const encoder = new TextEncoder();

export { answerVersion, CALL_FUEL, errorAnswer, FORBIDDEN_REASONS, okAnswer, type AnswerVersion } from './answers.js';

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
   * The run's audit records (its capability decisions and log lines), written with its journal
   * in its finishing transaction: one commit for the run, not one per call (ABI-STORE-037).
   */
  readonly audit: readonly AuditEntry[];
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
  /** Answers one `helix_v1.capability_call`, or with `bulk` one `helix_v1.capability_call_bulk`. */
  handle(request: Uint8Array, bulk?: BulkPart): Promise<BrokerAnswer>;
  /** A terminal capability call (ABI-OUTPUT-002): the same rules; its result becomes the output. */
  terminal(name: string, args: unknown): Promise<{ ok: true; result: unknown } | { ok: false; error: WireError }>;
  finish(): RunEffects;
}

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
  const audited: AuditEntry[] = [];
  const log = new RunLog(now, (line) => auditLine(line), guard);
  let calls = 0;
  const artifacts = artifactPort(o.store, o.outputs);
  const readAhead = new ReadAhead((id, range) => artifacts.read(id, range));
  const ctx: CapabilityContext = {
    toolId: o.toolId,
    runId: o.runId,
    get callSeq() {
      return calls;
    },
    manifest: { allow: o.allow, network: o.network },
    policy: o.policy,
    deadlineMs: o.deadlineMs,
    signal: o.signal,
    artifacts,
    kv: kvPort(o.store, o.toolId, guard),
    log,
    secrets,
    clock: systemClock,
    checkpoints: checkpointPort(o.store, o.toolId),
    imports: importPort(o.store),
  };

  // Records keep their own field names; what the guest made is redacted, keys included.
  const text = (s: string | null): string | null => (s === null ? null : guard.redactText(s));
  const cleanLine = (l: LogLine): LogLine => ({ ...l, event: guard.redactText(l.event), fields: guard.redactJson(l.fields) });
  // Plain sha256 until the run has a secret; then HMAC under the store's key, and the entry says so.
  const digest = (data: Uint8Array | string): string => (guard.active ? keyedHex(hashKey(), data) : sha256Hex(data));

  auditLine = (line) => {
    const clean = cleanLine(line);
    audited.push({
      at: line.at,
      record: { kind: 'log', tool_id: o.toolId, run_id: o.runId, level: clean.level, event: clean.event, fields: clean.fields },
    });
    o.onLog?.(clean);
  };

  const audit = (decision: Decision, name: string | null, reason: string, code?: string): void => {
    audited.push({
      at: now(),
      record: {
        kind: 'capability',
        decision,
        tool_id: o.toolId,
        run_id: o.runId,
        capability: text(name),
        reason: guard.redactText(reason),
        ...(code === undefined ? {} : { code }),
      },
    });
  };

  /**
   * Records the call, its answer and its decision; returns the answer for the guest. A bulk
   * call's result is kept as a value and its bytes by one hash (`moved`: the bytes, and the key
   * of the stored chunk they are exactly, if so), never stringified (ABI-BULK-006).
   */
  const conclude = (
    request: Uint8Array,
    name: string | null,
    args: unknown,
    outcome:
      | { kind: 'ok'; result: unknown; cap: CapabilityDefinition; moved?: { data: Uint8Array; chunk?: string; toGuest: boolean } }
      | { kind: 'error'; error: WireError; decision: Decision; reason: string }
      | { kind: 'abort'; code: ErrorCode; message: string; details: Record<string, unknown> },
    version: AnswerVersion = CAPABILITY_ABI_VERSION,
  ): BrokerAnswer => {
    let response: Uint8Array;
    let entry: Omit<JournalEntry, 'seq' | 'hash'>;
    const bulk = version === BULK_ABI_VERSION && outcome.kind === 'ok' && outcome.moved !== undefined;
    const base = {
      name: text(name),
      args: guard.redactJson(bulk ? args : journalArgs(name, args ?? null)),
      request_sha256: digest(request),
      ...(guard.active ? { keyed: true as const } : {}),
    };
    if (outcome.kind === 'abort') {
      response = new Uint8Array(0);
      entry = {
        ...base,
        outcome: 'abort',
        mode: 'value',
        result: null,
        result_sha256: null,
        error: guard.redactError({ code: outcome.code, message: outcome.message, details: outcome.details }),
        response_sha256: digest(response),
        fuel: 0,
      };
      audit('aborted', name, outcome.message, outcome.code);
      journal.append(entry);
      return { kind: 'abort', code: outcome.code, message: outcome.message, details: outcome.details };
    }
    if (outcome.kind === 'ok' && outcome.moved !== undefined) {
      const moved = outcome.moved;
      response = okAnswer(name!, outcome.result, version);
      // The chunk's key names the bytes when they are one whole chunk: the store checked that hash as it read them.
      const data_sha256 = moved.chunk !== undefined && !guard.active ? moved.chunk : digest(moved.data);
      entry = {
        ...base,
        outcome: 'ok',
        mode: 'value',
        result: guard.redactJson(outcome.result),
        result_sha256: null,
        error: null,
        response_sha256: digest(response),
        fuel: fuelFor(request, response, moved.data.length),
        data_sha256,
      };
      audit('allowed', name, 'granted');
      journal.append(entry);
      return { kind: 'answer', response, fuel: entry.fuel, ...(moved.toGuest ? { bulk: moved.data } : {}) };
    }
    if (outcome.kind === 'ok') {
      response = okAnswer(name!, outcome.result, version);
      if (response.length > MAX_RESPONSE_BYTES) {
        return conclude(
          request,
          name,
          args,
          {
            kind: 'error',
            error: wire('R-CAP-PAYLOAD', `The result of ${name} is ${response.length} bytes, above ${MAX_RESPONSE_BYTES}.`, {
              max_bytes: MAX_RESPONSE_BYTES,
            }),
            decision: 'failed',
            reason: 'result too large',
          },
          version,
        );
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
        fuel: fuelFor(request, response, 0),
      };
      audit('allowed', name, 'granted');
    } else {
      response = outcome.error === FORBIDDEN && version === CAPABILITY_ABI_VERSION ? FORBIDDEN_BYTES : errorAnswer(outcome.error, version);
      entry = {
        ...base,
        outcome: 'error',
        mode: 'value',
        result: null,
        result_sha256: null,
        error: guard.redactError(outcome.error),
        response_sha256: digest(response),
        fuel: fuelFor(request, response, 0),
      };
      audit(outcome.decision, name, outcome.reason, outcome.error.code);
    }
    journal.append(entry);
    return { kind: 'answer', response, fuel: entry.fuel };
  };

  const handle = async (request: Uint8Array, bulk: BulkPart | undefined): Promise<BrokerAnswer> => {
    calls += 1;
    o.onCall?.(calls);
    let v: AnswerVersion = answerVersion(undefined, bulk);
    if (calls > o.maxCapabilityCalls) {
      return conclude(request, null, null, {
        kind: 'abort',
        code: 'R-CAP-CALL-LIMIT',
        message: `The tool made more than ${o.maxCapabilityCalls} capability calls.`,
        details: { max_capability_calls: o.maxCapabilityCalls },
      });
    }
    if (request.length > MAX_REQUEST_BYTES) {
      return conclude(
        request,
        null,
        null,
        {
          kind: 'error',
          error: wire('R-CAP-PAYLOAD', `The request is ${request.length} bytes, above ${MAX_REQUEST_BYTES}.`, {
            max_bytes: MAX_REQUEST_BYTES,
          }),
          decision: 'invalid',
          reason: 'request too large',
        },
        v,
      );
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
        if (r.code === 'S-TOOL-CAPABILITY-DEPTH')
          return conclude(request, null, null, { kind: 'abort', code: r.code, message: r.message, details: r.details });
        return conclude(
          request,
          null,
          null,
          { kind: 'error', error: wire(r.code, r.message, r.details), decision: 'invalid', reason: `JSON bounds: ${violation.kind}` },
          v,
        );
      }
      json = JSON.parse(text);
    } catch (err) {
      return conclude(
        request,
        null,
        null,
        {
          kind: 'error',
          error: wire('I-REQ-ENVELOPE', `The capability request is not UTF-8 JSON: ${(err as Error).message}`, {}),
          decision: 'invalid',
          reason: 'not JSON',
        },
        v,
      );
    }
    v = answerVersion(json, bulk);
    const env = CapabilityRequestSchema.safeParse(json);
    if (!env.success) {
      const violations = env.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      return conclude(
        request,
        null,
        json,
        {
          kind: 'error',
          error: wire('I-REQ-ENVELOPE', `The capability request is malformed: ${violations.join('; ')}`, { violations }),
          decision: 'invalid',
          reason: 'malformed envelope',
        },
        v,
      );
    }
    const { name, args } = env.data;
    // Only artifact bytes take the bulk path; any other name through it is answered, and the guest may go on (ABI-BULK-002).
    if (bulk !== undefined && !isBulkName(name)) {
      return conclude(
        request,
        name,
        args,
        {
          kind: 'error',
          error: wire(
            'I-REQ-BULK-CAPABILITY',
            `${name} is not served through capability_call_bulk; only ${BULK_CAPABILITIES.join(' and ')} are.`,
            { name, bulk_capabilities: [...BULK_CAPABILITIES] },
          ),
          decision: 'invalid',
          reason: 'not a bulk capability',
        },
        v,
      );
    }
    const cap = CAPABILITIES.get(name);
    // Deny by default, and say nothing about why: unknown, not allowlisted and not granted all
    // get the same bytes.
    const listed =
      cap !== undefined && (cap.scopeOf === undefined ? o.allow.includes(name) : o.allow.some((e) => e.startsWith(`${name}.`)));
    if (
      cap === undefined ||
      !listed ||
      !isCapabilityGranted(o.policy, o.toolId, cap.scopeOf === undefined ? name : o.allow.find((e) => e.startsWith(`${name}.`))!)
    ) {
      return conclude(
        request,
        name,
        args,
        {
          kind: 'error',
          error: FORBIDDEN,
          decision: 'forbidden',
          reason: cap === undefined ? FORBIDDEN_REASONS.unknown : !listed ? FORBIDDEN_REASONS.unlisted : FORBIDDEN_REASONS.ungranted,
        },
        v,
      );
    }
    if (bulk !== undefined && isBulkName(name)) return serveBulk(request, name, args, cap, bulk);
    const parsed = cap.args.safeParse(args);
    if (!parsed.success) {
      const violations = parsed.error.issues.map((i) => ({ path: `/${i.path.join('/')}`, message: i.message }));
      return conclude(
        request,
        name,
        args,
        { kind: 'error', error: argsError(name, violations), decision: 'invalid', reason: 'arguments' },
        v,
      );
    }
    if (cap.scopeOf !== undefined) {
      const entry = `${name}.${cap.scopeOf(parsed.data)}`;
      if (!o.allow.includes(entry) || !isCapabilityGranted(o.policy, o.toolId, entry)) {
        return conclude(
          request,
          name,
          args,
          { kind: 'error', error: FORBIDDEN, decision: 'forbidden', reason: FORBIDDEN_REASONS.scope(entry) },
          v,
        );
      }
    }
    try {
      // A capability whose answer is a secret (journal: redacted) needs the key before it answers.
      if (cap.journal === 'redacted') hashKey();
      const result = cap.result.parse(await cap.invoke(parsed.data, ctx));
      return conclude(request, name, args, { kind: 'ok', result, cap }, v);
    } catch (err) {
      return conclude(request, name, args, failure(name, err), v);
    }
  };

  /** A bulk read or write, its arguments checked against the bulk schema and the buffer (ABI-BULK-003/-004). */
  const serveBulk = async (
    request: Uint8Array,
    name: BulkName,
    args: Record<string, unknown>,
    cap: CapabilityDefinition,
    bulk: BulkPart,
  ): Promise<BrokerAnswer> => {
    const capacity = bulk.kind === 'read' ? bulk.capacity : bulk.data.length;
    const parsed = parseBulkArgs(name, args, capacity);
    if (!parsed.ok)
      return conclude(
        request,
        name,
        args,
        { kind: 'error', error: argsError(name, parsed.violations), decision: 'invalid', reason: 'arguments' },
        BULK_ABI_VERSION,
      );
    try {
      if (name === 'artifact.read') {
        const piece = await bulkRead(parsed.args as Parameters<typeof bulkRead>[0], capacity, (id, range) => readAhead.get(id, range));
        return conclude(
          request,
          name,
          args,
          {
            kind: 'ok',
            result: piece.result,
            cap,
            moved: { data: piece.data, ...(piece.chunk === undefined ? {} : { chunk: piece.chunk }), toGuest: true },
          },
          BULK_ABI_VERSION,
        );
      }
      const data = bulk.kind === 'write' ? bulk.data : new Uint8Array(0);
      const result = await bulkWrite(parsed.args as Parameters<typeof bulkWrite>[0], data, ctx);
      return conclude(request, name, args, { kind: 'ok', result, cap, moved: { data, toGuest: false } }, BULK_ABI_VERSION);
    } catch (err) {
      return conclude(request, name, args, failure(name, err), BULK_ABI_VERSION);
    }
  };

  // The first abort ends the run: every later request gets it again at once, uncounted and
  // unrecorded, whatever the guest did with the first (the sandbox refuses them too; an Extism
  // plugin's host function runs here, on the main thread).
  let aborted: (BrokerAnswer & { readonly kind: 'abort' }) | undefined;
  const handleOnce = async (request: Uint8Array, bulk?: BulkPart): Promise<BrokerAnswer> => {
    if (aborted !== undefined) return aborted;
    const answer = await handle(request, bulk);
    if (answer.kind === 'abort') aborted ??= answer;
    return answer;
  };

  return {
    handle: handleOnce,
    async terminal(name, args) {
      const answer = await handleOnce(encoder.encode(JSON.stringify({ abi_version: CAPABILITY_ABI_VERSION, name, args })));
      if (answer.kind === 'abort')
        return {
          ok: false,
          error: { code: answer.code, message: answer.message, details: answer.details, hint: ERROR_CODES[answer.code].hint },
        };
      const parsed = JSON.parse(new TextDecoder().decode(answer.response)) as {
        status: string;
        capability_result?: { result: unknown };
        error?: WireError;
      };
      return parsed.status === 'ok' ? { ok: true, result: parsed.capability_result!.result } : { ok: false, error: parsed.error! };
    },
    finish() {
      readAhead.drop();
      const outputs = o.outputs.close();
      return {
        journal: journal.entries,
        journalHead: journal.head,
        outputs,
        outputProblems: o.outputs.check(outputs),
        log: log.lines.map(cleanLine),
        logDropped: log.dropped,
        audit: audited,
        seal: (result) => sealResult(guard, result),
        outputDigest: (sha256) => (guard.active ? keyedHex(hashKey(), sha256) : sha256),
      };
    },
  };
}

/** What the journal keeps of a call's arguments: all of them, unless its capability says less. */
function journalArgs(name: string | null, args: unknown): unknown {
  const summarize = name === null ? undefined : CAPABILITIES.get(name)?.journalArgs;
  return summarize !== undefined && typeof args === 'object' && args !== null && !Array.isArray(args)
    ? summarize(args as Record<string, unknown>)
    : args;
}
