// The audit trail: one record per decision that an operator may have to account for (a run the
// policy blocked; capability decisions once the broker lands). Append-only, keyed so that
// records from concurrent processes never collide and read back in time order.
import { storeHandle, type Store } from './handle.js';
import { readRange } from './records.js';

let counter = 0;

/** An audit record; never holds a secret value. */
export interface AuditRecord {
  readonly kind: string;
  readonly [field: string]: unknown;
}

/** An audit record and when it was made, waiting to be written with its run (ABI-STORE-037). */
export interface AuditEntry {
  readonly at: number;
  readonly record: AuditRecord;
}

/** Appends a record at `at`; call inside a transaction to tie it to the change it explains. */
export function appendAudit(store: Store, at: number, record: AuditRecord): void {
  counter = (counter + 1) % 1_000_000_000;
  storeHandle(store).db.audit.put([at, process.pid, counter], { ...record, at });
}

/** Audit records in time order, optionally from `since` (ms). */
export function readAudit(store: Store, since = 0): Array<AuditRecord & { at: number }> {
  return [...storeHandle(store).db.audit.getRange({ start: [since] })].map((e) => e.value as AuditRecord & { at: number });
}

/** Audit records from `since` up to (not including) `until` (ms), checked, in time order. */
export function readAuditBetween(store: Store, since: number, until: number): Array<AuditRecord & { at: number }> {
  return [...readRange(store, 'audit', { start: [since], end: [until] })].map((e) => e.value);
}
