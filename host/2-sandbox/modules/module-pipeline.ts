// The one module pipeline, as wasmtime's Module::new is one: decode, the rules of the module's ABI
// (module-rules.ts), instrumentation (fuel, memory cap, table ceiling) and the engine's own
// validation and compilation, for every caller that needs a module. The loader checks a
// toolpack's module here, fail-closed; the lanes build a variant for a smaller memory cap here;
// `helix verify` rebuilds the module of a recorded run here. What a module needs only to run (its
// compiled form) is made on its first call (prepare); what was checked once is kept in a
// ModuleCache (the store's load cache, ABI-LOAD-008).
import { HelixError, MAX_MODULE_BYTES, type ToolManifest } from '../../../abi/index.js';
import { sha256Digest } from '../../1-base/hashing.js';
import {
  decodeModule,
  type InstrumentResult,
  instrumentModule,
  MemoryCapError,
  type ModuleInfo,
  TableCeilingError,
  WasmDecodeError,
} from '../wasm/index.js';
import { type ModuleProblem, moduleRuleProblems, stubImports } from './module-rules.js';

export type { ModuleProblem } from './module-rules.js';

/** A module ready for the engine: instrumented for one memory cap and compiled. */
export interface PreparedModule {
  readonly instrumented: InstrumentResult;
  readonly compiled: WebAssembly.Module;
}

/** A module that passed every check of loading. */
export interface CheckedModule {
  /** The module as built (its sha256 is the manifest's digest). */
  readonly bytes: Uint8Array;
  readonly info: ModuleInfo;
  /** Of the instrumented module: its sha256 (hex) and whether its instances can be recycled. */
  readonly instrumented: { readonly sha256: string; readonly recyclable: boolean };
  /**
   * The module instrumented and compiled, made once on first use (a CLI call compiles only the
   * module it calls). Throws P-PRECOND-MODULE-REFUSED when the engine refuses it: nothing of it runs.
   */
  prepare(): Promise<PreparedModule>;
}

/** The manifest fields the pipeline reads: the ABI and its rules, and the names its refusals give. */
export type ModuleSpec = Pick<ToolManifest, 'id' | 'version' | 'digest' | 'abi' | 'entrypoint' | 'capabilities'>;

/** An instrumented module as a cache gives it back; `bytes` are hashed against `bytesDigest` before use. */
export interface CachedModule {
  /** The description of the module as built. */
  readonly info: ModuleInfo;
  readonly recyclable: boolean;
  readonly globalExports: readonly string[];
  readonly hasStart: boolean;
  readonly bytes: Uint8Array;
  readonly bytesDigest: string;
}

/** Where the pipeline keeps what it worked out once (the store's load cache behind the loader). */
export interface ModuleCache {
  /** The module `digest` instrumented for `cap` pages, or undefined (absent or damaged). */
  module(digest: string, cap: number): CachedModule | undefined;
  /** Queues `instrumented`; `problem` says what was wrong with the entry it replaces. */
  putModule(digest: string, cap: number, instrumented: InstrumentResult, problem?: string): void;
  /** Writes what was queued. */
  flush(): Promise<void>;
}

type Checked = { ok: true; module: CheckedModule } | { ok: false; problems: ModuleProblem[] };

/**
 * Checks `bytes` for `spec` with memory capped at `maxMemoryPages` and tables at
 * MAX_TABLE_ELEMENTS (ABI-ALLOC-001); a module over MAX_MODULE_BYTES is refused before decoding.
 * With a `cache`, a module instrumented before (same digest, cap, instrumenter and engine) is
 * not decoded and instrumented again: its kept description is checked against the ABI's rules.
 */
