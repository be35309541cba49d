// The memory category, in the report's order. What a module can make the host allocate (linear
// memory, tables, module bytes, declared counts, compiled variants and kept instances) must stay
// within the ABI's bounds, whether the module declares it up front, grows into it or asks per request.
import type { Check } from '../../check.js';
import { decodeLimitChecks } from './decode-limits.js';
import { linearMemoryChecks } from './linear-memory.js';
import { moduleSizeChecks } from './module-size.js';
import { tableChecks } from './tables.js';
import { variantChecks } from './variants.js';

/** The memory checks. */
export const memoryChecks: readonly Check[] = [
  ...linearMemoryChecks,
  ...moduleSizeChecks,
  ...tableChecks,
  ...decodeLimitChecks,
  ...variantChecks,
];
