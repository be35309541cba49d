// Compiles a C toolpack (sources in `src/*.c`, no asconfig.json) with clang for wasm32 against
// the single-header C SDK (sdk-guest/c/helix.h): no libc, no WASI, reproducible bytes.

import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../1-base/paths.js';

/** Folder of a pack holding its C sources; every `*.c` directly in it is compiled. */
export const C_SOURCE_DIR = 'src';

/** The environment variable that names the clang to use instead of `clang` on PATH. */
export const CLANG_ENV = 'HELIX_CLANG';

/** The part of the C toolchain that could not be run: clang itself, or the wasm-ld it links with. */
export type CToolchainPart = 'clang' | 'wasm-ld';

/** What a failed compile says, and the compiler's own output when there is one. */
export class CCompileError extends Error {
  override readonly name = 'CCompileError';
  constructor(
    message: string,
    readonly diagnostics: string = '',
    /**
     * Set when the toolchain is missing rather than the sources wrong: nothing the author wrote
     * failed, so a caller may fall back to a module built elsewhere (scripts/build-wasm.ts).
     */
    readonly toolchainMissing?: CToolchainPart,
  ) {
    super(message);
  }
}

/** The folder holding helix.h. */
export function cSdkDir(): string {
  return path.join(packageRoot(), 'sdk-guest', 'c');
}

/** The pack's C sources, relative to the pack and sorted (so the link order is stable); empty when none. */
export async function findCSources(packDir: string): Promise<string[]> {
  const entries = await readdir(path.join(packDir, C_SOURCE_DIR), { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.c'))
    .map((entry) => `${C_SOURCE_DIR}/${entry.name}`)
    .sort();
}

// Flags of every compile step. An undeclared function is an error, not C89's implicit int:
// there is no libc to resolve it.
const COMPILE_FLAGS = [
  '--target=wasm32',
  '-mbulk-memory',
  '-nostdlib',
  '-O2',
  '-std=c11',
  '-Wall',
  '-Werror=implicit-function-declaration',
];

/**
 * The clang arguments that compile one source (relative to the pack, the working directory)
 * to an object file.
 * -mbulk-memory: helix.h implements memcpy and memset with memory.copy and memory.fill.
 * -ffile-prefix-map: __FILE__ (HELIX_ASSERT messages) never names where the repository lives.
 */
export function clangCompileArgs(source: string, object: string, packDir: string, sdkDir: string = cSdkDir()): string[] {
  return [
    ...COMPILE_FLAGS,
    `-ffile-prefix-map=${packDir}${path.sep}=`,
    `-ffile-prefix-map=${sdkDir}=helix-sdk`,
    '-I',
    sdkDir,
    '-c',
    '-o',
    object,
    source,
  ];
}

/**
 * The clang arguments that link the objects into the module. No -O here on purpose: given one,
 * clang runs `wasm-opt` when it finds one on PATH (npm puts binaryen's there), so the bytes
 * would depend on PATH. --stack-first puts the stack below the data, so an overflow traps
 * instead of corrupting it.
 */
export function clangLinkArgs(objects: readonly string[], output: string): string[] {
  return ['--target=wasm32', '-nostdlib', '-Wl,--no-entry', '-Wl,--stack-first', '-Wl,--strip-debug', '-o', output, ...objects];
}

/** A compile that succeeded: the module, and what clang printed on the way (its warnings; empty when none). */
export interface CCompiled {
  readonly bytes: Uint8Array;
  readonly diagnostics: string;
}

/** Compiles the pack's C sources to module bytes; throws CCompileError with the compiler's message. */
export async function compileC(packDir: string, sources: readonly string[]): Promise<CCompiled> {
  const clang = process.env[CLANG_ENV] || 'clang';
  const scratch = await mkdtemp(path.join(tmpdir(), 'helix-clang-'));
  try {
    const objects = sources.map((_, index) => path.join(scratch, `${index}.o`));
    const output = path.join(scratch, 'module.wasm');
    const steps = [...sources.map((source, index) => clangCompileArgs(source, objects[index]!, packDir)), clangLinkArgs(objects, output)];
    // A step that succeeds prints nothing unless clang or wasm-ld warns.
    const printed: string[] = [];
    for (const args of steps) {
      const { code, text, missing } = await run(clang, args, packDir);
      if (missing) {
        throw new CCompileError(
          `clang not found (${clang}): C toolpacks need clang and wasm-ld\nhint: apt-get install clang lld, or set ${CLANG_ENV} to a clang that targets wasm32`,
          '',
          'clang',
        );
      }
      if (code !== 0)
        throw new CCompileError(
          `compile failed:\n${text.trim()}${compileHint(text)}`,
          text.trim(),
          linkerMissing(text) ? 'wasm-ld' : undefined,
        );
      if (text.trim() !== '') printed.push(text.trim());
    }
    return { bytes: new Uint8Array(await readFile(output)), diagnostics: printed.join('\n') };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

// clang finds wasm-ld beside itself or on PATH; without it the link step cannot run, and clang
// says so as `Executable "wasm-ld-14" doesn't exist!` (LC_ALL=C keeps the wording stable).
function linkerMissing(text: string): boolean {
  return /wasm-ld/.test(text) && /(not found|doesn't exist|No such file)/i.test(text);
}

// The fix for the failures an author meets first, which clang words for compiler writers.
function compileHint(text: string): string {
  if (linkerMissing(text)) return '\nhint: wasm-ld is missing: apt-get install lld';
  const undefinedSymbols = [...text.matchAll(/undefined symbol: (\S+)/g)].map((match) => match[1]!);
  if (undefinedSymbols.some((name) => name.startsWith('helix'))) {
    return '\nhint: define HELIX_IMPLEMENTATION before including helix.h in exactly one .c file, and name the handler with HELIX_TOOL(handler)';
  }
  if (undefinedSymbols.length > 0) {
    return `\nhint: there is no libc: ${undefinedSymbols.join(', ')} must come from your sources; helix.h offers helix_malloc, helix_free, helix_format, helix_strlen, memcpy, memset, memmove and memcmp`;
  }
  return '';
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; text: string; missing: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') resolve({ code: -1, text: '', missing: true });
      else reject(error);
    });
    child.on('close', (code) => resolve({ code: code ?? -1, text, missing: false }));
  });
}
