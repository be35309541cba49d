// The ABI's rules over a decoded module's description (ModuleInfo): required exports with exact
// signatures, permitted imports, memory rules, for helix/v1 and extism/v1. They read only the
// description, so the loader applies them to every toolpack at every start, cached module or not.
import {
  CAPABILITY_CALL_BULK_SIGNATURE,
  CAPABILITY_CALL_SIGNATURE,
  DEFAULT_ENTRYPOINT,
  EXTISM_CAPABILITY_CALL,
  EXTISM_CAPABILITY_CALL_SIGNATURE,
  EXTISM_ENTRY_SIGNATURE,
  EXTISM_ENV_MODULE,
  EXTISM_KERNEL_IMPORTS,
  EXTISM_REFUSED_EXPORTS,
  EXTISM_USER_MODULE,
  HOST_IMPORT_CAPABILITY_CALL,
  HOST_IMPORT_CAPABILITY_CALL_BULK,
  HOST_IMPORT_MODULE,
  MEMORY_EXPORT,
  PANIC_EXPORT,
  PANIC_EXPORT_SIGNATURE,
  REQUIRED_FUNCTION_EXPORTS,
  RESERVED_EXPORT_PREFIX,
  type Signature,
  type ToolManifest,
} from '../../../abi/index.js';
import type { FuncType, ModuleInfo } from '../../2-sandbox/wasm/index.js';

/** A problem with the module, attributed to a manifest field. */
export interface ModuleProblem {
  readonly field: string;
  readonly reason: string;
}

/** Every rule of the manifest's ABI that the module's description breaks. */
export function moduleRuleProblems(info: ModuleInfo, manifest: Pick<ToolManifest, 'abi' | 'entrypoint' | 'capabilities'>): ModuleProblem[] {
  const problems =
    manifest.abi === 'extism/v1'
      ? checkExtism(info, manifest.entrypoint)
      : [...checkExports(info, manifest.entrypoint ?? DEFAULT_ENTRYPOINT), ...checkImports(info, manifest.capabilities.abiVersion)];
  return [...problems, ...checkMemory(info)];
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
      problems.push({
        field: name === entrypoint ? 'entrypoint' : 'module',
        reason: `${id}: the module must export a function "${name}" ${render(sig)}`,
      });
    } else if (!sameSignature(exp.type, sig)) {
      problems.push({
        field: 'module',
        reason: `${id}: export "${name}" has signature ${render(exp.type)}, the ABI requires ${render(sig)}`,
      });
    }
  }
  const panic = byName.get(PANIC_EXPORT);
  if (panic !== undefined && (panic.kind !== 'func' || !sameSignature(panic.type, PANIC_EXPORT_SIGNATURE))) {
    problems.push({
      field: 'module',
      reason: `ABI-EXPORT-006: optional export "${PANIC_EXPORT}" must be a function ${render(PANIC_EXPORT_SIGNATURE)}`,
    });
  }
  for (const e of info.exports) {
    if (e.name.startsWith(RESERVED_EXPORT_PREFIX)) {
      problems.push({ field: 'module', reason: `ABI-EXPORT-007: export "${e.name}" uses the reserved prefix ${RESERVED_EXPORT_PREFIX}` });
    }
  }
  return problems;
}

/** helix/v1 imports (ABI-IMPORT-001/-002): capability_call, and capability_call_bulk under capability ABI 2 only. */
function checkImports(info: ModuleInfo, abiVersion: 1 | 2): ModuleProblem[] {
  const problems: ModuleProblem[] = [];
  const allowed =
    abiVersion === 2
      ? `${HOST_IMPORT_MODULE}.${HOST_IMPORT_CAPABILITY_CALL} and ${HOST_IMPORT_MODULE}.${HOST_IMPORT_CAPABILITY_CALL_BULK}`
      : `${HOST_IMPORT_MODULE}.${HOST_IMPORT_CAPABILITY_CALL}`;
  for (const imp of info.imports) {
    const name = imp.module === HOST_IMPORT_MODULE ? imp.name : undefined;
    const signature =
      name === HOST_IMPORT_CAPABILITY_CALL
        ? CAPABILITY_CALL_SIGNATURE
        : name === HOST_IMPORT_CAPABILITY_CALL_BULK
          ? CAPABILITY_CALL_BULK_SIGNATURE
          : undefined;
    if (signature === undefined) {
      const hint =
        imp.module === 'env' && imp.name === 'abort' ? ' (AssemblyScript: build with --use abort=... as the guest SDK does)' : '';
      problems.push({
        field: 'module',
        reason: `ABI-IMPORT-001: import ${imp.module}.${imp.name} (${imp.kind}) is not allowed; the only permitted imports are ${allowed}${hint}`,
      });
    } else if (name === HOST_IMPORT_CAPABILITY_CALL_BULK && abiVersion !== 2) {
      problems.push({
        field: 'capabilities.abiVersion',
        reason: `ABI-IMPORT-001: the module imports ${HOST_IMPORT_MODULE}.${HOST_IMPORT_CAPABILITY_CALL_BULK}, the bulk path of capability ABI 2, but the manifest says capabilities.abiVersion: ${abiVersion}; set capabilities.abiVersion: 2 in the manifest (ABI-BULK-001)`,
      });
    } else if (imp.kind !== 'func' || !sameSignature(imp.type, signature)) {
      problems.push({
        field: 'module',
        reason: `ABI-IMPORT-002: ${HOST_IMPORT_MODULE}.${name} must be imported as a function ${render(signature)}, found ${imp.kind} ${render(imp.type)}`,
      });
    }
  }
  return problems;
}

