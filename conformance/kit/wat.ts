// Compiles WebAssembly text to binary with the wabt package, for the modules the conformance
// checks and the tests build at run time rather than check in.
import wabtInit from 'wabt';

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
let wabt: Promise<Wabt> | undefined;

/** Every proposal wabt knows, so one parser serves all fixtures. */
export const allFeatures = {
  exceptions: true,
  mutable_globals: true,
  sat_float_to_int: true,
  sign_extension: true,
  simd: true,
  threads: true,
  multi_value: true,
  tail_call: true,
  bulk_memory: true,
  reference_types: true,
  memory64: true,
  extended_const: true,
  relaxed_simd: true,
  multi_memory: true,
};

/**
 * WAT source to module bytes. wabt does not validate here: V8 and the loader do. With `names`,
 * the module keeps a name section (function names show in stack traces).
 */
export async function wat2wasm(source: string, name = 'fixture.wat', opts: { names?: boolean } = {}): Promise<Uint8Array> {
  wabt ??= wabtInit();
  const mod = (await wabt).parseWat(name, source, allFeatures);
  try {
    return new Uint8Array(mod.toBinary({ write_debug_names: opts.names === true }).buffer);
  } finally {
    mod.destroy();
  }
}

/** Validates bytes with wabt's validator (for proposals this V8 does not enable). */
export async function wabtValidate(bytes: Uint8Array): Promise<void> {
  wabt ??= wabtInit();
  const mod = (await wabt).readWasm(bytes, { readDebugNames: false, ...allFeatures });
  try {
    mod.validate();
  } finally {
    mod.destroy();
  }
}
