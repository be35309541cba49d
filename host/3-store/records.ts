// Checked reads of the store: every record read back from LMDB is decoded and parsed here against
// its schema, so damage is one D-DATA error naming the database, the key and what is wrong, never
// a raw ZodError, a decoder's exception or an LMDB stack trace. `helix store check` walks with it.
import { z } from 'zod';
import {
  ARTIFACT_ID_PATTERN,
  ArtifactRecordSchema,
  HelixError,
  JournalEntrySchema,
  RUN_ID_PATTERN,
  RunEventSchema,
  RunRecordSchema,
  SHA256_PATTERN,
} from '../../abi/index.js';
import { sha256Digest } from '../1-base/hashing.js';
import { STORE_DATABASES, type StoreDatabaseName, type StoreDatabases } from './databases.js';
import { storeHandle, type Store } from './handle.js';
import { PendingRecordSchema } from './pending.js';

/** A blob record: its size and the hash of each chunk. */
export const BlobRecordSchema = z.strictObject({ size: z.number().int().min(0), chunks: z.array(z.string().regex(SHA256_PATTERN)) });

/** The metadata of a module loaded into the store (host/3-store/modules.ts writes it). */
export const ModuleRecordSchema = z.looseObject({
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  blob: z.string().regex(SHA256_PATTERN),
  size: z.number().int().min(0),
  abi: z.string(),
  tools: z.array(z.string()),
  first_loaded_at: z.number().int(),
  last_loaded_at: z.number().int(),
});

/** The owner of a running run, as the active-run index keeps it. */
export const RunOwnerSchema = z.strictObject({ pid: z.number().int(), hostname: z.string(), started_at: z.number().int() });

/** Canonical JSON text (params, policies): it must parse. */
const CanonicalTextSchema = z.string().refine((text) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}, 'is not JSON text');

/** The schema of each database's values. */
export const RECORD_SCHEMAS = {
  chunks: z.instanceof(Uint8Array),
  blobs: BlobRecordSchema,
  artifacts: ArtifactRecordSchema,
  artifactsByTime: z.string().regex(ARTIFACT_ID_PATTERN),
  meta: z.unknown(),
  modules: ModuleRecordSchema,
  params: CanonicalTextSchema,
  policies: CanonicalTextSchema,
  runs: RunRecordSchema,
  activeRuns: RunOwnerSchema,
  runEvents: RunEventSchema,
  journal: JournalEntrySchema,
  audit: z.looseObject({ kind: z.string().min(1), at: z.number() }),
  kv: z.unknown(),
  checkpoints: z.looseObject({}),
  idempotency: z.string().regex(RUN_ID_PATTERN),
  // A pending write's header, or the mark of a chunk it relies on.
  pending: z.union([PendingRecordSchema, z.literal(true)]),
  // Sealed entries, checked by load-cache.ts: a damaged one is rebuilt, not an error.
  loadCache: z.unknown(),
} satisfies Record<StoreDatabaseName, z.ZodType>;

/** The key type of a database. */
export type RecordKey<N extends StoreDatabaseName> = Parameters<StoreDatabases[N]['get']>[0];
/** The checked value type of a database. */
export type RecordValue<N extends StoreDatabaseName> = z.output<(typeof RECORD_SCHEMAS)[N]>;

/** What a record must agree with besides its schema: the key it is stored under. */
const KEY_CHECKS: { readonly [N in StoreDatabaseName]?: (key: RecordKey<N>, value: RecordValue<N>) => string | undefined } = {
  runs: (key, run) => (run.run_id === key ? undefined : `it carries the run id ${run.run_id}`),
  artifacts: (key, a) => (a.id === key ? undefined : `it carries the artifact id ${a.id}`),
  journal: (key, e) => (e.seq === key[1] ? undefined : `it carries seq ${e.seq}`),
  modules: (key, m) => (m.digest === key ? undefined : `it carries the digest ${m.digest}`),
  artifactsByTime: (key, id) => (id === key[1] ? undefined : `it points at ${id}`),
};

/** Keys as people read them: strings as they are, arrays as JSON. */
export function describeKey(key: unknown): string {
  return typeof key === 'string' ? key : JSON.stringify(key);
}

