// Where a guest trapped, for the S-TOOL-TRAP message an author reads: the guest function at the
// top of the trap's stack (its name from the module's name section or its export, else
// `wasm-function[N]`), and the source location a panic message carries ("... at file:line:col").

/** The top guest frame of a trap, and the guest frames under it (innermost first). */
export interface TrapSite {
  /** Name of the function that trapped: from the name section or an export; absent without either. */
  readonly function?: string;
  /** Its index in the module's function index space (imports first). */
  readonly wasmFunction: number;
  /** Each guest frame as `name (wasm-function[N])` or `wasm-function[N]`, innermost first, at most MAX_FRAMES. */
  readonly frames: string[];
  /** The names the module's name section gives those frames, innermost first (export names excluded). */
  readonly names: string[];
}

/** The most guest frames kept in a fault's details. */
const MAX_FRAMES = 8;

// A V8 stack line of a WebAssembly frame: `at NAME (wasm://wasm/ID:wasm-function[N]:0xOFF)`,
// or without the name and parentheses when the module has no name for the function.
const WASM_FRAME = /^\s*at (?:(.+?) \()?wasm:\/\/wasm\/([^:]+):wasm-function\[(\d+)\]:0x[0-9a-f]+\)?\s*$/;

/**
 * The trap's site from a stack (an Error's `stack`): frames of the module that trapped, the
 * first wasm frame's module, only (a wrapper module would be another). `exportName` names a function the
 * module exports, for modules without a name section. Undefined when the stack has no wasm frame.
 */
export function trapSite(stack: unknown, exportName: (index: number) => string | undefined = () => undefined): TrapSite | undefined {
  if (typeof stack !== 'string') return undefined;
  let moduleId: string | undefined;
  const frames: Array<{ name?: string; index: number; named: boolean }> = [];
  for (const line of stack.split('\n')) {
    const match = WASM_FRAME.exec(line);
    if (match === null) continue;
    moduleId ??= match[2];
    if (match[2] !== moduleId) continue;
    const index = Number(match[3]);
    const name = match[1] ?? exportName(index);
    frames.push(name === undefined ? { index, named: false } : { name, index, named: match[1] !== undefined });
  }
  const top = frames[0];
  if (top === undefined) return undefined;
  const shown = frames
    .slice(0, MAX_FRAMES)
    .map((f) => (f.name === undefined ? `wasm-function[${f.index}]` : `${f.name} (wasm-function[${f.index}])`));
  const names = frames.slice(0, MAX_FRAMES).flatMap((f) => (f.named && f.name !== undefined ? [f.name] : []));
  return top.name === undefined
    ? { wasmFunction: top.index, frames: shown, names }
    : { function: top.name, wasmFunction: top.index, frames: shown, names };
}

/**
 * The innermost function of the author's own code on the stack: AssemblyScript names its
 * functions by source path (`assembly/index/handle`) and the standard library and SDK by `~lib/`.
 * Undefined without a name section (an AssemblyScript build without `"debug": true`).
 */
export function authorFunction(site: TrapSite | undefined): string | undefined {
  return site?.names.find((name) => !name.startsWith('~lib/'));
}

/** `deep (wasm-function[9])`, or `wasm-function[9]` for a function without a name. */
export function siteText(site: TrapSite): string {
  return site.frames[0]!;
}

/** The details a fault gets for a site: function, wasm_function and the guest frames. */
export function siteDetails(site: TrapSite | undefined): Record<string, unknown> {
  if (site === undefined) return {};
  return { ...(site.function === undefined ? {} : { function: site.function }), wasm_function: site.wasmFunction, frames: site.frames };
}

/** The place in the author's source a panic message names. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column?: number;
}

// The tail the guest SDKs give a panic message: " at FILE:LINE:COLUMN" (AssemblyScript's abort
// handler) or " at FILE:LINE" (the C SDK's HELIX_ASSERT).
const PANIC_LOCATION = / at (\S+?):(\d+)(?::(\d+))?$/;

/** The file, line and column at the end of a panic message, if it names one. */
export function panicLocation(panic: string): SourceLocation | undefined {
  const match = PANIC_LOCATION.exec(panic);
  if (match === null) return undefined;
  const line = Number(match[2]);
  return match[3] === undefined ? { file: match[1]!, line } : { file: match[1]!, line, column: Number(match[3]) };
}

/**
 * The export an instance's function index belongs to, read off the instance: V8 names an
 * exported WebAssembly function after its index.
 */
export function exportNamesOf(exports: WebAssembly.Exports): (index: number) => string | undefined {
  const byIndex = new Map<number, string>();
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value === 'function' && /^\d+$/.test(value.name) && !byIndex.has(Number(value.name))) byIndex.set(Number(value.name), name);
  }
  return (index) => byIndex.get(index);
}
