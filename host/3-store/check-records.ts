// The record half of `helix store check` (ABI-STORE-062..064): every record of every database
// parsed against its schema, its key agreeing with it, every reference it holds followed, and
// every run's journal re-chained. Each finding goes to the CheckLog with its database and key.
import type { z } from 'zod';
import {
  ArtifactRecordSchema,
  JournalEntrySchema,
  RunEventSchema,
  RunRecordSchema,
  type ArtifactRecord,
  type JournalEntry,
  type RunRecord,
} from '../../abi/index.js';
import { isRunLog } from './artifact-records.js';
import { brokenLink } from './journal.js';
import { sha256Digest } from '../1-base/hashing.js';
import type { CheckLog } from './check-log.js';
import { STORE_DATABASES } from './databases.js';
import { storeHandle, type Store } from './handle.js';
import { isLiveWriter, PENDING_HEADER, PendingRecordSchema } from './pending.js';
import { ModuleRecordSchema, RECORD_SCHEMAS, RunOwnerSchema } from './records.js';
import { peek, walk } from './walk.js';

const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** The databases this version knows, by their LMDB names. */
export const KNOWN_DATABASES: readonly string[] = Object.values(STORE_DATABASES).map((d) => d.name);

function why(error: string | undefined, issues: z.ZodError | undefined, schema: string): string {
  if (error !== undefined) return error;
  const first = issues?.issues[0];
  return `the record does not match the ${schema} schema${first === undefined ? '' : ` at ${first.path.join('.') || '(record)'}: ${first.message}`}`;
}

function checkArtifacts(store: Store, log: CheckLog): void {
  const { db } = storeHandle(store);
  for (const { key, value, error } of walk(db.artifacts)) {
    log.saw('artifacts');
    const parsed = ArtifactRecordSchema.safeParse(value);
    if (error !== undefined || !parsed.success) {
      log.problem('D-DATA-RECORD-INVALID', 'artifacts', key, why(error, parsed.error, 'artifact'));
      continue;
    }
    const a = parsed.data;
    if (a.id !== key) log.problem('D-DATA-RECORD-INVALID', 'artifacts', key, `the record carries the id ${a.id}`);
    const blob = peek(db.blobs, a.sha256);
    if (blob === undefined) log.problem('D-DATA-REFERENCE', 'artifacts', key, `its blob ${a.sha256} is not in blobs`);
    else if (blob.size !== a.size) log.problem('D-DATA-REFERENCE', 'artifacts', key, `it records ${a.size} bytes, its blob ${blob.size}`);
    if (!isRunLog(a) && !db.artifactsByTime.doesExist([a.created_at, a.id]))
      log.problem('D-DATA-REFERENCE', 'artifacts', key, 'it is missing from artifacts_by_time, so listings skip it');
    if (a.created_by_run !== null && !db.runs.doesExist(a.created_by_run))
      log.problem('D-DATA-REFERENCE', 'artifacts', key, `the run that created it, ${a.created_by_run}, is not in runs`);
  }
  for (const { key, value, error } of walk(db.artifactsByTime)) {
    log.saw('artifacts_by_time');
    const [at, id] = Array.isArray(key) ? key : [];
    const target = typeof id === 'string' ? (peek(db.artifacts, id) as ArtifactRecord | undefined) : undefined;
    if (error !== undefined || value !== id)
      log.problem('D-DATA-RECORD-INVALID', 'artifacts_by_time', key, error ?? `the entry names ${String(value)}, its key ${String(id)}`);
    else if (target === undefined) log.problem('D-DATA-REFERENCE', 'artifacts_by_time', key, `artifact ${id} is not in artifacts`);
    else if (target.created_at !== at)
      log.problem('D-DATA-REFERENCE', 'artifacts_by_time', key, `artifact ${id} was created at ${target.created_at}, not ${String(at)}`);
  }
}

function checkLink(store: Store, log: CheckLog, runId: string, what: string, artifactId: string, sha256?: string): void {
  const a = peek(storeHandle(store).db.artifacts, artifactId) as ArtifactRecord | undefined;
  if (a === undefined) log.problem('D-DATA-REFERENCE', 'runs', runId, `its ${what} ${artifactId} is not in artifacts`);
  else if (sha256 !== undefined && a.sha256 !== sha256)
    log.problem('D-DATA-REFERENCE', 'runs', runId, `its ${what} ${artifactId} holds ${a.sha256}, the run recorded ${sha256}`);
}

