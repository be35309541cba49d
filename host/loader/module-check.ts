// Checks a toolpack's module against the helix/v1 ABI: digest, decodable instruction set,
// required exports with exact signatures, the one permitted import, memory rules; then
// instruments it (fuel, memory cap) and compiles it, so a module that loads will run.
import {
  CAPABILITY_CALL_SIGNATURE,
  DEFAULT_ENTRYPOINT,
  HOST_IMPORT_CAPABILITY_CALL,
  HOST_IMPORT_MODULE,
  MEMORY_EXPORT,
  PANIC_EXPORT,
  PANIC_EXPORT_SIGNATURE,
  REQUIRED_FUNCTION_EXPORTS,
  RESERVED_EXPORT_PREFIX,
  type Signature,
  type ToolManifest,
} from '../../abi/index.js';
import { sha256Digest } from '../hashing.js';
import { decodeModule, instrumentModule, MemoryCapError, WasmDecodeError, type FuncType, type InstrumentResult, type ModuleInfo } from '../wasm/index.js';

/** A problem with the module, attributed to a manifest field. */
export interface ModuleProblem {
  readonly field: string;
  readonly reason: string;
}

/** A module that passed every check, ready for the engine. */
export interface CheckedModule {
  /** The module as built (its sha256 is the manifest's digest). */
  readonly bytes: Uint8Array;
  readonly info: ModuleInfo;
  readonly instrumented: InstrumentResult;
  readonly compiled: WebAssembly.Module;
}

/** Checks, instruments and compiles `bytes` for `manifest` with memory capped at `maxMemoryPages`. */
export async function checkModule(
  bytes: Uint8Array,
  manifest: ToolManifest,
  maxMemoryPages: number,
): Promise<{ ok: true; module: CheckedModule } | { ok: false; problems: ModuleProblem[] }> {
  const problems: ModuleProblem[] = [];
  const digest = sha256Digest(bytes);
  if (digest !== manifest.digest) {
    problems.push({ field: 'digest', reason: `D-DATA-DIGEST-MISMATCH: the module's digest is ${digest}, the manifest says ${manifest.digest}; rebuild (npm run build) or fix the manifest` });
  }
  if (manifest.abi !== 'helix/v1') {
    problems.push({ field: 'abi', reason: `${manifest.abi} toolpacks are not supported by this host yet; use helix/v1` });
    return { ok: false, problems };
  }
  let info: ModuleInfo;
  try {
    info = decodeModule(bytes);
  } catch (err) {
    if (err instanceof WasmDecodeError) {
      problems.push({ field: 'module', reason: `ABI-MODULE-001: cannot decode the module: ${err.message}` });
      return { ok: false, problems };
    }
    throw err;
  }
  problems.push(...checkExports(info, manifest.entrypoint ?? DEFAULT_ENTRYPOINT), ...checkImports(info), ...checkMemory(info));
  if (problems.length > 0) return { ok: false, problems };

  let instrumented: InstrumentResult;
  try {
    instrumented = instrumentModule(bytes, { maxMemoryPages });
  } catch (err) {
    if (err instanceof MemoryCapError) {
      problems.push({ field: 'limits.maxMemoryPages', reason: `ABI-MEMORY-003: memory ${err.memoryIndex} starts at ${err.initial} pages, above the cap of ${err.cap} pages (limits.maxMemoryPages, capped by the policy)` });
    } else if (err instanceof WasmDecodeError) {
      problems.push({ field: 'module', reason: `ABI-MODULE-001: ${err.message}` });
    } else throw err;
    return { ok: false, problems };
  }
  let compiled: WebAssembly.Module;
  try {
    compiled = await WebAssembly.compile(instrumented.bytes);
  } catch (err) {
    problems.push({ field: 'module', reason: `ABI-MODULE-001: the engine refuses the module: ${(err as Error).message}` });
    return { ok: false, problems };
  }
  return { ok: true, module: { bytes, info, instrumented, compiled } };
}

function sameSignature(actual: FuncType | undefined, expected: Signature): boolean {
  if (actual === undefined) return false;
  return (
    actual.params.length === expected.params.length &&
    actual.results.length === expected.results.length &&
    actual.params.every((p, i) => p === expected.params[i]) &&
    actual.results.every((r, i) => r === expected.results[i])
  );
}

