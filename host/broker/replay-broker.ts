// The broker of a verification: answers a re-executed guest from its run's journal, call by
// call, and notes the first place the re-execution departs from it. Results journaled only by
// digest (artifact bytes) or not at all (secrets) are fetched again and checked; entries made
// after the run received a secret are checked with the store's key (ABI-SECRET-009).
import { JSON_REPORT_MAX_CHARS, scanJsonText, type JournalEntry, type Policy } from '../../abi/index.js';
import { CAPABILITIES, type CapabilityContext } from '../../capabilities/index.js';
import type { BrokerAnswer } from '../engine/protocol.js';
import { canonicalJson } from '../hashing.js';
import type { Store } from '../store/open-store.js';
import { errorAnswer, okAnswer } from './broker.js';
import { sha256Hex } from './journal.js';
import { keyedHex } from './secret-key.js';
import { SecretGuard } from './secret-guard.js';
import { RunOutputs } from './outputs.js';
import { secretWriteRules } from '../policy/rules.js';
import { artifactPort, kvPort, RunLog, SecretSource, systemClock } from './ports.js';

/** Where a re-execution first differed from the journal. */
export interface Departure {
  readonly seq: number;
  readonly reason: string;
  readonly expected?: unknown;
  readonly actual?: unknown;
}

/** A broker that replays a journal. */
export interface ReplayBroker {
  handle(request: Uint8Array): Promise<BrokerAnswer>;
  /** The first departure, if any. */
  departure(): Departure | undefined;
  /** How many journal entries the re-execution consumed. */
  consumed(): number;
  /**
   * The secrets the re-execution has received, under the run's policy rules: what the live
   * broker redacted from the run's writes, the same guard redacts from the re-execution's.
   */
  readonly guard: SecretGuard;
}

/**
 * Creates the replay broker for `journal`; `policy` is the run's policy snapshot (for secret
 * sources); `key` is the store's secret hash key, which keyed entries need.
 */
export function createReplayBroker(store: Store, policy: Policy, runId: string, toolId: string, journal: readonly JournalEntry[], key?: Uint8Array): ReplayBroker {
  let seq = 0;
  let first: Departure | undefined;
  const guard = new SecretGuard(secretWriteRules(policy));
  // Live access only for what the journal keeps by digest (immutable artifacts) or not at all
  // (secrets); nothing here writes to the store.
  const live: CapabilityContext = {
    toolId,
    runId,
    manifest: { allow: [], network: [] },
    policy,
    deadlineMs: Number.MAX_SAFE_INTEGER,
    signal: new AbortController().signal,
    artifacts: artifactPort(store, new RunOutputs(store, runId, [], 0)),
    kv: kvPort(store, toolId),
    log: new RunLog(Date.now),
    secrets: new SecretSource(policy, guard),
    clock: systemClock,
  };
  const depart = (d: Departure): BrokerAnswer => {
    first ??= d;
    return { kind: 'abort', code: 'P-PRECOND-VERIFY', message: `The re-execution departs from the journal at call ${d.seq}: ${d.reason}`, details: { seq: d.seq } };
  };
  // A keyed entry without the key cannot match: verifyRun refuses that case before it starts.
  const digest = (entry: JournalEntry, data: Uint8Array | string): string => (entry.keyed === true ? (key === undefined ? '' : keyedHex(key, data)) : sha256Hex(data));
  // The re-executed guest's request, bounded as the live broker bounds it (ABI-JSON-006) before
  // JSON.parse, so a departure report never carries a value too deep to print or record.
  const decode = (request: Uint8Array): unknown => {
    const text = new TextDecoder().decode(request);
    if (scanJsonText(text, { envelope: true }) !== undefined) return text.slice(0, JSON_REPORT_MAX_CHARS);
    try {
      return JSON.parse(text);
    } catch {
      return text.slice(0, JSON_REPORT_MAX_CHARS);
    }
  };

  return {
    departure: () => first,
    consumed: () => seq,
    guard,
    async handle(request) {
      const n = seq;
      seq += 1;
      const entry = journal[n];
      if (entry === undefined) return depart({ seq: n, reason: 'the re-execution makes more capability calls than the journal holds', actual: decode(request) });
      if (digest(entry, request) !== entry.request_sha256) {
        return depart({ seq: n, reason: 'the re-execution made a different request', expected: { name: entry.name, args: entry.args }, actual: decode(request) });
      }
      let response: Uint8Array;
      if (entry.outcome === 'abort') {
        return { kind: 'abort', code: entry.error!.code as never, message: entry.error!.message, details: entry.error!.details };
      } else if (entry.outcome === 'error') {
        response = errorAnswer(entry.error!);
      } else if (entry.mode === 'value') {
        response = okAnswer(entry.name!, entry.result);
      } else {
        const cap = CAPABILITIES.get(entry.name!);
        if (cap === undefined) return depart({ seq: n, reason: `the journal names ${entry.name}, which this host does not serve` });
        let result: unknown;
        try {
          const args = (decode(request) as { args?: unknown }).args;
          result = cap.result.parse(await cap.invoke(cap.args.parse(args), live));
        } catch (err) {
          return depart({ seq: n, reason: `${entry.name} could not be answered again: ${err instanceof Error ? err.message : String(err)}` });
        }
        if (entry.mode === 'digest' && digest(entry, canonicalJson(result)) !== entry.result_sha256) {
          return depart({ seq: n, reason: `${entry.name} now returns different data than the run saw` });
        }
        response = okAnswer(entry.name!, result);
      }
      if (digest(entry, response) !== entry.response_sha256) {
        return depart({ seq: n, reason: `the answer rebuilt from the journal does not hash to what the guest received (the journal was changed, or a secret's value has)` });
      }
      return { kind: 'answer', response, fuel: entry.fuel };
    },
  };
}
