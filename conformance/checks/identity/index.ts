// The identity category, in the report's order: run identity, replay and verify. A run's id holds
// everything that can change a call's outcome and nothing else: the same call replays its stored
// result, any change of input, limits, policy or contract is a new run, a descriptive edit replays,
// and a tampered run or journal is found by verify (ABI-RUNID-001..010).
import type { Check } from '../../check.js';
import { builtinAndKeyChecks } from './builtins-and-keys.js';
import { defaultChecks } from './defaults.js';
import { editChecks } from './edits.js';
import { recordChecks } from './records.js';
import { replayChecks } from './replay.js';

/** The identity checks. */
export const identityChecks: readonly Check[] = [...replayChecks, ...editChecks, ...builtinAndKeyChecks, ...defaultChecks, ...recordChecks];
