// compileC tells a missing toolchain (no clang, no wasm-ld) apart from a compile error, so the
// install can fall back to a shipped module for the one and must fail for the other.

import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CCompileError, CLANG_ENV, compileC } from './compile-c.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-compile-c-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A pack folder with one C source. */
async function pack(name: string, source: string): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(path.join(dir, 'src'), { recursive: true });
  await writeFile(path.join(dir, 'src', 'main.c'), source);
  return dir;
}

/** Runs `body` with environment variables set, restoring them afterwards (each test file has its own process). */
async function withEnv<T>(vars: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((key) => [key, process.env[key]]));
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as CCompileError,
  );

describe('compileC', () => {
  it('marks a missing clang as toolchainMissing "clang"', async () => {
    const dir = await pack('no-clang', 'int f(void) { return 1; }\n');
    const error = await withEnv({ [CLANG_ENV]: path.join(root, 'no-such-clang') }, () => caught(compileC(dir, ['src/main.c'])));
    expect(error).toBeInstanceOf(CCompileError);
    expect(error?.toolchainMissing).toBe('clang');
  });

  it('marks a clang that finds no wasm-ld as toolchainMissing "wasm-ld", with the lld hint', async () => {
    // A copy of the real clang in a folder of its own, with nothing else on PATH: clang looks
    // for wasm-ld beside itself and on PATH, and finds it in neither.
    const real = await realpath(execFileSync('sh', ['-c', 'command -v clang'], { encoding: 'utf8' }).trim());
    const bin = path.join(root, 'lonely-bin');
    await mkdir(bin);
    await copyFile(real, path.join(bin, 'clang'));
    const dir = await pack('no-wasm-ld', 'int f(void) { return 1; }\n');
    const error = await withEnv({ [CLANG_ENV]: path.join(bin, 'clang'), PATH: bin }, () => caught(compileC(dir, ['src/main.c'])));
    expect(error).toBeInstanceOf(CCompileError);
    expect(error?.toolchainMissing).toBe('wasm-ld');
    expect(error?.message).toMatch(/hint: wasm-ld is missing: apt-get install lld/);
  }, 60_000);

  it('leaves toolchainMissing unset on an error in the sources', async () => {
    const dir = await pack('broken', 'int f(void) { return undeclared; }\n');
    const error = await caught(compileC(dir, ['src/main.c']));
    expect(error).toBeInstanceOf(CCompileError);
    expect(error?.toolchainMissing).toBeUndefined();
    expect(error?.diagnostics).toMatch(/undeclared/);
  }, 60_000);
});