/** A run's journal: every entry parsed, then the hash chain against the run's head. */
function checkJournal(store: Store, log: CheckLog, run: RunRecord): void {
  const entries: JournalEntry[] = [];
  let readable = true;
  for (const { key, value, error } of walk(storeHandle(store).db.journal, { start: [run.run_id, 0], end: [run.run_id, MAX_SEQ] })) {
    const parsed = JournalEntrySchema.safeParse(value);
    if (error !== undefined || !parsed.success) {
      log.problem('D-DATA-RECORD-INVALID', 'run_journal', key, why(error, parsed.error, 'journal entry'));
      readable = false;
    } else entries.push(parsed.data);
  }
  if (!readable) return;
  const broken = brokenLink(entries, run.journal.head);
  if (broken !== undefined)
    log.problem('D-DATA-JOURNAL', 'run_journal', [run.run_id, broken.seq], `the hash chain of run ${run.run_id} breaks: ${broken.reason}`);
  else if (entries.length !== run.journal.entries)
    log.problem(
      'D-DATA-JOURNAL',
      'runs',
      run.run_id,
      `the run records ${run.journal.entries} journal entries, the journal holds ${entries.length}`,
    );
}

function checkRuns(store: Store, log: CheckLog): void {
  const { db } = storeHandle(store);
  for (const { key, value, error } of walk(db.runs)) {
    log.saw('runs');
    const parsed = RunRecordSchema.safeParse(value);
    if (error !== undefined || !parsed.success) {
      log.problem('D-DATA-RECORD-INVALID', 'runs', key, why(error, parsed.error, 'run'));
      continue;
    }
    const r = parsed.data;
    if (r.run_id !== key) log.problem('D-DATA-RECORD-INVALID', 'runs', key, `the record carries the run id ${r.run_id}`);
    if (!db.params.doesExist(r.params_hash))
      log.problem('D-DATA-REFERENCE', 'runs', key, `its params ${r.params_hash} are not in param_sets`);
    if (!db.policies.doesExist(r.policy_hash))
      log.problem('D-DATA-REFERENCE', 'runs', key, `its policy ${r.policy_hash} is not in policies`);
    if (r.module_digest !== null && !db.modules.doesExist(r.module_digest))
      log.problem('D-DATA-REFERENCE', 'runs', key, `its module ${r.module_digest} is not in modules`);
    if (r.input_sha256 !== null && !db.blobs.doesExist(r.input_sha256))
      log.problem('D-DATA-REFERENCE', 'runs', key, `its input blob ${r.input_sha256} is not in blobs`);
    for (const link of r.inputs) checkLink(store, log, key, `input ${link.role}`, link.artifact_id, link.sha256);
    for (const link of r.outputs) checkLink(store, log, key, `output ${link.role}`, link.artifact_id, link.sha256);
    if (r.log_artifact_id !== null) checkLink(store, log, key, 'log', r.log_artifact_id);
    if (r.idempotency_key !== null && peek(db.idempotency, r.idempotency_key) !== r.run_id)
      log.problem('D-DATA-REFERENCE', 'runs', key, `its idempotency key does not lead back to it in idempotency`);
    checkJournal(store, log, r);
  }
}

/** Entries keyed [run id, seq] (events, journal) whose run is not in runs. */
function checkRunKeyed(store: Store, log: CheckLog, database: 'run_events' | 'run_journal'): void {
  const { db: all } = storeHandle(store);
  const db = database === 'run_events' ? all.runEvents : all.journal;
  for (const { key, value, error } of walk<unknown, [string, number]>(db)) {
    log.saw(database);
    if (database === 'run_events') {
      const parsed = RunEventSchema.safeParse(value);
      if (error !== undefined || !parsed.success)
        log.problem('D-DATA-RECORD-INVALID', database, key, why(error, parsed.error, 'run event'));
    }
    if (!Array.isArray(key) || !all.runs.doesExist(key[0]))
      log.problem('D-DATA-REFERENCE', database, key, `its run ${String(Array.isArray(key) ? key[0] : key)} is not in runs`);
  }
}

/** Content-addressed texts (params, policies): each key is the sha256 of its canonical text. */
function checkTexts(store: Store, log: CheckLog, database: 'param_sets' | 'policies'): void {
  const { db } = storeHandle(store);
  for (const { key, value, error } of walk(database === 'param_sets' ? db.params : db.policies)) {
    log.saw(database);
    if (error !== undefined || typeof value !== 'string')
      log.problem('D-DATA-RECORD-INVALID', database, key, error ?? 'the record is not text');
    else if (sha256Digest(value) !== key) log.problem('D-DATA-CHECKSUM', database, key, 'the text does not hash to its key');
  }
}

