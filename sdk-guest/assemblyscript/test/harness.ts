// Test harness: compiles AssemblyScript programs with the real compiler and the SDK's shared
// asconfig, and calls them the way the Helix host does (alloc, copy, execute, read, dealloc).

import asc from 'assemblyscript/asc';
import { fileURLToPath } from 'node:url';

/** The SDK package directory; programs are compiled with it as base directory. */
export const SDK_DIR = fileURLToPath(new URL('..', import.meta.url));

/** Exports every helix/v1 module built with the SDK has. */
export interface ToolExports {
  memory: WebAssembly.Memory;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  execute(ptr: number, len: number): bigint;
  helix_panic(): bigint;
}

/** The envelope a module answers with, as the tests read it (abi/ABI.md, the guest envelopes). */
export interface GuestEnvelope {
  status: string;
  output?: unknown;
  error?: { code: string; message: string; details?: Record<string, unknown>; hint?: string };
}

/** What one call produced: the output text, or the trap and the message `helix_panic` recorded. */
export type CallOutcome =
  | { kind: 'output'; text: string; envelope: GuestEnvelope }
  | { kind: 'trap'; error: unknown; panic: string | null };

/**
 * Compiles `entry` (relative to the SDK directory) with the shared asconfig and returns the
 * module. Throws with the compiler's diagnostics when compilation fails.
 */
export async function compileProgram(entry: string): Promise<WebAssembly.Module> {
  return new WebAssembly.Module(await compileProgramBytes(entry));
}

/** `compileProgram`'s module bytes, for tests that instrument them as the host does. */
export async function compileProgramBytes(entry: string): Promise<Uint8Array> {
  let binary: Uint8Array | undefined;
  const stderr: string[] = [];
  const result = await asc.main([entry, '--config', 'asconfig.json', '--baseDir', SDK_DIR, '--outFile', 'program.wasm', '--noColors'], {
    writeFile: (name: string, contents: Uint8Array | string) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents;
    },
    stdout: { write: () => true } as never,
    stderr: {
      write: (text: string) => {
        stderr.push(String(text));
        return true;
      },
    } as never,
  });
  if (result.error || !binary) throw new Error(`asc failed for ${entry}:\n${stderr.join('')}`);
  return binary;
}

/** Splits an i64 `(ptr << 32) | len` as returned by `execute` and `helix_panic`. */
export function unpack(packed: bigint): { ptr: number; len: number } {
  const value = BigInt.asUintN(64, packed);
  return { ptr: Number(value >> 32n), len: Number(value & 0xffffffffn) };
}

/** Reads `len` bytes at `ptr` as UTF-8, failing on malformed UTF-8. */
export function readText(memory: WebAssembly.Memory, ptr: number, len: number): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(memory.buffer, ptr, len));
}

/** Instantiates `module` with `imports` (none by default). */
export async function instantiate(module: WebAssembly.Module, imports: WebAssembly.Imports = {}): Promise<ToolExports> {
  const instance = await WebAssembly.instantiate(module, imports);
  return instance.exports as unknown as ToolExports;
}

/**
 * Performs one call on `tool` following the host flow. `input` is sent as is when a string,
 * otherwise as its JSON text.
 */
export function callTool(tool: ToolExports, input: unknown): CallOutcome {
  const bytes = new TextEncoder().encode(typeof input === 'string' ? input : JSON.stringify(input));
  const inPtr = tool.alloc(bytes.length);
  // Read memory.buffer after each call: growth inside the guest detaches the old buffer.
  new Uint8Array(tool.memory.buffer, inPtr, bytes.length).set(bytes);
  let packed: bigint;
  try {
    packed = tool.execute(inPtr, bytes.length);
  } catch (error) {
    const panic = unpack(tool.helix_panic());
    return { kind: 'trap', error, panic: panic.len === 0 ? null : readText(tool.memory, panic.ptr, panic.len) };
  }
  const out = unpack(packed);
  const text = readText(tool.memory, out.ptr, out.len);
  tool.dealloc(out.ptr, out.len);
  tool.dealloc(inPtr, bytes.length);
  return { kind: 'output', text, envelope: JSON.parse(text) as GuestEnvelope };
}

/** Calls a fresh instance of `module` once. */
export async function callOnce(module: WebAssembly.Module, input: unknown, imports?: WebAssembly.Imports): Promise<CallOutcome> {
  return callTool(await instantiate(module, imports), input);
}

/**
 * The `output` of an ok envelope, as the shape `T` the caller expects of it; fails the test with
 * the whole outcome when the envelope is not ok.
 */
export function okOutput<T = unknown>(outcome: CallOutcome): T {
  if (outcome.kind !== 'output' || outcome.envelope.status !== 'ok') {
    throw new Error(`expected an ok envelope, got ${JSON.stringify(outcome, (_k, v) => (v instanceof Error ? v.message : v))}`);
  }
  return outcome.envelope.output as T;
}
