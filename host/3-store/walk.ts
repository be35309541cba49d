// Walking a database entry by entry without trusting its bytes: a value that does not decode is
// reported with its key instead of ending the walk, so gc and store check can name it.
import type { Database, Key, RangeOptions } from 'lmdb';

/** One entry of a walk: its key and either its decoded value or why it does not decode. */
export type WalkEntry<K, V> =
  | { readonly key: K; readonly value: V; readonly error?: undefined }
  | { readonly key: K; readonly value?: undefined; readonly error: string };

/** Every entry of `db` (or of a range of it) in key order, one value in memory at a time. */
export function* walk<V, K extends Key>(db: Database<V, K>, range: RangeOptions = {}): Generator<WalkEntry<K, V>> {
  for (const key of db.getKeys(range)) {
    let entry: WalkEntry<K, V>;
    try {
      entry = { key, value: db.get(key) as V };
    } catch (err) {
      entry = { key, error: `its bytes do not decode (${err instanceof Error ? err.message : String(err)})` };
    }
    yield entry;
  }
}

/** A key as text for messages: arrays joined with `/`, strings as they are. */
export function keyText(key: unknown): string {
  if (Array.isArray(key)) return key.map((k) => String(k)).join('/');
  return String(key);
}

/** The decoded value under `key`, or undefined when it is absent or does not decode (walks report that). */
export function peek<V, K extends Key>(db: Database<V, K>, key: K): V | undefined {
  try {
    return db.get(key);
  } catch {
    return undefined;
  }
}
