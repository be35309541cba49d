// Conformance checks: fuzz.
import type { Check } from '../check.js';

export const fuzzChecks: readonly Check[] = [];
