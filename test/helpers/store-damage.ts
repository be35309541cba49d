// Damages a real store the way a failing disk or a careless operator would: a record's stored
// bytes, a chunk's bytes, the file header. Through a raw (binary) view of the same LMDB database,
// so what Helix reads back is exactly the damaged bytes.
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { openStore } from '../../host/3-store/open-store.js';
import { rawDatabases, rawRoot } from '../../host/3-store/raw-access.js';

/** LMDB names of the databases the tests damage (as host/3-store/open-store.ts opens them). */
const NAMES = { runs: 'runs', artifacts: 'artifacts', blobs: 'blobs', journal: 'run_journal', runEvents: 'run_events', kv: 'kv' } as const;

/** The store file under a Helix home. */
export const storeFile = (home: string): string => path.join(home, 'helix.mdb');

/** MessagePack that cannot be decoded: a string header announcing 25 bytes, followed by 3. */
export const UNDECODABLE = Buffer.from([0xd9, 0x19, 0x61, 0x62, 0x63]);

/** Replaces the stored bytes of `key` in `db` under `home` with `bytes`. */
export async function damageRecord(
  home: string,
  db: keyof typeof NAMES,
  key: string | unknown[],
  bytes: Buffer = UNDECODABLE,
): Promise<void> {
  const store = openStore(home);
  try {
    const raw = rawRoot(store).openDB({ name: NAMES[db], encoding: 'binary' });
    if (raw.get(key as string) === undefined) throw new Error(`no record ${JSON.stringify(key)} in ${db} to damage`);
    raw.putSync(key as string, bytes);
  } finally {
    await store.close();
  }
}

/** Flips a byte in every stored chunk of the blob `sha256` under `home`. */
export async function damageBlob(home: string, sha256: string): Promise<void> {
  const store = openStore(home);
  try {
    const record = rawDatabases(store).blobs.get(sha256);
    if (record === undefined) throw new Error(`no blob ${sha256} to damage`);
    for (const key of record.chunks) {
      const bytes = Buffer.from(rawDatabases(store).chunks.get(key) as Uint8Array);
      bytes[0] = bytes[0]! ^ 0xff;
      rawDatabases(store).chunks.putSync(key, bytes);
    }
  } finally {
    await store.close();
  }
}

/** Overwrites the LMDB magic number of the first meta page of the store file under `home`. */
export function damageHeader(home: string): void {
  const fd = openSync(storeFile(home), 'r+');
  try {
    writeSync(fd, Buffer.from([0, 0, 0, 0]), 0, 4, 24);
  } finally {
    closeSync(fd);
  }
}

/** Whether stderr shows a stack trace or a raw validation dump instead of a clean error. */
export function looksRaw(stderr: string): boolean {
  return /\n\s+at .+[:(]/.test(stderr) || /ZodError|"code":\s*"invalid_/.test(stderr) || /internal error/.test(stderr);
}
