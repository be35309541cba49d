// The load cache (ABI-LOAD-008): what the toolpack loader worked out once and need not work out
// again at every start, keyed by what it depends on: a module instrumented for a memory cap by
// one instrumenter, a schema that passed the JSON Schema check. Each entry is sealed (a sha256
// over its key, its facts and the hash of its bytes), so a damaged entry is found and rebuilt,
// never used; it is a cache: dropping it costs time, not data.
import { canonicalJson, sha256Digest } from '../1-base/hashing.js';
import { appendAudit } from './audit.js';
import { storeHandle, type Store } from './handle.js';

/** What an entry holds: JSON facts, and bytes (an instrumented module) when it has them. */
export interface LoadCacheEntry {
  readonly facts: unknown;
  readonly bytes?: Uint8Array;
  /** `sha256:<hex>` of `bytes`; the reader checks it before using them. */
  readonly bytesDigest?: string;
}

interface StoredEntry {
  readonly seal: string;
  readonly facts: unknown;
  readonly bytes?: Uint8Array;
  readonly bytesDigest?: string;
}

function sealOf(key: string, facts: unknown, bytesDigest: string | undefined): string {
  return sha256Digest(canonicalJson({ key, facts, bytes: bytesDigest ?? null }));
}

/**
 * The entry under `key` when its seal holds, else undefined (absent, or damaged: the caller
 * works it out again and writes it back). The bytes are not hashed here: the reader hashes them
 * when it uses them (a module is compiled only on its first call), against `bytesDigest`.
 */
export function readLoadCache(store: Store, key: string): LoadCacheEntry | undefined {
  let raw: unknown;
  try {
    raw = storeHandle(store).db.loadCache.get(key);
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const e = raw as Partial<StoredEntry>;
  const digest = typeof e.bytesDigest === 'string' ? e.bytesDigest : undefined;
  if (typeof e.seal !== 'string' || e.seal !== sealOf(key, e.facts, digest)) return undefined;
  if ((digest === undefined) !== (e.bytes === undefined) || (e.bytes !== undefined && !(e.bytes instanceof Uint8Array))) return undefined;
  return { facts: e.facts, ...(e.bytes === undefined ? {} : { bytes: e.bytes, bytesDigest: digest! }) };
}

/**
 * Writes entries (one transaction); `rebuilt` names the keys whose entry was found damaged, for
 * the audit trail (`store.load_cache_rebuilt`).
 */
export async function writeLoadCache(
  store: Store,
  entries: ReadonlyArray<{ key: string; facts: unknown; bytes?: Uint8Array; problem?: string }>,
  now: number,
): Promise<void> {
  if (entries.length === 0) return;
  const stored = entries.map((e) => {
    const bytesDigest = e.bytes === undefined ? undefined : sha256Digest(e.bytes);
    const value: StoredEntry = {
      seal: sealOf(e.key, e.facts, bytesDigest),
      facts: e.facts,
      ...(e.bytes === undefined ? {} : { bytes: e.bytes, bytesDigest }),
    };
    return { key: e.key, value, problem: e.problem };
  });
  await store.transaction(() => {
    for (const { key, value, problem } of stored) {
      storeHandle(store).db.loadCache.put(key, value);
      if (problem !== undefined) appendAudit(store, now, { kind: 'store.load_cache_rebuilt', key, problem });
    }
  });
}
