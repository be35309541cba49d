// The cpu category, in the report's order. A guest that never stops must be stopped by fuel or the
// deadline, whatever shape of code it hides its loop in; fuel follows the cost model exactly and is
// the same for the same call; budgets that grow with the data grow as the manifest says and stop
// at the policy's ceilings; input and output past their bounds are refused.
import type { Check } from '../../check.js';
import { budgetChecks } from './budgets.js';
import { costModelChecks } from './cost-model.js';
import { deadlineChecks } from './deadlines.js';
import { escapeChecks } from './escapes.js';
import { fuelAccountingChecks } from './fuel-accounting.js';

/** The cpu checks. */
export const cpuChecks: readonly Check[] = [
  ...escapeChecks,
  ...costModelChecks,
  ...deadlineChecks,
  ...fuelAccountingChecks,
  ...budgetChecks,
];
