// Conformance checks: store.
import type { Check } from '../check.js';

export const storeChecks: readonly Check[] = [];
