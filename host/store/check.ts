// `helix store check` (ABI-STORE-060..066): walks every database of the store, re-hashes every
// chunk and every blob, parses every record and follows every reference, and reports each
// problem as a D-DATA code naming the database and the key. Read-only; memory stays bounded
// (one chunk, one record, one run's journal at a time; the first problems listed, all counted).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SHA256_PATTERN } from '../../abi/index.js';
import { checkRecords, KNOWN_DATABASES } from './check-records.js';
import { CHUNK_BYTES } from './blobs.js';
import type { Store } from './open-store.js';
import { BlobRecordSchema } from './records.js';
import { keyText, walk } from './walk.js';

/** The codes a check reports. */
export type ProblemCode = 'D-DATA-CHECKSUM' | 'D-DATA-RECORD-INVALID' | 'D-DATA-REFERENCE' | 'D-DATA-JOURNAL';

/** One problem: what is wrong, in which database, under which key. */
export interface StoreProblem {
  readonly code: ProblemCode;
  readonly database: string;
  readonly key: string;
  readonly message: string;
}

/** What a check found. */
export interface CheckReport {
  /** True when no problem was found. */
  readonly ok: boolean;
  /** Entries walked, per database. */
  readonly checked: Readonly<Record<string, number>>;
  /** Bytes re-hashed (chunks, then blobs as their chunks concatenated). */
  readonly bytes_hashed: number;
  /** The first MAX_LISTED problems, in the order found. */
  readonly problems: readonly StoreProblem[];
  /** Every problem found, listed or not. */
  readonly problem_count: number;
  /** Facts that are not damage, e.g. pending writes of dead processes left for gc. */
  readonly notes: readonly string[];
}

/** Problems listed in a report; beyond it they are only counted (bounded memory). */
export const MAX_LISTED_PROBLEMS = 1000;

/** Collects problems and counts as a check goes. */
export class CheckLog {
  readonly problems: StoreProblem[] = [];
  readonly checked: Record<string, number> = {};
  readonly notes: string[] = [];
  count = 0;
  bytesHashed = 0;

  /** Records a problem with `key` in `database`. */
  problem(code: ProblemCode, database: string, key: unknown, message: string): void {
    this.count++;
    if (this.problems.length < MAX_LISTED_PROBLEMS) this.problems.push({ code, database, key: keyText(key), message });
  }

  /** Counts one entry walked in `database`. */
  saw(database: string): void {
    this.checked[database] = (this.checked[database] ?? 0) + 1;
  }
}

const hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');


/** Every chunk's bytes against its key. */
function checkChunks(store: Store, log: CheckLog): void {
  for (const key of store.db.chunks.getKeys()) {
    log.saw('chunks');
    if (!SHA256_PATTERN.test(String(key))) {
      log.problem('D-DATA-RECORD-INVALID', 'chunks', key, 'the key is not a sha256 digest');
      continue;
    }
    const bytes = store.db.chunks.get(key);
    if (bytes === undefined) continue;
    log.bytesHashed += bytes.length;
    if (hex(bytes) !== key) log.problem('D-DATA-CHECKSUM', 'chunks', key, `the chunk's ${bytes.length} bytes do not hash to its key`);
  }
}

/** Every blob: its record, each chunk present and sized, the concatenation against its key and size. */
function checkBlobs(store: Store, log: CheckLog): void {
  for (const { key, value, error } of walk(store.db.blobs)) {
    log.saw('blobs');
    const parsed = BlobRecordSchema.safeParse(value);
    if (error !== undefined || !parsed.success || !SHA256_PATTERN.test(key)) {
      log.problem('D-DATA-RECORD-INVALID', 'blobs', key, error ?? (parsed.success ? 'the key is not a sha256 digest' : `the record does not match the blob schema: ${parsed.error.issues[0]!.message}`));
      continue;
    }
    const whole = createHash('sha256');
    let size = 0;
    let complete = true;
    for (const [i, chunk] of parsed.data.chunks.entries()) {
      const bytes = store.db.chunks.get(chunk);
      if (bytes === undefined) {
        log.problem('D-DATA-REFERENCE', 'blobs', key, `chunk ${i} (${chunk}) is not in chunks`);
        complete = false;
        break;
      }
      if (i < parsed.data.chunks.length - 1 && bytes.length !== CHUNK_BYTES) log.problem('D-DATA-RECORD-INVALID', 'blobs', key, `chunk ${i} holds ${bytes.length} bytes, not ${CHUNK_BYTES}`);
      whole.update(bytes);
      size += bytes.length;
    }
    if (!complete) continue;
    log.bytesHashed += size;
    if (size !== parsed.data.size) log.problem('D-DATA-CHECKSUM', 'blobs', key, `its chunks hold ${size} bytes, the record says ${parsed.data.size}`);
    else if (whole.digest('hex') !== key) log.problem('D-DATA-CHECKSUM', 'blobs', key, 'its chunks, concatenated, do not hash to its key');
  }
}

/**
 * Checks the whole store (ABI-STORE-060..065): chunks and blobs re-hashed, then every record of
 * every database parsed and its references followed. Never writes.
 */
export function checkStore(store: Store): CheckReport {
  const log = new CheckLog();
  for (const name of KNOWN_DATABASES) log.checked[name] = 0;
  checkChunks(store, log);
  checkBlobs(store, log);
  checkRecords(store, log);
  return { ok: log.count === 0, checked: log.checked, bytes_hashed: log.bytesHashed, problems: log.problems, problem_count: log.count, notes: log.notes };
}
