// Conformance checks: secrets.
import type { Check } from '../check.js';

export const secretChecks: readonly Check[] = [];
