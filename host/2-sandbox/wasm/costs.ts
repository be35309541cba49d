// The names the instrumenter adds to a module and the units of its dynamic fuel charges; the
// host's sandbox reads the same constants, so both sides agree on them.

/** Export name of the mutable i64 fuel counter: the host sets it before a call and reads it after. */
export const FUEL_EXPORT = '__helix_fuel';

/** Export name of the module's former start function, which the host calls after setting fuel. */
export const START_EXPORT = '__helix_start';

/** Prefix of the exports of mutable defined globals; the global's index follows. */
export const GLOBAL_EXPORT_PREFIX = '__helix_g';

/** Export names starting with this belong to the host; a module may not use them itself. */
export const RESERVED_EXPORT_PREFIX = '__helix_';

/**
 * Units of the dynamic charges. Every other instruction costs 1 unit (a few structural ones 0),
 * as in wasmtime's fuel model; these make bulk operations cost in proportion to their size.
 */
export const COSTS = {
  /** memory.fill, memory.copy and memory.init cost one unit per this many bytes. */
  bulkBytesPerUnit: 64,
  /** memory.grow costs this many units per 64 KiB page requested. */
  growPageUnits: 1024,
  /** table.grow, table.fill, table.copy and table.init cost this many units per element. */
  tableElemUnits: 1,
} as const;