function checkMemory(info: ModuleInfo): ModuleProblem[] {
  const problems: ModuleProblem[] = [];
  for (const [i, m] of info.memories.entries()) {
    if (m.memory64) problems.push({ field: 'module', reason: `ABI-MEMORY-001: memory ${i} is 64-bit; guest pointers are i32` });
  }
  return problems;
}

/** The extism/v1 rules (ABI-EXTISM-001..003, 005): kernel and broker imports only, the entry, no instantiation-time exports. */
function checkExtism(info: ModuleInfo, entrypoint: string | undefined): ModuleProblem[] {
  const problems: ModuleProblem[] = [];
  const byName = new Map(info.exports.map((e) => [e.name, e]));
  const memory = byName.get(MEMORY_EXPORT);
  if (memory === undefined || memory.kind !== 'memory') {
    problems.push({
      field: 'module',
      reason: `ABI-EXTISM-001: the module must export its linear memory as "${MEMORY_EXPORT}" (every Extism PDK does)`,
    });
  }
  if (entrypoint === undefined) {
    problems.push({ field: 'entrypoint', reason: `ABI-EXTISM-003: extism/v1 toolpacks must name their entry function in entrypoint` });
  } else {
    const entry = byName.get(entrypoint);
    if (entry === undefined || entry.kind !== 'func') {
      problems.push({
        field: 'entrypoint',
        reason: `ABI-EXTISM-003: the module must export a function "${entrypoint}" ${render(EXTISM_ENTRY_SIGNATURE)}`,
      });
    } else if (!sameSignature(entry.type, EXTISM_ENTRY_SIGNATURE)) {
      problems.push({
        field: 'entrypoint',
        reason: `ABI-EXTISM-003: export "${entrypoint}" has signature ${render(entry.type)}, an Extism entry must be ${render(EXTISM_ENTRY_SIGNATURE)}`,
      });
    }
  }
  for (const name of EXTISM_REFUSED_EXPORTS) {
    if (byName.has(name))
      problems.push({
        field: 'module',
        reason: `ABI-EXTISM-005: export "${name}" is not allowed: Extism would run it at instantiation, outside the call's fuel and error handling; use a start function or do the work in the entry`,
      });
  }
  for (const e of info.exports) {
    if (e.name.startsWith(RESERVED_EXPORT_PREFIX))
      problems.push({ field: 'module', reason: `ABI-EXPORT-007: export "${e.name}" uses the reserved prefix ${RESERVED_EXPORT_PREFIX}` });
  }
  for (const imp of info.imports) {
    const where = `${imp.module}.${imp.name}`;
    const expected =
      imp.module === EXTISM_ENV_MODULE
        ? EXTISM_KERNEL_IMPORTS[imp.name]
        : imp.module === EXTISM_USER_MODULE && imp.name === EXTISM_CAPABILITY_CALL
          ? EXTISM_CAPABILITY_CALL_SIGNATURE
          : undefined;
    if (expected === undefined) {
      const network =
        imp.module === EXTISM_ENV_MODULE && imp.name.startsWith('http_')
          ? ' (network access goes through the broker: call http.request with helix_capability_call)'
          : '';
      problems.push({
        field: 'module',
        reason: `ABI-EXTISM-002: import ${where} (${imp.kind}) is not allowed; an extism/v1 module may import the Extism kernel (${EXTISM_ENV_MODULE}) and ${EXTISM_USER_MODULE}.${EXTISM_CAPABILITY_CALL} only${network}`,
      });
    } else if (imp.kind !== 'func' || !sameSignature(imp.type, expected)) {
      problems.push({
        field: 'module',
        reason: `ABI-EXTISM-002: ${where} must be imported as a function ${render(expected)}, found ${imp.kind} ${render(imp.type)}`,
      });
    }
  }
  return problems;
}

/** Imports that satisfy the module's (already checked) function imports without running anything. */
export function stubImports(info: ModuleInfo): WebAssembly.Imports {
  const imports: Record<string, Record<string, () => never>> = {};
  for (const imp of info.imports) {
    const fromModule = imports[imp.module] ?? {};
    imports[imp.module] = fromModule;
    fromModule[imp.name] = () => {
      throw new Error('not callable while loading');
    };
  }
  return imports;
}
