// The live ports a run's capabilities reach: artifacts (ranged and gunzipped reads, outputs),
// the tool's kv namespace, the run log, secrets from the policy's sources, the clock. Each is
// bound to one run and one tool; none exposes the store or a path.
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { type ArtifactRecord, HelixError, type Policy, SECRET_FILE_MAX_BYTES } from '../../../abi/index.js';
import type {
  ArtifactPort,
  ArtifactSummary,
  CapabilityContext,
  CheckpointPort,
  ClockPort,
  ImportPort,
  KvPort,
  LogPort,
  SecretPort,
} from '../../../capabilities/index.js';
import { getArtifact, importStream, listArtifacts } from '../artifacts/index.js';
import { readRegularFile } from '../../1-base/files/pack-files.js';
import { readBlob, readBlobRange } from '../../3-store/blobs.js';
import { checkpointGet, checkpointPut } from '../../3-store/checkpoints.js';
import { kvDelete, kvGet, kvKeys, kvPut } from '../../3-store/kv.js';
import type { Store } from '../../3-store/open-store.js';
import { RunOutputs } from './outputs.js';
import type { SecretGuard } from './secret-guard.js';

/** The metadata capabilities return for an artifact. */
export function summarize(a: ArtifactRecord): ArtifactSummary {
  return {
    id: a.id,
    sha256: a.sha256,
    size: a.size,
    type: a.type,
    compression: a.compression,
    media_type: a.media_type,
    label: a.label,
    created_at: a.created_at,
    created_by_run: a.created_by_run,
  };
}

/** A position in an artifact's decompressed content, so sequential reads do not start over. */
interface Cursor {
  position: number;
  readonly iterator: AsyncIterator<Buffer>;
  pending: Buffer;
  done: boolean;
}

/** Artifact access for one run. */
export function artifactPort(store: Store, outputs: RunOutputs): ArtifactPort {
  const cursors = new Map<string, Cursor>();
  const open = (record: ArtifactRecord): Cursor => {
    const gunzip = Readable.from(readBlob(store, record.sha256)).pipe(createGunzip());
    return { position: 0, iterator: gunzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>, pending: Buffer.alloc(0), done: false };
  };
  const readDecompressed = async (record: ArtifactRecord, offset: number, length: number): Promise<{ data: Uint8Array; eof: boolean }> => {
    let c = cursors.get(record.id);
    // Reading on from where the last read stopped is the common case; anything else restarts.
    if (c === undefined || offset < c.position) c = open(record);
    cursors.set(record.id, c);
    while (c.position + c.pending.length < offset + length && !c.done) {
      let next: IteratorResult<Buffer>;
      try {
        next = await c.iterator.next();
      } catch (err) {
        throw new HelixError('D-DATA-CHECKSUM', {
          message: `Artifact ${record.id} is not valid gzip: ${(err as Error).message}`,
          details: { artifact_id: record.id },
        });
      }
      if (next.done) c.done = true;
      else c.pending = c.pending.length === 0 ? next.value : Buffer.concat([c.pending, next.value]);
      // Drop what lies before the requested offset, so memory stays one read wide.
      if (c.position + c.pending.length <= offset) {
        c.position += c.pending.length;
        c.pending = Buffer.alloc(0);
      } else if (c.position < offset) {
        c.pending = c.pending.subarray(offset - c.position);
        c.position = offset;
      }
    }
    const start = Math.max(0, offset - c.position);
    const data = Buffer.from(c.pending.subarray(start, start + length));
    const eof = c.done && start + length >= c.pending.length;
    return { data, eof };
  };
  return {
    stat: (id) => summarize(getArtifact(store, id)),
    async read(id, { offset, length, decompress, into }) {
      const record = getArtifact(store, id);
      if (decompress && record.compression === 'gzip') return readDecompressed(record, offset, length);
      const { data, chunk } = readBlobRange(store, record.sha256, offset, offset + length, into);
      return { data, eof: offset + length >= record.size, ...(chunk === undefined ? {} : { chunk }) };
    },
    list: ({ limit, type }) =>
      listArtifacts(store)
        .filter((a) => type === undefined || a.type === type)
        .slice(0, limit)
        .map(summarize),
    write: (role, data, final, meta) => outputs.write(role, data, final, meta),
    declared: (role) => outputs.declared(role),
  };
}

/**
 * The tool's namespace in the kv database: keys never leave [toolId, ...]. With a guard, a key or
 * value that carries a secret the run received is refused or redacted (ABI-SECRET-003).
 */
