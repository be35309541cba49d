// A narrow, typed view of the AssemblyScript compiler's programmatic API, loaded at run time.
// Importing 'assemblyscript/asc' statically would pull its bundled declarations into the
// host's type program, and those redeclare the global `console` (only `log` survives).

/** Output sink asc writes diagnostics and text to. */
export interface AscOutputStream {
  write(chunk: Uint8Array | string): void;
}

/** The options of `asc.main` the build uses. */
export interface AscMainOptions {
  stdout?: AscOutputStream;
  stderr?: AscOutputStream;
  readFile?: (file: string, baseDir: string) => string | null | Promise<string | null>;
  writeFile?: (file: string, contents: Uint8Array | string, baseDir: string) => void | Promise<void>;
}

/** The part of asc's result the build reads. */
export interface AscMainResult {
  error: Error | null;
}

/** The compiler entry point: `asc.main(argv, options)`. */
export interface AscApi {
  main(argv: string[], options?: AscMainOptions): Promise<AscMainResult>;
  version: string;
}

let loaded: Promise<AscApi> | undefined;

/** Loads asc once per process; later calls share the module. */
export function loadAsc(): Promise<AscApi> {
  // A non-literal specifier keeps TypeScript from resolving (and type-loading) the package.
  const specifier: string = 'assemblyscript/asc';
  loaded ??= import(specifier).then((module: { default: AscApi }) => module.default);
  return loaded;
}