export async function checkModule(bytes: Uint8Array, spec: ModuleSpec, maxMemoryPages: number, cache?: ModuleCache): Promise<Checked> {
  const problems: ModuleProblem[] = [];
  if (bytes.length > MAX_MODULE_BYTES) {
    // Decoding, instrumenting and compiling cost memory in proportion to the size: not begun.
    problems.push({
      field: 'module',
      reason: `ABI-ALLOC-005: the module is ${bytes.length} bytes, above the bound of ${MAX_MODULE_BYTES} bytes for a module`,
    });
    return { ok: false, problems };
  }
  const digest = sha256Digest(bytes);
  if (digest !== spec.digest) {
    problems.push({
      field: 'digest',
      reason: `D-DATA-DIGEST-MISMATCH: the module's digest is ${digest}, the manifest says ${spec.digest}; run "helix build" in the toolpack directory, or restore the module the manifest names`,
    });
  }
  const cached = problems.length === 0 ? cache?.module(digest, maxMemoryPages) : undefined;
  if (cached !== undefined && cache !== undefined) {
    const ruled = moduleRuleProblems(cached.info, spec);
    if (ruled.length > 0) return { ok: false, problems: ruled };
    let ready: Promise<PreparedModule> | undefined;
    const prepare = (): Promise<PreparedModule> => {
      ready ??= (async () => {
        // Cached bytes are used only when they hash to what the entry recorded; else made again.
        let instrumented = cachedInstrumented(cached);
        if (instrumented === undefined) {
          instrumented = instrumentModule(bytes, { maxMemoryPages });
          cache.putModule(digest, maxMemoryPages, instrumented, `the instrumented bytes do not hash to ${cached.bytesDigest}`);
          await cache.flush().catch(() => undefined);
        }
        return { instrumented, compiled: await compileModule(spec, instrumented) };
      })();
      return ready;
    };
    return {
      ok: true,
      module: {
        bytes,
        info: cached.info,
        instrumented: { sha256: cached.bytesDigest.slice('sha256:'.length), recyclable: cached.recyclable },
        prepare,
      },
    };
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
  problems.push(...moduleRuleProblems(info, spec));
  if (problems.length > 0) return { ok: false, problems };

  let instrumented: InstrumentResult;
  try {
    instrumented = instrumentModule(bytes, { maxMemoryPages });
  } catch (err) {
    const problem = instrumentProblem(err);
    if (problem === undefined) throw err;
    return { ok: false, problems: [problem] };
  }
  // The engine validates without compiling; only a module it refuses is compiled here, for the reason.
  let compiled: Promise<WebAssembly.Module> | undefined;
  if (spec.abi === 'extism/v1' || !WebAssembly.validate(instrumented.bytes)) {
    try {
      compiled = Promise.resolve(await compileModule(spec, instrumented));
    } catch (err) {
      return { ok: false, problems: [{ field: 'module', reason: (err as HelixError).details.reason as string }] };
    }
  }
  cache?.putModule(digest, maxMemoryPages, instrumented);
  let ready: Promise<PreparedModule> | undefined;
  const prepare = (): Promise<PreparedModule> =>
    (ready ??= (compiled ?? compileModule(spec, instrumented)).then((c) => ({ instrumented, compiled: c })));
  return {
    ok: true,
    module: {
      bytes,
      info,
      instrumented: { sha256: sha256Digest(instrumented.bytes).slice('sha256:'.length), recyclable: instrumented.recyclable },
      prepare,
    },
  };
}

/**
 * The module as built, instrumented for `maxMemoryPages` and compiled: a lane's variant for a
 * smaller memory cap than its manifest's, or the module of a run `helix verify` executes again.
 * Throws what instrumenting throws (a cap below the module's initial memory) and
 * P-PRECOND-MODULE-REFUSED when the engine refuses the result.
 */
export function prepareModule(
  bytes: Uint8Array,
  spec: Pick<ModuleSpec, 'abi'> & Partial<ModuleSpec>,
  maxMemoryPages: number,
): {
  readonly instrumented: InstrumentResult;
  readonly compiled: Promise<WebAssembly.Module>;
} {
  const instrumented = instrumentModule(bytes, { maxMemoryPages });
  return { instrumented, compiled: compileModule(spec, instrumented) };
}

/** What an instrumenting failure means for a toolpack's manifest, or undefined for a failure of the host. */
function instrumentProblem(err: unknown): ModuleProblem | undefined {
  if (err instanceof MemoryCapError) {
    const together = err.total === err.initial ? '' : ` (${err.total} with the memories before it)`;
    return {
      field: 'limits.maxMemoryPages',
      reason: `ABI-MEMORY-003: memory ${err.memoryIndex} starts at ${err.initial} pages${together}, above the cap of ${err.cap} pages that all memories share (limits.maxMemoryPages, capped by the policy)`,
    };
  }
  if (err instanceof TableCeilingError)
    return { field: 'module', reason: `ABI-ALLOC-002: ${err.message} (MAX_TABLE_ELEMENTS); declare smaller tables` };
  if (err instanceof WasmDecodeError) return { field: 'module', reason: `ABI-MODULE-001: ${err.message}` };
  return undefined;
}

/**
 * Compiles an instrumented module; an extism/v1 one is also instantiated inertly (ABI-EXTISM-001):
 * Extism instantiates the plugin in its own worker, where a failure (a data segment out of
 * bounds, say) is an uncaught exception of the host process, so it is found here instead. No
 * guest code runs: the start function is an export after instrumentation.
 */
async function compileModule(
  spec: Pick<ModuleSpec, 'abi'> & Partial<ModuleSpec>,
  instrumented: InstrumentResult,
): Promise<WebAssembly.Module> {
  let compiled: WebAssembly.Module;
  try {
    compiled = await WebAssembly.compile(instrumented.bytes);
  } catch (err) {
    throw refused(spec, `ABI-MODULE-001: the engine refuses the module: ${(err as Error).message}`);
  }
  if (spec.abi === 'extism/v1') {
    try {
      new WebAssembly.Instance(compiled, stubImports(instrumented.info));
    } catch (err) {
      throw refused(spec, `ABI-EXTISM-001: the module cannot be instantiated: ${(err as Error).message}`);
    }
  }
  return compiled;
}

function refused(spec: Partial<ModuleSpec>, reason: string): HelixError {
  const whose = spec.id === undefined ? `${spec.digest ?? 'a module'}` : `the module of ${spec.id}@${spec.version}`;
  return new HelixError('P-PRECOND-MODULE-REFUSED', {
    message: `${whose[0]!.toUpperCase()}${whose.slice(1)} was refused when it was compiled: ${reason}.`,
    details: { tool_id: spec.id, tool_version: spec.version, digest: spec.digest, reason },
  });
}

/** The instrumented module of a cache entry, once its bytes match their digest; undefined when they do not. */
export function cachedInstrumented(cached: CachedModule): InstrumentResult | undefined {
  if (sha256Digest(cached.bytes) !== cached.bytesDigest) return undefined;
  return {
    bytes: cached.bytes,
    info: cached.info,
    recyclable: cached.recyclable,
    globalExports: [...cached.globalExports],
    hasStart: cached.hasStart,
  };
}
