// Conformance checks: capabilities.
import type { Check } from '../check.js';

export const capabilityChecks: readonly Check[] = [];
