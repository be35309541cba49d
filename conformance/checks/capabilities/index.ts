// The capabilities category, in the report's order. A guest asks the broker for what it was not
// given, sends it malformed envelopes, bad arguments, oversized payloads and storms of calls, calls
// from its start function, writes outputs it did not declare, and abuses the bulk path's buffers;
// the host answers each with the exact refusal the ABI names, records every call in a hash chain
// verify can replay, and goes on serving.
import type { Check } from '../../check.js';
import { allowlistChecks } from './allowlist.js';
import { bulkDataChecks } from './bulk-data.js';
import { bulkRuleChecks } from './bulk-rules.js';
import { ceilingChecks } from './ceilings.js';
import { requestChecks } from './requests.js';
import { runChecks } from './runs.js';

/** The capability checks. */
export const capabilityChecks: readonly Check[] = [
  ...allowlistChecks,
  ...requestChecks,
  ...ceilingChecks,
  ...runChecks,
  ...bulkRuleChecks,
  ...bulkDataChecks,
];
