// Conformance checks: io.
import type { Check } from '../check.js';

export const ioChecks: readonly Check[] = [];
