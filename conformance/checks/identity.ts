// Conformance checks: identity.
import type { Check } from '../check.js';

export const identityChecks: readonly Check[] = [];
