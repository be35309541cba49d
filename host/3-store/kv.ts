// The kv capability's records: values under [tool id, key], so a tool's keys never leave its own
// namespace. Each write is its own transaction; reads are checked like every other record.
import { storeHandle, type Store } from './handle.js';
import { readRecord } from './records.js';

/** The value under `key` in the tool's namespace, or undefined when there is none. */
export function kvGet(store: Store, toolId: string, key: string): unknown {
  return readRecord(store, 'kv', [toolId, key]);
}

/** Stores `value` under `key` in the tool's namespace, committed when the promise resolves. */
export async function kvPut(store: Store, toolId: string, key: string, value: unknown): Promise<void> {
  await storeHandle(store).db.kv.put([toolId, key], value);
}

/** Removes `key` from the tool's namespace; whether it was there. */
export async function kvDelete(store: Store, toolId: string, key: string): Promise<boolean> {
  const { kv } = storeHandle(store).db;
  // lmdb's async remove() resolves true whether or not the key was there; the synchronous
  // removeSync inside a transaction reports whether it removed something.
  return kv.transaction(() => kv.removeSync([toolId, key]));
}

/** The keys of the tool's namespace that start with `prefix`, in key order, at most `limit`. */
export function kvKeys(store: Store, toolId: string, prefix: string, limit?: number): string[] {
  const keys: string[] = [];
  for (const [, key] of storeHandle(store).db.kv.getKeys({ start: [toolId, prefix], end: [toolId, `${prefix}\uffff`], limit }))
    keys.push(key);
  return keys;
}
