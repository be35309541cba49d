// ABI constants of helix/v1: export and import names, signatures, page size, reserved names.
// ABI.md is the normative text; these values are what the host and conformance suite check.

/** The ABI identifiers a manifest may declare in its `abi` field. */
export const ABI_IDS = ['helix/v1', 'extism/v1'] as const;
export type AbiId = (typeof ABI_IDS)[number];

/** The capability envelope version a host writes when the guest named none (`abi_version` in capability calls and results). */
export const CAPABILITY_ABI_VERSION = 1 as const;

/** The capability ABI versions a manifest may declare and an envelope may carry: 2 adds the bulk import (ABI-BULK-001). */
export const CAPABILITY_ABI_VERSIONS = [1, 2] as const;
export type CapabilityAbiVersion = (typeof CAPABILITY_ABI_VERSIONS)[number];

/** The capability ABI version of the bulk path: the version of every answer through `capability_call_bulk`. */
export const BULK_ABI_VERSION = 2 as const;

/** Size of one WebAssembly linear memory page, in bytes. */
export const WASM_PAGE_BYTES = 65_536;

/** The only import module a helix/v1 guest may use, and its only function. */
export const HOST_IMPORT_MODULE = 'helix_v1';
export const HOST_IMPORT_CAPABILITY_CALL = 'capability_call';
/** The bulk import, allowed under capability ABI 2 only (ABI-IMPORT-001, ABI-BULK-001). */
export const HOST_IMPORT_CAPABILITY_CALL_BULK = 'capability_call_bulk';

/** Largest bulk buffer, in bytes: the most one bulk read copies in or one bulk write sends (ABI-BULK-003). */
export const BULK_MAX_PIECE = 4 * 1024 * 1024;

/** The capabilities served through `capability_call_bulk` (ABI-BULK-002). */
export const BULK_CAPABILITIES = ['artifact.read', 'artifact.write'] as const;

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

/** Signature of `helix_v1.capability_call_bulk`: request ptr/len, buffer ptr/len (ABI-IMPORT-002). */
export const CAPABILITY_CALL_BULK_SIGNATURE: Signature = { params: ['i32', 'i32', 'i32', 'i32'], results: ['i64'] };

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

/**
 * Most *variants* (a module instrumented and compiled for a memory cap other than its manifest's
 * own, which a request picks with `memory_mb_limit`) the engine keeps at once, across all modules
 * and both ABIs; the least recently used gives way (ABI-ALLOC-009). A variant of a small module
 * costs the host little (1,024 of a 5 KB module added under 52 MiB, the store's growth included):
 * the count bounds how many there are, the byte bound below what large ones cost.
 */
export const MAX_MODULE_VARIANTS = 32;

/**
 * Most instrumented bytes the variants kept may add up to (ABI-ALLOC-009): twice the largest
 * module. A variant costs the host about 2.5 times its instrumented size once its code has run
 * (a 3.8 MiB module: about 9 MiB), so this bounds what large modules can add to about 160 MiB.
 */
export const MAX_MODULE_VARIANT_BYTES = 67_108_864;

// Bounds of the files a host reads at load (ABI.md "Toolpack and policy files", ABI-FILE-*).
// Each size is checked with fstat before a byte is read, so a huge file costs nothing.

/** Largest `*.tool.yaml` manifest, in bytes (ABI-FILE-005). */
export const MANIFEST_MAX_BYTES = 1_048_576;

/** Largest schema file a `$ref` names, in bytes (ABI-FILE-005). */
export const SCHEMA_FILE_MAX_BYTES = 1_048_576;

/** Most bytes of schema files one toolpack's `$ref`s may load in total, each file counted once (ABI-FILE-006). */
export const SCHEMA_FILES_MAX_TOTAL_BYTES = 4_194_304;

/** Most distinct schema files one toolpack's `$ref`s may load (ABI-FILE-006). */
export const SCHEMA_FILES_MAX_COUNT = 256;

/** Largest file a policy's secret source names, in bytes (ABI-FILE-005): a regular file, never a FIFO or a device. */
export const SECRET_FILE_MAX_BYTES = 65_536;

/** Largest policy file, in bytes (ABI-FILE-005). */
export const POLICY_MAX_BYTES = 1_048_576;

/** Largest module file the loader reads, in bytes (ABI-FILE-005): the module bound itself, checked before reading. */
export const MODULE_FILE_MAX_BYTES = MAX_MODULE_BYTES;

/** Largest fixture file `helix test` reads, in bytes (ABI-FILE-011). */
export const FIXTURE_FILE_MAX_BYTES = 33_554_432;

/** Largest `@data/` file a fixture imports, in bytes (ABI-FILE-011). */
export const FIXTURE_DATA_MAX_BYTES = 268_435_456;

/** Deepest nesting of arrays and objects in a manifest, schema file or policy, aliases expanded (ABI-FILE-007). */
export const DOCUMENT_MAX_DEPTH = 64;

/** Most values (scalars, arrays and objects) in one such document with every alias expanded (ABI-FILE-008). */
export const DOCUMENT_MAX_NODES = 1_000_000;

/** Most YAML alias nodes (`*name`) in one manifest or policy; also yaml's `maxAliasCount` (ABI-FILE-008). */
export const YAML_MAX_ALIASES = 100;

/** Deepest directory level the plugins-directory walk descends to, the directory itself being 0 (ABI-FILE-010). */
export const PLUGINS_WALK_MAX_DEPTH = 16;
