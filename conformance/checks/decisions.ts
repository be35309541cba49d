// Conformance checks: decisions.
import type { Check } from '../check.js';

export const decisionChecks: readonly Check[] = [];
