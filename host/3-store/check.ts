// `helix store check` (ABI-STORE-060..066): walks every database of the store, re-hashes every
// chunk and every blob, parses every record and follows every reference, and reports each
// problem as a D-DATA code naming the database and the key. Read-only; memory stays bounded
// (one chunk, one record, one run's journal at a time; the first problems listed, all counted).
import { createHash } from 'node:crypto';
import { SHA256_PATTERN } from '../../abi/index.js';
import { CheckLog, type CheckReport } from './check-log.js';
import { checkRecords, KNOWN_DATABASES } from './check-records.js';
import { CHUNK_BYTES } from './blobs.js';
import { storeHandle, type Store } from './handle.js';
import { BlobRecordSchema } from './records.js';
import { walk } from './walk.js';

export { CheckLog, MAX_LISTED_PROBLEMS, type CheckReport, type ProblemCode, type StoreProblem } from './check-log.js';

const hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** Every chunk's bytes against its key. */
function checkChunks(store: Store, log: CheckLog): void {
  const { db } = storeHandle(store);
  for (const key of db.chunks.getKeys()) {
    log.saw('chunks');
    if (!SHA256_PATTERN.test(String(key))) {
      log.problem('D-DATA-RECORD-INVALID', 'chunks', key, 'the key is not a sha256 digest');
      continue;
    }
    const bytes = db.chunks.get(key);
    if (bytes === undefined) continue;
    log.bytesHashed += bytes.length;
    if (hex(bytes) !== key) log.problem('D-DATA-CHECKSUM', 'chunks', key, `the chunk's ${bytes.length} bytes do not hash to its key`);
  }
}

/** Every blob: its record, each chunk present and sized, the concatenation against its key and size. */
function checkBlobs(store: Store, log: CheckLog): void {
  const { db } = storeHandle(store);
  for (const { key, value, error } of walk(db.blobs)) {
    log.saw('blobs');
    const parsed = BlobRecordSchema.safeParse(value);
    if (error !== undefined || !parsed.success || !SHA256_PATTERN.test(key)) {
      log.problem(
        'D-DATA-RECORD-INVALID',
        'blobs',
        key,
        error ??
          (parsed.success
            ? 'the key is not a sha256 digest'
            : `the record does not match the blob schema: ${parsed.error.issues[0]!.message}`),
      );
      continue;
    }
    const whole = createHash('sha256');
    let size = 0;
    let complete = true;
    for (const [i, chunk] of parsed.data.chunks.entries()) {
      const bytes = db.chunks.get(chunk);
      if (bytes === undefined) {
        log.problem('D-DATA-REFERENCE', 'blobs', key, `chunk ${i} (${chunk}) is not in chunks`);
        complete = false;
        break;
      }
      if (i < parsed.data.chunks.length - 1 && bytes.length !== CHUNK_BYTES)
        log.problem('D-DATA-RECORD-INVALID', 'blobs', key, `chunk ${i} holds ${bytes.length} bytes, not ${CHUNK_BYTES}`);
      whole.update(bytes);
      size += bytes.length;
    }
    if (!complete) continue;
    log.bytesHashed += size;
    if (size !== parsed.data.size)
      log.problem('D-DATA-CHECKSUM', 'blobs', key, `its chunks hold ${size} bytes, the record says ${parsed.data.size}`);
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
  return {
    ok: log.count === 0,
    checked: log.checked,
    bytes_hashed: log.bytesHashed,
    problems: log.problems,
    problem_count: log.count,
    notes: log.notes,
  };
}