/** The D-DATA-RECORD-INVALID error for the record under `key` in database `db`. */
export function invalidRecord(db: StoreDatabaseName, key: unknown, problem: string, violations: readonly string[] = []): HelixError {
  const database = STORE_DATABASES[db].name;
  return new HelixError('D-DATA-RECORD-INVALID', {
    message: `The record ${describeKey(key)} in the store's ${database} database is damaged: ${problem}.`,
    details: { database, key: describeKey(key), problem, violations: [...violations] },
  });
}

/** An exception LMDB or the decoder raised while reading `key`, as the D-DATA error it means. */
export function readFailure(db: StoreDatabaseName, key: unknown, err: unknown): HelixError {
  if (err instanceof HelixError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const database = STORE_DATABASES[db].name;
  const details = { database, key: describeKey(key), lmdb: message };
  if (/MDB_(CORRUPTED|PAGE_NOTFOUND|INVALID)/.test(message)) {
    return new HelixError('D-DATA-STORE-DAMAGED', {
      message: `LMDB cannot read ${describeKey(key)} in the store's ${database} database: ${message}.`,
      details,
      cause: err,
    });
  }
  // Any other LMDB refusal (readers full, a bad slot) is the store being unusable, not damage.
  if (/MDB_[A-Z_]+/.test(message))
    return new HelixError('P-PRECOND-STORE', {
      message: `LMDB refused to read ${describeKey(key)} in the store's ${database} database: ${message}.`,
      details,
      cause: err,
    });
  return invalidRecord(db, key, `it cannot be decoded (${message})`);
}

/** Parses a value read under `key`; throws D-DATA-RECORD-INVALID (or D-DATA-CHECKSUM) when it is damaged. */
export function checkRecord<N extends StoreDatabaseName>(db: N, key: RecordKey<N>, raw: unknown): RecordValue<N> {
  const parsed = RECORD_SCHEMAS[db].safeParse(raw);
  if (!parsed.success) {
    throw invalidRecord(
      db,
      key,
      `it does not match the ${STORE_DATABASES[db].name} record schema`,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`),
    );
  }
  const value = parsed.data as RecordValue<N>;
  const mismatch = (KEY_CHECKS[db] as ((k: RecordKey<N>, v: RecordValue<N>) => string | undefined) | undefined)?.(key, value);
  if (mismatch !== undefined) throw invalidRecord(db, key, mismatch);
  if ((db === 'params' || db === 'policies') && /^sha256:[0-9a-f]{64}$/.test(key as string) && sha256Digest(value as string) !== key) {
    // The text is what the hash in a run id stands for: changed text is changed bytes.
    throw new HelixError('D-DATA-CHECKSUM', {
      message: `The stored ${db} text for ${key as string} does not match its hash.`,
      details: { database: STORE_DATABASES[db].name, key, actual: sha256Digest(value as string) },
    });
  }
  return value;
}

/** Reads and checks one record; undefined when there is none. */
export function readRecord<N extends StoreDatabaseName>(store: Store, db: N, key: RecordKey<N>): RecordValue<N> | undefined {
  let raw: unknown;
  try {
    raw = (storeHandle(store).db[db] as Database).get(key);
  } catch (err) {
    throw readFailure(db, key, err);
  }
  return raw === undefined ? undefined : checkRecord(db, key, raw);
}

/** A key range of a database, as lmdb-js takes it. */
export interface RecordRange<K> {
  readonly start?: K;
  readonly end?: K;
  readonly reverse?: boolean;
  readonly limit?: number;
}

/**
 * The records of a key range, checked, in key order. Keys are listed first and each record read
 * by its key, so a record that cannot be decoded is named by its key.
 */
export function* readRange<N extends StoreDatabaseName>(
  store: Store,
  db: N,
  range: RecordRange<RecordKey<N>> = {},
): Generator<{ key: RecordKey<N>; value: RecordValue<N> }> {
  const keys = (storeHandle(store).db[db] as Database).getKeys(range)[Symbol.iterator]();
  let last: unknown = '(the start)';
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = keys.next();
    } catch (err) {
      throw readFailure(db, `the key after ${describeKey(last)}`, err);
    }
    if (next.done === true) return;
    last = next.value;
    const key = next.value as RecordKey<N>;
    const value = readRecord(store, db, key);
    // A record removed since its key was listed (another process committed) is simply gone.
    if (value !== undefined) yield { key, value };
  }
}

/** The part of an lmdb-js database these reads use, whatever its key and value types. */
interface Database {
  get(key: unknown): unknown;
  getKeys(range: object): Iterable<unknown>;
}
