// A run's capability journal in the store: each entry under [run id, seq], hash-chained from a
// genesis hash, so any later edit of an entry is detected (by helix verify and helix store check).
// The broker builds the chain as calls happen (host/4-calls/broker/journal.ts); this is its stored form.
import { createHash } from 'node:crypto';
import type { JournalEntry } from '../../abi/index.js';
import { canonicalJson } from '../1-base/hashing.js';
import { storeHandle } from './handle.js';
import type { Store } from './open-store.js';
import { readRange } from './records.js';

/** The hash a chain starts from. */
export const JOURNAL_GENESIS = '0'.repeat(64);

/** sha256 hex of bytes or text. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The hash of an entry: previous hash plus the canonical entry without its own hash. */
export function entryHash(prev: string, entry: Omit<JournalEntry, 'hash'>): string {
  return sha256Hex(`${prev}\n${canonicalJson(entry)}`);
}

/** Replaces a run's journal; call inside the transaction that finishes the run. */
export function writeJournal(store: Store, runId: string, entries: readonly JournalEntry[]): void {
  const { journal } = storeHandle(store).db;
  for (const key of journal.getKeys({ start: [runId, 0], end: [runId, Number.MAX_SAFE_INTEGER] })) journal.remove(key);
  for (const e of entries) journal.put([runId, e.seq], e as unknown as Record<string, unknown>);
}

/** A run's journal as stored (each entry parsed by the checked reads; the chain not yet checked). */
export function readJournal(store: Store, runId: string): JournalEntry[] {
  return [...readRange(store, 'journal', { start: [runId, 0], end: [runId, Number.MAX_SAFE_INTEGER] })].map((e) => e.value);
}

/** The first entry whose hash does not follow from the chain, or undefined when the chain holds. */
export function brokenLink(entries: readonly JournalEntry[], head: string | null): { seq: number; reason: string } | undefined {
  let prev = JOURNAL_GENESIS;
  for (const [i, e] of entries.entries()) {
    if (e.seq !== i) return { seq: i, reason: `entry ${i} carries seq ${e.seq}` };
    const { hash, ...body } = e;
    if (entryHash(prev, body) !== hash) return { seq: i, reason: `entry ${i} does not match its hash` };
    prev = hash;
  }
  const last = entries.length === 0 ? null : prev;
  if (last !== head) return { seq: entries.length, reason: `the chain ends at ${last ?? 'nothing'}, the run records ${head ?? 'nothing'}` };
  return undefined;
}