/** Small databases: audit, kv, checkpoints, idempotency, active runs, modules, meta, pending writes. */
function checkTheRest(store: Store, log: CheckLog): void {
  const { db } = storeHandle(store);
  for (const { key, value, error } of walk(db.audit)) {
    log.saw('audit');
    const parsed = RECORD_SCHEMAS.audit.safeParse(value);
    if (error !== undefined || !parsed.success) log.problem('D-DATA-RECORD-INVALID', 'audit', key, why(error, parsed.error, 'audit'));
  }
  for (const { key, value, error } of walk(db.kv)) {
    log.saw('kv');
    if (error !== undefined || value === undefined || !Array.isArray(key) || key.length !== 2)
      log.problem('D-DATA-RECORD-INVALID', 'kv', key, error ?? 'the key is not [tool id, key]');
  }
  for (const { key, value, error } of walk(db.checkpoints)) {
    log.saw('checkpoints');
    const parsed = RECORD_SCHEMAS.checkpoints.safeParse(value);
    if (error !== undefined || !parsed.success || !Array.isArray(key) || key.length !== 2)
      log.problem('D-DATA-RECORD-INVALID', 'checkpoints', key, error ?? 'the key is not [tool id, key] or the record is not an object');
  }
  for (const { key, value, error } of walk(db.idempotency)) {
    log.saw('idempotency');
    if (error !== undefined || typeof value !== 'string')
      log.problem('D-DATA-RECORD-INVALID', 'idempotency', key, error ?? 'the record is not a run id');
    else if (!db.runs.doesExist(value)) log.problem('D-DATA-REFERENCE', 'idempotency', key, `run ${value} is not in runs`);
  }
  for (const { key, value, error } of walk(db.activeRuns)) {
    log.saw('active_runs');
    const parsed = RunOwnerSchema.safeParse(value);
    if (error !== undefined || !parsed.success) log.problem('D-DATA-RECORD-INVALID', 'active_runs', key, why(error, parsed.error, 'owner'));
    if (!db.runs.doesExist(key)) log.problem('D-DATA-REFERENCE', 'active_runs', key, `run ${key} is not in runs`);
  }
  for (const { key, value, error } of walk(db.modules)) {
    log.saw('modules');
    const parsed = ModuleRecordSchema.safeParse(value);
    if (error !== undefined || !parsed.success) log.problem('D-DATA-RECORD-INVALID', 'modules', key, why(error, parsed.error, 'module'));
    else if (parsed.data.digest !== key)
      log.problem('D-DATA-RECORD-INVALID', 'modules', key, `the record carries the digest ${parsed.data.digest}`);
    else if (!db.blobs.doesExist(parsed.data.blob))
      log.problem('D-DATA-REFERENCE', 'modules', key, `its bytes, blob ${parsed.data.blob}, are not in blobs`);
  }
  for (const { key, value, error } of walk(db.meta)) {
    log.saw('meta');
    if (error !== undefined) log.problem('D-DATA-RECORD-INVALID', 'meta', key, error);
    else if (key === 'last_created_at' && !Number.isInteger(value))
      log.problem('D-DATA-RECORD-INVALID', 'meta', key, 'it is not an integer');
  }
  let dead = 0;
  for (const { key, value, error } of walk(db.pending)) {
    log.saw('pending_writes');
    if (!Array.isArray(key) || key[1] !== PENDING_HEADER) continue;
    const parsed = PendingRecordSchema.safeParse(value);
    if (error !== undefined || !parsed.success)
      log.problem('D-DATA-RECORD-INVALID', 'pending_writes', key, why(error, parsed.error, 'pending write'));
    else if (!isLiveWriter(parsed.data.owner)) dead++;
  }
  if (dead > 0)
    log.notes.push(
      `${dead} pending write${dead === 1 ? '' : 's'} of a process that died hold chunks no artifact uses: \`helix gc\` reclaims them.`,
    );
  const unknown = [...storeHandle(store).root.getKeys()].map(String).filter((name) => !KNOWN_DATABASES.includes(name));
  if (unknown.length > 0) log.notes.push(`databases this version does not know were not checked: ${unknown.join(', ')}`);
}

/** Checks every record database (everything but the bytes of chunks and blobs). */
export function checkRecords(store: Store, log: CheckLog): void {
  checkArtifacts(store, log);
  checkRuns(store, log);
  checkRunKeyed(store, log, 'run_events');
  checkRunKeyed(store, log, 'run_journal');
  checkTexts(store, log, 'param_sets');
  checkTexts(store, log, 'policies');
  checkTheRest(store, log);
}
