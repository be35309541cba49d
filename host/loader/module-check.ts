// Checks a toolpack's module against its ABI, fail-closed: size bound, digest, a complete decode,
// the rules of its ABI (module-rules.ts), instrumentation (fuel, memory cap, table ceiling) and
// the engine's own validation. What a module needs only to run (its compiled form) is made on
// its first call (prepare); what was checked once is kept in the load cache (ABI-LOAD-008).
import { HelixError, MAX_MODULE_BYTES, type ToolManifest } from '../../abi/index.js';
import { sha256Digest } from '../hashing.js';
import {
  decodeModule,
  instrumentModule,
  MemoryCapError,
  TableCeilingError,
  WasmDecodeError,
  type InstrumentResult,
  type ModuleInfo,
} from '../wasm/index.js';
import { cachedInstrumented, type LoaderCache } from './loader-cache.js';
import { moduleRuleProblems, stubImports, type ModuleProblem } from './module-rules.js';

export type { ModuleProblem } from './module-rules.js';

/** A module ready for the engine: instrumented for its tool's memory cap and compiled. */
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

type Checked = { ok: true; module: CheckedModule } | { ok: false; problems: ModuleProblem[] };

/**
 * Checks `bytes` for `manifest` with memory capped at `maxMemoryPages` and tables at
 * MAX_TABLE_ELEMENTS (ABI-ALLOC-001); a module over MAX_MODULE_BYTES is refused before decoding.
 * With a `cache`, a module instrumented before (same digest, cap, instrumenter and engine) is
 * not decoded and instrumented again: its kept description is checked against the ABI's rules.
 */
export async function checkModule(
  bytes: Uint8Array,
  manifest: ToolManifest,
  maxMemoryPages: number,
  cache?: LoaderCache,
): Promise<Checked> {
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
  if (digest !== manifest.digest) {
    problems.push({
      field: 'digest',
      reason: `D-DATA-DIGEST-MISMATCH: the module's digest is ${digest}, the manifest says ${manifest.digest}; run "helix build" in the toolpack directory, or restore the module the manifest names`,
    });
  }
  const cached = problems.length === 0 ? cache?.module(digest, maxMemoryPages) : undefined;
  if (cached !== undefined) {
    const ruled = moduleRuleProblems(cached.info, manifest);
    if (ruled.length > 0) return { ok: false, problems: ruled };
    let ready: Promise<PreparedModule> | undefined;
    const prepare = (): Promise<PreparedModule> => {
      ready ??= (async () => {
        // Cached bytes are used only when they hash to what the entry recorded; else made again.
        let instrumented = cachedInstrumented(cached);
        if (instrumented === undefined) {
          instrumented = instrumentModule(bytes, { maxMemoryPages });
          cache!.putModule(digest, maxMemoryPages, instrumented, `the instrumented bytes do not hash to ${cached.bytesDigest}`);
          await cache!.flush().catch(() => undefined);
        }
        return { instrumented, compiled: await compileFor(manifest, instrumented) };
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
  problems.push(...moduleRuleProblems(info, manifest));
  if (problems.length > 0) return { ok: false, problems };

  let instrumented: InstrumentResult;
  try {
    instrumented = instrumentModule(bytes, { maxMemoryPages });
  } catch (err) {
    if (err instanceof MemoryCapError) {
      const together = err.total === err.initial ? '' : ` (${err.total} with the memories before it)`;
      problems.push({
        field: 'limits.maxMemoryPages',
        reason: `ABI-MEMORY-003: memory ${err.memoryIndex} starts at ${err.initial} pages${together}, above the cap of ${err.cap} pages that all memories share (limits.maxMemoryPages, capped by the policy)`,
      });
    } else if (err instanceof TableCeilingError) {
      problems.push({ field: 'module', reason: `ABI-ALLOC-002: ${err.message} (MAX_TABLE_ELEMENTS); declare smaller tables` });
    } else if (err instanceof WasmDecodeError) {
      problems.push({ field: 'module', reason: `ABI-MODULE-001: ${err.message}` });
    } else throw err;
    return { ok: false, problems };
  }
  // The engine validates without compiling; only a module it refuses is compiled here, for the reason.
  let compiled: Promise<WebAssembly.Module> | undefined;
  if (manifest.abi === 'extism/v1' || !WebAssembly.validate(instrumented.bytes)) {
    try {
      compiled = Promise.resolve(await compileFor(manifest, instrumented));
    } catch (err) {
      return { ok: false, problems: [{ field: 'module', reason: (err as HelixError).details.reason as string }] };
    }
  }
  cache?.putModule(digest, maxMemoryPages, instrumented);
  let ready: Promise<PreparedModule> | undefined;
  const prepare = (): Promise<PreparedModule> =>
    (ready ??= (compiled ?? compileFor(manifest, instrumented)).then((c) => ({ instrumented, compiled: c })));
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
 * Compiles an instrumented module; an extism/v1 one is also instantiated inertly (ABI-EXTISM-001):
 * Extism instantiates the plugin in its own worker, where a failure (a data segment out of
 * bounds, say) is an uncaught exception of the host process, so it is found here instead. No
 * guest code runs: the start function is an export after instrumentation.
 */
async function compileFor(manifest: ToolManifest, instrumented: InstrumentResult): Promise<WebAssembly.Module> {
  let compiled: WebAssembly.Module;
  try {
    compiled = await WebAssembly.compile(instrumented.bytes);
  } catch (err) {
    throw refused(manifest, `ABI-MODULE-001: the engine refuses the module: ${(err as Error).message}`);
  }
  if (manifest.abi === 'extism/v1') {
    try {
      new WebAssembly.Instance(compiled, stubImports(instrumented.info));
    } catch (err) {
      throw refused(manifest, `ABI-EXTISM-001: the module cannot be instantiated: ${(err as Error).message}`);
    }
  }
  return compiled;
}

function refused(manifest: ToolManifest, reason: string): HelixError {
  return new HelixError('P-PRECOND-MODULE-REFUSED', {
    message: `The module of ${manifest.id}@${manifest.version} was refused when it was compiled: ${reason}.`,
    details: { tool_id: manifest.id, tool_version: manifest.version, digest: manifest.digest, reason },
  });
}
