// The WebAssembly decoder and fuel/memory instrumenter: the loader decodes a module to check it
// against the ABI, and instruments it so the sandbox can meter and cap it.

export type {
  ExportInfo,
  ExternKind,
  FuncType,
  ImportInfo,
  InstrumentOptions,
  InstrumentResult,
  MemoryInfo,
  ModuleInfo,
  TableInfo,
  ValType,
} from './types.js';
export { MemoryCapError, TableCeilingError, WasmDecodeError } from './errors.js';
export { decodeModule } from './decode.js';
export { instrumentModule } from './instrument.js';
export { COSTS, FUEL_EXPORT, GLOBAL_EXPORT_PREFIX, START_EXPORT } from './costs.js';
export { INSTRUMENTER_VERSION, instrumenterKey } from './version.js';
