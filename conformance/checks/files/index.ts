// The files category, in the report's order: toolpack and policy files. Loading reads only what
// belongs to the toolpack, only regular files, within size, depth and alias bounds, as JSON data;
// every refusal names the reference as written and the rule, and quotes nothing from outside
// (ABI-FILE-001..013).
import type { Check } from '../../check.js';
import { boundChecks } from './bounds.js';
import { commandChecks } from './commands.js';
import { referenceChecks } from './references.js';

/** The file checks. */
export const fileChecks: readonly Check[] = [...referenceChecks, ...boundChecks, ...commandChecks];
