// Conformance checks: files.
import type { Check } from '../check.js';

export const fileChecks: readonly Check[] = [];
