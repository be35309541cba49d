// The engine's implementation limits on entry counts (V8's, as in Node 20). The decoder refuses a
// count above one before reading the entries, so a module cannot make the host decode, keep and
// instrument millions of entries that the engine would refuse anyway (ABI-ALLOC-006).

import type { Reader } from './reader.js';

/** Most entries of each kind a module may have, imports included; V8 refuses more. */
export const ENGINE_LIMITS = {
  types: 1_000_000,
  functions: 1_000_000,
  imports: 100_000,
  exports: 100_000,
  globals: 1_000_000,
  tables: 100_000,
  memories: 100_000,
  locals: 50_000,
} as const;

/**
 * Reads a section's entry count; `have` entries of the kind are already known (imported ones),
 * and a total past the engine's limit is refused at the count's offset.
 */
export function readCount(r: Reader, kind: keyof typeof ENGINE_LIMITS, have = 0): number {
  const at = r.pos;
  const count = r.u32();
  const limit = ENGINE_LIMITS[kind];
  if (have + count > limit) r.fail(`${have + count} ${kind}, more than the engine's limit of ${limit}`, at);
  return count;
}
