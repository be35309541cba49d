// The isolation category, in the report's order. Nothing a call leaves behind may reach another
// call: not its memory, globals, table edits, dropped segments or Extism variables, not what
// concurrent calls hold, not another tool's keys, and not a run's output before (or unless) that
// run ends well.
import type { Check } from '../../check.js';
import { betweenCallChecks } from './between-calls.js';
import { betweenToolChecks } from './between-tools.js';

/** The isolation checks. */
export const isolationChecks: readonly Check[] = [...betweenCallChecks, ...betweenToolChecks];
