// The capability journal of a run as the broker builds it: every call and its answer,
// hash-chained, so a run can be re-executed offline against it (helix verify). Its stored form
// and the chain check are host/3-store/journal.ts, re-exported here for the broker's callers.
import { JournalEntrySchema, type JournalEntry } from '../../../abi/index.js';
import { entryHash, JOURNAL_GENESIS } from '../../3-store/journal.js';

export { brokenLink, entryHash, JOURNAL_GENESIS, readJournal, sha256Hex, writeJournal } from '../../3-store/journal.js';

/** Builds a chain in memory as calls happen. */
export class JournalBuilder {
  readonly entries: JournalEntry[] = [];
  #head = JOURNAL_GENESIS;

  /** Appends an entry, computing its hash. */
  append(entry: Omit<JournalEntry, 'seq' | 'hash'>): JournalEntry {
    const body = { ...entry, seq: this.entries.length };
    const full = JournalEntrySchema.parse({ ...body, hash: entryHash(this.#head, body) });
    this.#head = full.hash;
    this.entries.push(full);
    return full;
  }

  /** The hash of the last entry, or null for an empty journal. */
  get head(): string | null {
    return this.entries.length === 0 ? null : this.#head;
  }
}
