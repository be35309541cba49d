// Conformance checks: artifacts.
import type { Check } from '../check.js';

export const artifactChecks: readonly Check[] = [];
