// The decoder's internal model of a module: the index spaces, where each section and function
// body lies in the bytes, and facts gathered from the code, shared by decodeModule and the
// instrumenter so the bytes are read once by one set of rules.

import type { ExportInfo, FuncType, ImportInfo, MemoryInfo, TableInfo, ValType } from './types.js';

/** A section's position: `start` is the id byte, `contentStart` the first payload byte. */
export interface SectionSpan {
  id: number;
  start: number;
  contentStart: number;
  end: number;
}

/** A table of the table index space, with where its limits lie. */
export interface TableDesc extends TableInfo {
  limitsStart: number;
  limitsEnd: number;
}

/** A memory of the memory index space, with where its limits lie. */
export interface MemoryDesc extends MemoryInfo {
  limitsStart: number;
  limitsEnd: number;
}

/** A global of the global index space. */
export interface GlobalDesc {
  type: ValType;
  mutable: boolean;
  imported: boolean;
}

/** A function body: `sizeStart` is its size prefix, `start..end` the body itself. */
export interface BodySpan {
  sizeStart: number;
  start: number;
  end: number;
}

/** An export with the offset of its name, for error messages. */
export interface ExportDesc extends ExportInfo {
  offset: number;
}

/** Everything the decoder learned about a module. */
export interface ParsedModule {
  bytes: Uint8Array;
  sections: SectionSpan[];
  types: FuncType[];
  /** Number of entries of the type section, known before they are all read. */
  typeCount: number;
  /** Type index of every function, imported ones first. */
  funcTypes: number[];
  importedFuncs: number;
  tables: TableDesc[];
  memories: MemoryDesc[];
  globals: GlobalDesc[];
  tagCount: number;
  elemCount: number;
  /** The data count section's value, or null when there is none. */
  dataCount: number | null;
  dataSegments: number;
  imports: ImportInfo[];
  exports: ExportDesc[];
  start: number | null;
  bodies: BodySpan[];
  /** Feature bits, see features.ts. */
  features: number;
  /** Some code mutates a table (table.set/grow/fill/copy/init or elem.drop). */
  mutatesTables: boolean;
  /** Some code drops a data segment. */
  dropsData: boolean;
}

/** An empty model to fill section by section. */
export function emptyModule(bytes: Uint8Array): ParsedModule {
  return {
    bytes,
    sections: [],
    types: [],
    typeCount: 0,
    funcTypes: [],
    importedFuncs: 0,
    tables: [],
    memories: [],
    globals: [],
    tagCount: 0,
    elemCount: 0,
    dataCount: null,
    dataSegments: 0,
    imports: [],
    exports: [],
    start: null,
    bodies: [],
    features: 0,
    mutatesTables: false,
    dropsData: false,
  };
}
