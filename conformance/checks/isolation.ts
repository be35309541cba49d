// Conformance checks: isolation.
import type { Check } from '../check.js';

export const isolationChecks: readonly Check[] = [];