function render(sig: Signature | FuncType | undefined): string {
  if (sig === undefined) return '(unknown)';
  return `(${sig.params.join(', ')}) -> (${sig.results.join(', ')})`;
}

function checkExports(info: ModuleInfo, entrypoint: string): ModuleProblem[] {
  const problems: ModuleProblem[] = [];
  const byName = new Map(info.exports.map((e) => [e.name, e]));
  const memory = byName.get(MEMORY_EXPORT);
  if (memory === undefined || memory.kind !== 'memory') {
    problems.push({ field: 'module', reason: `ABI-EXPORT-001: the module must export its linear memory as "${MEMORY_EXPORT}"` });
  }
  const required: Array<[string, Signature, string]> = [
    ['alloc', REQUIRED_FUNCTION_EXPORTS.alloc!, 'ABI-EXPORT-002'],
    ['dealloc', REQUIRED_FUNCTION_EXPORTS.dealloc!, 'ABI-EXPORT-003'],
    [entrypoint, REQUIRED_FUNCTION_EXPORTS.execute!, 'ABI-EXPORT-004'],
  ];
  for (const [name, sig, id] of required) {
    const exp = byName.get(name);
    if (exp === undefined || exp.kind !== 'func') {
      problems.push({ field: name === entrypoint ? 'entrypoint' : 'module', reason: `${id}: the module must export a function "${name}" ${render(sig)}` });
    } else if (!sameSignature(exp.type, sig)) {
      problems.push({ field: 'module', reason: `${id}: export "${name}" has signature ${render(exp.type)}, the ABI requires ${render(sig)}` });
    }
  }
  const panic = byName.get(PANIC_EXPORT);
  if (panic !== undefined && (panic.kind !== 'func' || !sameSignature(panic.type, PANIC_EXPORT_SIGNATURE))) {
    problems.push({ field: 'module', reason: `ABI-EXPORT-006: optional export "${PANIC_EXPORT}" must be a function ${render(PANIC_EXPORT_SIGNATURE)}` });
  }
  for (const e of info.exports) {
    if (e.name.startsWith(RESERVED_EXPORT_PREFIX)) {
      problems.push({ field: 'module', reason: `ABI-EXPORT-007: export "${e.name}" uses the reserved prefix ${RESERVED_EXPORT_PREFIX}` });
    }
  }
  return problems;
}

function checkImports(info: ModuleInfo): ModuleProblem[] {
  const problems: ModuleProblem[] = [];
  for (const imp of info.imports) {
    const isCapabilityCall = imp.module === HOST_IMPORT_MODULE && imp.name === HOST_IMPORT_CAPABILITY_CALL;
    if (!isCapabilityCall) {
      const hint = imp.module === 'env' && imp.name === 'abort' ? ' (AssemblyScript: build with --use abort=... as the guest SDK does)' : '';
      problems.push({ field: 'module', reason: `ABI-IMPORT-001: import ${imp.module}.${imp.name} (${imp.kind}) is not allowed; the only permitted import is ${HOST_IMPORT_MODULE}.${HOST_IMPORT_CAPABILITY_CALL}${hint}` });
    } else if (imp.kind !== 'func' || !sameSignature(imp.type, CAPABILITY_CALL_SIGNATURE)) {
      problems.push({ field: 'module', reason: `ABI-IMPORT-002: ${HOST_IMPORT_MODULE}.${HOST_IMPORT_CAPABILITY_CALL} must be imported as a function ${render(CAPABILITY_CALL_SIGNATURE)}, found ${imp.kind} ${render(imp.type)}` });
    }
  }
  return problems;
}

function checkMemory(info: ModuleInfo): ModuleProblem[] {
  const problems: ModuleProblem[] = [];
  for (const [i, m] of info.memories.entries()) {
    if (m.memory64) problems.push({ field: 'module', reason: `ABI-MEMORY-001: memory ${i} is 64-bit; helix/v1 pointers are i32` });
  }
  return problems;
}
