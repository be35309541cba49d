// The broker of a verification: answers a re-executed guest from its run's journal, call by
// call, and notes the first place the re-execution departs from it. Results journaled only by
// digest (artifact bytes) or not at all (secrets) are fetched again and checked; entries made
// after the run received a secret are checked with the store's key (ABI-SECRET-009). A bulk
// entry's bytes are re-read (a read) or taken from the re-execution (a write) and checked
// against its data_sha256 (ABI-BULK-006).
import { BULK_ABI_VERSION, JSON_REPORT_MAX_CHARS, scanJsonText, type JournalEntry, type Policy } from '../../../abi/index.js';
import { bulkRead, CAPABILITIES, parseBulkArgs, type BulkReadArgs, type CapabilityContext } from '../../../capabilities/index.js';
import type { BrokerAnswer, BulkPart } from '../../2-sandbox/engine/protocol.js';
import { canonicalJson } from '../../1-base/hashing.js';
import type { Store } from '../../3-store/open-store.js';
import { answerVersion, errorAnswer, okAnswer } from './broker.js';
import { sha256Hex } from './journal.js';
import { keyedHex } from './secret-key.js';
import { SecretGuard } from './secret-guard.js';
import { secretWriteRules } from '../policy/rules.js';
import { hostCapabilityContext } from './ports.js';

/** Where a re-execution first differed from the journal. */
export interface Departure {
  readonly seq: number;
  readonly reason: string;
  readonly expected?: unknown;
  readonly actual?: unknown;
}

/** A broker that replays a journal. */
export interface ReplayBroker {
  handle(request: Uint8Array, bulk?: BulkPart): Promise<BrokerAnswer>;
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
export function createReplayBroker(
  store: Store,
  policy: Policy,
  runId: string,
  toolId: string,
  journal: readonly JournalEntry[],
  key?: Uint8Array,
): ReplayBroker {
  let seq = 0;
  let first: Departure | undefined;
  const guard = new SecretGuard(secretWriteRules(policy));
  // Live access only for what the journal keeps by digest (immutable artifacts) or not at all
  // (secrets); nothing here writes to the store.
  // A re-execution stores nothing: a capability that imports is journaled by value and answered from the journal.
  const live: CapabilityContext = hostCapabilityContext(store, policy, {
    toolId,
    runId,
    deadlineMs: Number.MAX_SAFE_INTEGER,
    signal: new AbortController().signal,
    callSeq: () => seq,
    guard,
    canImport: false,
  });
  const depart = (d: Departure): BrokerAnswer => {
    first ??= d;
    return {
      kind: 'abort',
      code: 'P-PRECOND-VERIFY',
      message: `The re-execution departs from the journal at call ${d.seq}: ${d.reason}`,
      details: { seq: d.seq },
    };
  };
  // A keyed entry without the key cannot match: verifyRun refuses that case before it starts.
  const digest = (entry: JournalEntry, data: Uint8Array | string): string =>
    entry.keyed === true ? (key === undefined ? '' : keyedHex(key, data)) : sha256Hex(data);
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
    async handle(request, bulk) {
      const n = seq;
      seq += 1;
      const entry = journal[n];
      if (entry === undefined)
        return depart({ seq: n, reason: 'the re-execution makes more capability calls than the journal holds', actual: decode(request) });
      if (digest(entry, request) !== entry.request_sha256) {
        return depart({
          seq: n,
          reason: 'the re-execution made a different request',
          expected: { name: entry.name, args: entry.args },
          actual: decode(request),
        });
      }
      const version = answerVersion(decode(request), bulk);
      let response: Uint8Array;
      let moved: Uint8Array | undefined;
      if (entry.outcome === 'abort') {
        return { kind: 'abort', code: entry.error!.code as never, message: entry.error!.message, details: entry.error!.details };
      } else if (entry.outcome === 'error') {
        response = errorAnswer(entry.error!, version);
      } else if (entry.data_sha256 !== undefined) {
        // A bulk call: its bytes are checked, its control result rebuilt from the journal.
        if (bulk === undefined)
          return depart({ seq: n, reason: `the run made ${entry.name} through the bulk import; the re-execution did not` });
        const checked = await bulkBytes(entry, request, bulk, n);
        if ('departure' in checked) return checked.departure;
        moved = checked.data;
        response = okAnswer(entry.name!, entry.result, BULK_ABI_VERSION);
      } else if (entry.mode === 'value') {
        response = okAnswer(entry.name!, entry.result, version);
      } else {
        const cap = CAPABILITIES.get(entry.name!);
        if (cap === undefined) return depart({ seq: n, reason: `the journal names ${entry.name}, which this host does not serve` });
        let result: unknown;
        try {
          const args = (decode(request) as { args?: unknown }).args;
          result = cap.result.parse(await cap.invoke(cap.args.parse(args), live));
        } catch (err) {
          return depart({
            seq: n,
            reason: `${entry.name} could not be answered again: ${err instanceof Error ? err.message : String(err)}`,
          });
        }
        if (entry.mode === 'digest' && digest(entry, canonicalJson(result)) !== entry.result_sha256) {
          return depart({ seq: n, reason: `${entry.name} now returns different data than the run saw` });
        }
        response = okAnswer(entry.name!, result, version);
      }
      if (digest(entry, response) !== entry.response_sha256) {
        return depart({
          seq: n,
          reason: `the answer rebuilt from the journal does not hash to what the guest received (the journal was changed, or a secret's value has)`,
        });
      }
      return { kind: 'answer', response, fuel: entry.fuel, ...(moved === undefined ? {} : { bulk: moved }) };
    },
  };

  /**
   * The bytes of a bulk entry, checked: a read's are read again from the immutable artifact, a
   * write's are what the re-execution wrote; either must be what data_sha256 names.
   */
  async function bulkBytes(
    entry: JournalEntry,
    request: Uint8Array,
    bulk: BulkPart,
    n: number,
  ): Promise<{ data: Uint8Array | undefined } | { departure: BrokerAnswer }> {
    if (bulk.kind === 'write') {
      if (entry.name !== 'artifact.write' || digest(entry, bulk.data) !== entry.data_sha256)
        return { departure: depart({ seq: n, reason: `the re-execution wrote different bytes through ${entry.name} than the run did` }) };
      return { data: undefined };
    }
    const parsed =
      entry.name === 'artifact.read'
        ? parseBulkArgs('artifact.read', (decode(request) as { args?: unknown }).args, bulk.capacity)
        : undefined;
    if (parsed === undefined || !parsed.ok)
      return { departure: depart({ seq: n, reason: `the journal's ${entry.name} entry does not match a bulk read of the re-execution` }) };
    try {
      const piece = await bulkRead(parsed.args as BulkReadArgs, bulk.capacity, (id, range) => live.artifacts.read(id, range));
      const id = piece.chunk !== undefined && entry.keyed !== true ? piece.chunk : digest(entry, piece.data);
      if (id !== entry.data_sha256)
        return { departure: depart({ seq: n, reason: `${entry.name} now returns different bytes than the run saw` }) };
      return { data: piece.data };
    } catch (err) {
      return {
        departure: depart({
          seq: n,
          reason: `${entry.name} could not be answered again: ${err instanceof Error ? err.message : String(err)}`,
        }),
      };
    }
  }
}