export function kvPort(store: Store, toolId: string, guard?: SecretGuard): KvPort {
  return {
    get(key) {
      const value = kvGet(store, toolId, key);
      return value === undefined ? { found: false } : { found: true, value };
    },
    async put(key, value) {
      const k = guard === undefined ? key : guard.admitJson('kv', key, 'kv.put', '/key');
      const v = guard === undefined ? value : guard.admitJson('kv', value, 'kv.put', '/value');
      await kvPut(store, toolId, k, v);
    },
    async delete(key) {
      return kvDelete(store, toolId, key);
    },
    list(prefix, limit) {
      return kvKeys(store, toolId, prefix, limit);
    },
  };
}

/** The tool's checkpoints: host-written records, each put committed at once. */
export function checkpointPort(store: Store, toolId: string): CheckpointPort {
  return {
    get: (key) => checkpointGet(store, toolId, key),
    put: (entries) => checkpointPut(store, toolId, entries),
  };
}

/** Files a capability checked, stored as artifacts of their own (not outputs of the run), visible at once. */
export function importPort(store: Store): ImportPort {
  return {
    importStream: async (source, meta) => summarize(await importStream(store, source, meta)),
  };
}

/** A line of the run's log. */
export interface LogLine {
  readonly at: number;
  readonly level: string;
  readonly event: string;
  readonly fields: Record<string, unknown>;
}

/** Most log lines a run keeps; later ones are counted, not kept. */
export const MAX_LOG_LINES = 10_000;

/**
 * Collects the run's log lines (they go into its log artifact when it ends). With a guard, a line
 * that carries a secret the run received is refused or redacted (ABI-SECRET-005).
 */
export class RunLog implements LogPort {
  readonly lines: LogLine[] = [];
  dropped = 0;
  /** `onLine` also receives each kept line (the broker audits them). */
  constructor(
    private readonly now: () => number,
    private readonly onLine: (line: LogLine) => void = () => undefined,
    private readonly guard?: SecretGuard,
  ) {}
  emit(level: string, event: string, fields: Record<string, unknown>): void {
    if (this.lines.length >= MAX_LOG_LINES) {
      this.dropped += 1;
      return;
    }
    const g = this.guard;
    const line = {
      at: this.now(),
      level,
      event: g === undefined ? event : g.admitJson('log', event, 'log.emit', '/event'),
      fields: g === undefined ? fields : g.admitJson('log', fields, 'log.emit', '/fields'),
    };
    this.lines.push(line);
    this.onLine(line);
  }
}

/**
 * Secrets from the policy's sources. Every value handed out is given to the guard (when there is
 * one), which from then on finds it in whatever the run writes and the host records.
 */
export class SecretSource implements SecretPort {
  constructor(
    private readonly policy: Policy,
    private readonly guard?: SecretGuard,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
  ) {}
  get(name: string): string {
    const source = this.policy.secrets[name];
    if (source === undefined)
      throw new HelixError('P-PRECOND-SECRET-MISSING', { message: `The policy defines no secret "${name}".`, details: { name } });
    let value: string | undefined;
    if ('env' in source) value = this.env[source.env];
    else {
      // A regular file within a bound, never waited on (a FIFO) or read without end (a device).
      const read = readRegularFile(source.file, SECRET_FILE_MAX_BYTES);
      if (!read.ok)
        throw new HelixError('P-PRECOND-SECRET-MISSING', {
          message: `The file of secret "${name}" cannot be read: it ${read.reason}.`,
          details: { name },
        });
      value = read.bytes.toString('utf8').replace(/\r?\n$/, '');
    }
    if (value === undefined || value === '')
      throw new HelixError('P-PRECOND-SECRET-MISSING', { message: `Secret "${name}" has no value in its source.`, details: { name } });
    this.guard?.add(name, value);
    return value;
  }
}

/** The wall clock. */
export const systemClock: ClockPort = { nowUnixMs: () => Date.now() };

/**
 * A capability context outside a guest's run, for the host itself (a verification's live
 * answers, a built-in tool acting for the tool that owns a Slurm job): no outputs, no manifest
 * allowlist, a log that goes nowhere; `imports` refused unless `canImport`.
 */
export function hostCapabilityContext(
  store: Store,
  policy: Policy,
  o: {
    toolId: string;
    runId: string;
    deadlineMs: number;
    signal: AbortSignal;
    callSeq: () => number;
    guard?: SecretGuard;
    canImport: boolean;
  },
): CapabilityContext {
  return {
    toolId: o.toolId,
    runId: o.runId,
    get callSeq() {
      return o.callSeq();
    },
    manifest: { allow: [], network: [] },
    policy,
    deadlineMs: o.deadlineMs,
    signal: o.signal,
    artifacts: artifactPort(store, new RunOutputs(store, o.runId, [], 0)),
    kv: kvPort(store, o.toolId),
    log: new RunLog(Date.now),
    secrets: new SecretSource(policy, o.guard),
    clock: systemClock,
    checkpoints: checkpointPort(store, o.toolId),
    imports: o.canImport ? importPort(store) : { importStream: () => Promise.reject(new Error('this context stores no artifacts')) },
  };
}
