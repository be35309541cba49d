// The decisions category, in the report's order: host decisions a guest tries to catch. Guests that
// use WebAssembly exception handling around a refused or aborted capability call, fuel running out,
// a stack overflow or their deadline, that call the broker from where no call may be made, or that
// throw their own exceptions: the first decision is the outcome, nothing after it is served,
// journaled or audited, and the host serves on.
import type { Check } from '../../check.js';
import { caughtDecisionChecks } from './caught-decisions.js';
import { forbiddenCallChecks } from './forbidden-calls.js';
import { uncatchableChecks } from './uncatchable.js';

/** The decisions checks. */
export const decisionChecks: readonly Check[] = [...caughtDecisionChecks, ...forbiddenCallChecks, ...uncatchableChecks];
