// Conformance checks: privileged.
import type { Check } from '../check.js';

export const privilegedChecks: readonly Check[] = [];
