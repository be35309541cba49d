// Public shapes of the WebAssembly decoder and instrumenter: what a module imports, exports and
// declares, as the loader and engine need it to decide whether and how to run the module.

/**
 * A value type as text: a number or vector type, a shorthand reference type, or a typed
 * reference rendered like `(ref null 3)` or `(ref func)`.
 */
export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128' | 'funcref' | 'externref' | 'exnref' | string;

/** A function signature. */
export interface FuncType {
  params: ValType[];
  results: ValType[];
}

/** The kinds of entity a module can import or export. */
export type ExternKind = 'func' | 'table' | 'memory' | 'global' | 'tag';

/** One import; `type` is set for function imports. */
export interface ImportInfo {
  module: string;
  name: string;
  kind: ExternKind;
  type?: FuncType;
}

/** One export; `index` is in the index space of its kind (imports first). */
export interface ExportInfo {
  name: string;
  kind: ExternKind;
  index: number;
  /** The signature, for function exports. */
  type?: FuncType;
  /** Whether the global is mutable, for global exports. */
  mutable?: boolean;
}

/** One memory of the memory index space (imports first), sizes in 64 KiB pages. */
export interface MemoryInfo {
  initial: number;
  maximum: number | null;
  shared: boolean;
  memory64: boolean;
  imported: boolean;
}

/** One table of the table index space (imports first), sizes in elements. */
export interface TableInfo {
  refType: ValType;
  initial: number;
  maximum: number | null;
  is64: boolean;
  imported: boolean;
}

/** What `decodeModule` learns about a module. */
export interface ModuleInfo {
  imports: ImportInfo[];
  exports: ExportInfo[];
  memories: MemoryInfo[];
  tables: TableInfo[];
  /** The start function's index, or null when the module has no start section. */
  startFunction: number | null;
  /** Number of functions the module defines (imports excluded). */
  functionCount: number;
  /** Sum of the sizes of all function bodies in the code section. */
  codeBytes: number;
  /**
   * Sorted names of the post-MVP proposals the module actually uses, from: bulk-memory,
   * exceptions, exnref, extended-const, function-references, memory64, multi-memory,
   * multi-value, reference-types, relaxed-simd, sat-float-to-int, sign-ext, simd, tail-call,
   * threads.
   */
  features: string[];
}

/** Options of `instrumentModule`. */
export interface InstrumentOptions {
  /** Cap, in 64 KiB pages, on all the memories the module defines together. */
  maxMemoryPages: number;
  /** Ceiling, in elements, on all the tables the module defines together; default MAX_TABLE_ELEMENTS. */
  maxTableElements?: number;
}

/** The result of `instrumentModule`. */
export interface InstrumentResult {
  /** The rewritten module. */
  bytes: Uint8Array;
  /** Info of the original module. */
  info: ModuleInfo;
  /**
   * True when restoring memory contents and the `globalExports` globals of a used instance is
   * equivalent to instantiating afresh. The host must still compare the memory size with its
   * snapshot and discard the instance when it grew, since linear memory cannot shrink.
   */
  recyclable: boolean;
  /** Names of the added exports of the module's mutable defined globals, in index order. */
  globalExports: string[];
  /** The module had a start function; it is now exported as `__helix_start` and not run at instantiation. */
  hasStart: boolean;
}
