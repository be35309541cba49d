// ABI constants of helix/v1: export and import names, signatures, page size, reserved names.
// ABI.md is the normative text; these values are what the host and conformance suite check.

/** The ABI identifiers a manifest may declare in its `abi` field. */
export const ABI_IDS = ['helix/v1', 'extism/v1'] as const;
export type AbiId = (typeof ABI_IDS)[number];

/** The capability envelope version (`abi_version` in capability calls and results). */
export const CAPABILITY_ABI_VERSION = 1 as const;

/** Size of one WebAssembly linear memory page, in bytes. */
export const WASM_PAGE_BYTES = 65_536;

/** The only import module a helix/v1 guest may use, and its only function. */
export const HOST_IMPORT_MODULE = 'helix_v1';
export const HOST_IMPORT_CAPABILITY_CALL = 'capability_call';

/** A wasm function signature as value type names. */
export interface Signature {
  readonly params: readonly string[];
  readonly results: readonly string[];
}

/** Required exports of a helix/v1 module and their exact signatures (ABI-EXPORT-001..004). */
export const REQUIRED_FUNCTION_EXPORTS: Readonly<Record<string, Signature>> = {
  alloc: { params: ['i32'], results: ['i32'] },
  dealloc: { params: ['i32', 'i32'], results: [] },
  execute: { params: ['i32', 'i32'], results: ['i64'] },
};

/** The memory export every helix/v1 module must have. */
export const MEMORY_EXPORT = 'memory';

/** Optional export: packed ptr/len of the last panic message, read after a trap (ABI-EXPORT-006). */
export const PANIC_EXPORT = 'helix_panic';
export const PANIC_EXPORT_SIGNATURE: Signature = { params: [], results: ['i64'] };

/** Signature of `helix_v1.capability_call` (ABI-IMPORT-002). */
export const CAPABILITY_CALL_SIGNATURE: Signature = { params: ['i32', 'i32'], results: ['i64'] };

/** Export names starting with this prefix are reserved for the host's instrumentation (ABI-EXPORT-007). */
export const RESERVED_EXPORT_PREFIX = '__helix_';

/** Most bytes of a panic message the host copies out of a trapped guest. */
export const PANIC_MESSAGE_MAX_BYTES = 1024;

/** The entry function name of a helix/v1 module when the manifest names none. */
export const DEFAULT_ENTRYPOINT = 'execute';

/**
 * Most elements the tables a module defines may hold together, at instantiation and after any
 * `table.grow` (ABI-ALLOC-001..003). A funcref element costs V8 about 27 bytes declared and up
 * to about 56 bytes grown, so this bounds one instance's tables to about 60 MiB.
 */
export const MAX_TABLE_ELEMENTS = 1_048_576;

/** Largest module, in bytes, the loader decodes, instruments and compiles (ABI-ALLOC-005). */
export const MAX_MODULE_BYTES = 33_554_432;
