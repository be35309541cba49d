// decodeModule: the loader's view of a module (imports, exports, memories, start, features)
// after a full decode of every section and function body.

import { featureNames } from './features.js';
import { parseModule } from './module-parser.js';
import type { ParsedModule } from './parsed-module.js';
import type { ModuleInfo } from './types.js';

/**
 * Decodes every section and every function body of `bytes`, instruction by instruction.
 * Throws a WasmDecodeError for malformed bytes and for proposals Helix does not run (GC,
 * stringref, anything unknown). This is a decoder, not a validator: operand types are left to
 * the engine's `WebAssembly.validate`.
 */
export function decodeModule(bytes: Uint8Array): ModuleInfo {
  return moduleInfo(parseModule(bytes));
}

/** The public info of a parsed module. */
export function moduleInfo(m: ParsedModule): ModuleInfo {
  return {
    imports: m.imports,
    exports: m.exports.map(({ offset: _offset, ...info }) => info),
    memories: m.memories.map(({ limitsStart: _s, limitsEnd: _e, ...info }) => info),
    tables: m.tables.map(({ limitsStart: _s, limitsEnd: _e, ...info }) => info),
    startFunction: m.start,
    functionCount: m.funcTypes.length - m.importedFuncs,
    codeBytes: m.bodies.reduce((sum, b) => sum + (b.end - b.start), 0),
    features: featureNames(m.features),
  };
}
