// The secrets category, in the report's order. A guest granted one secret
// (conformance/assembly/secret-paths.ts) tries to get it, raw and in every covered encoding
// (ABI-SECRET-002), into each place the host keeps or shows: kv keys and values, artifact pieces and
// labels, log lines, the output, its error message, capability names and arguments, the journal,
// the audit trail, the run record, `helix runs show` and an RO-Crate export. After each check every
// file of the check's Helix home (the LMDB file included) and every exported file is searched.
import type { Check } from '../../check.js';
import { keyAndExportChecks } from './keys-and-exports.js';
import { runRecordChecks } from './run-records.js';
import { storedDataChecks } from './stored-data.js';

/** The secret checks. */
export const secretChecks: readonly Check[] = [...storedDataChecks, ...runRecordChecks, ...keyAndExportChecks];
