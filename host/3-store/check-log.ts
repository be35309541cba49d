// What `helix store check` reports, and the log that collects it as the walk goes (check.ts
// walks chunks and blobs, check-records.ts every other record).
import { keyText } from './walk.js';

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
