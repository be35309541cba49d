// Conformance checks: memory.
import type { Check } from '../check.js';

export const memoryChecks: readonly Check[] = [];
