// buildToolpack and findToolpackDirs on temporary copies of a real fixture pack, compiled with
// the real AssemblyScript compiler.

import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildToolpack, findToolpackDirs, ToolpackBuildError } from './build-toolpack.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const FIXTURE = path.join(REPO, 'bench/fixtures/echo');

let root: string;
let copies = 0;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-build-'));
  // Packs resolve @helix/sdk-as and asconfig's `extends` through node_modules, as in the repo.
  await symlink(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'), 'dir');
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A fresh copy of the echo fixture pack (without its build output). */
async function copyPack(): Promise<string> {
  const dir = path.join(root, 'packs', `echo-${++copies}`);
  await cp(FIXTURE, dir, { recursive: true, filter: (source) => path.basename(source) !== 'build' });
  return dir;
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('buildToolpack', () => {
  it('compiles the module and writes its sha256 digest into the manifest', async () => {
    const dir = await copyPack();
    const manifestPath = path.join(dir, 'echo.tool.yaml');
    const before = await readFile(manifestPath, 'utf8');
    const result = await buildToolpack(dir);
    expect(result.manifestPath).toBe(manifestPath);
    expect(result.modulePath).toBe(path.join(dir, 'build/echo.wasm'));
    expect(result.digest).toBe(sha256(await readFile(result.modulePath)));
    expect(result.warnings).toBe('');
    const after = await readFile(manifestPath, 'utf8');
    expect(after).toBe(before.replace(/^digest: .*$/m, `digest: ${result.digest}`));
  }, 60_000);

  it('changes nothing on a second build, and builds the same bytes from another copy', async () => {
    const dir = await copyPack();
    const first = await buildToolpack(dir);
    const manifest = await readFile(first.manifestPath, 'utf8');
    const second = await buildToolpack(dir);
    expect(second).toEqual({ ...first, changed: false });
    expect(await readFile(first.manifestPath, 'utf8')).toBe(manifest);
    const elsewhere = await buildToolpack(await copyPack());
    expect(elsewhere.digest).toBe(first.digest);
  }, 60_000);

  it('reports a compile error with the file and the compiler message, and writes nothing', async () => {
    const dir = await copyPack();
    await writeFile(path.join(dir, 'assembly/index.ts'), 'export function execute(ptr: i32, len: i32): i64 {\n  return missing(ptr);\n}\n');
    const manifestBefore = await readFile(path.join(dir, 'echo.tool.yaml'), 'utf8');
    const error = await buildToolpack(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolpackBuildError);
    expect((error as ToolpackBuildError).message).toMatch(/compile failed/);
    expect((error as ToolpackBuildError).diagnostics).toMatch(/Cannot find name 'missing'/);
    expect((error as ToolpackBuildError).diagnostics).toMatch(/assembly\/index\.ts\(2,10\)/);
    expect(await readFile(path.join(dir, 'echo.tool.yaml'), 'utf8')).toBe(manifestBefore);
    await expect(readFile(path.join(dir, 'build/echo.wasm'))).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it('explains a missing SDK import instead of only naming the abort handler asc could not find', async () => {
    const dir = await copyPack();
    await writeFile(path.join(dir, 'assembly/index.ts'), 'export function execute(ptr: i32, len: i32): i64 { return 0; }\n');
    await expect(buildToolpack(dir)).rejects.toThrow(
      /hint: the entry file must `export \{ alloc, dealloc, helix_panic \} from "@helix\/sdk-as"`/,
    );
  }, 60_000);

  it('refuses a helix/v1 module that imports env.abort, saying how to route abort', async () => {
    const dir = await copyPack();
    await writeFile(
      path.join(dir, 'asconfig.json'),
      JSON.stringify({ entries: ['assembly/index.ts'], options: { outFile: 'build/echo.wasm' } }),
    );
    await writeFile(
      path.join(dir, 'assembly/index.ts'),
      'export { alloc, dealloc, helix_panic } from "@helix/sdk-as";\n' +
        'export function execute(ptr: i32, len: i32): i64 { assert(len > 0); return 0; }\n',
    );
    await expect(buildToolpack(dir)).rejects.toThrow(/forbidden import env\.abort \(function\): route abort to the SDK/);
  }, 60_000);

  it('refuses an asconfig whose outFile is not the manifest module', async () => {
    const dir = await copyPack();
    const config = JSON.parse(await readFile(path.join(dir, 'asconfig.json'), 'utf8'));
    config.options.outFile = 'build/other.wasm';
    await writeFile(path.join(dir, 'asconfig.json'), JSON.stringify(config));
    await expect(buildToolpack(dir)).rejects.toThrow(
      /asconfig\.json must set outFile to the manifest's module \(build\/echo\.wasm\); the compiler wrote build\/other\.wasm/,
    );
  }, 60_000);

  it('refuses a directory without exactly one manifest', async () => {
    const dir = path.join(root, 'empty-pack');
    await mkdir(dir, { recursive: true });
    await expect(buildToolpack(dir)).rejects.toThrow(/expected exactly one \*\.tool\.yaml manifest, found 0/);
  });
});

describe('findToolpackDirs', () => {
  it('finds pack directories, sorted, without entering packs, build output or node_modules', async () => {
    const base = path.join(root, 'tree');
    const make = async (relative: string, file: string) => {
      await mkdir(path.join(base, relative), { recursive: true });
      await writeFile(path.join(base, relative, file), '');
    };
    await make('b-pack', 'b.tool.yaml');
    await make('b-pack/nested', 'inner.tool.yaml');
    await make('group/a-pack', 'a.tool.yaml');
    await make('node_modules/dep', 'dep.tool.yaml');
    await make('group/build', 'out.tool.yaml');
    await make('.hidden', 'h.tool.yaml');
    expect(await findToolpackDirs(base)).toEqual([path.join(base, 'b-pack'), path.join(base, 'group/a-pack')]);
  });
});

describe('buildToolpack for C packs (src/*.c, no asconfig.json)', () => {
  const GREET = [
    '#define HELIX_IMPLEMENTATION',
    '#include "helix.h"',
    'static helix_result handle(const helix_value *input) {',
    '  const char *name = helix_get_string(input, "name");',
    '  if (!name) return helix_error(HELIX_INVALID_INPUT, "name is required", "pass {\\"name\\": \\"...\\"}");',
    '  return helix_ok_json("true", 4);',
    '}',
    'HELIX_TOOL(handle)',
    '',
  ].join('\n');

  /** A C pack whose manifest has no digest yet, as `helix new --lang c` leaves it. */
  async function cPack(source: string = GREET, extra: Record<string, string> = {}): Promise<string> {
    const dir = path.join(root, 'c-packs', `greet-${++copies}`);
    await mkdir(path.join(dir, 'src'), { recursive: true });
    await writeFile(path.join(dir, 'src/main.c'), source);
    for (const [name, text] of Object.entries(extra)) await writeFile(path.join(dir, name), text);
    await writeFile(
      path.join(dir, 'greet.tool.yaml'),
      '# a C pack\nid: c.greet\nversion: 1.0.0\nabi: helix/v1\nmodule: build/greet.wasm\nentrypoint: execute\ndeterministic: pure\n',
    );
    return dir;
  }

  it('compiles with clang, inserts the digest, and builds the same bytes twice and from another directory', async () => {
    const dir = await cPack();
    const first = await buildToolpack(dir);
    const bytes = await readFile(first.modulePath);
    expect(first.modulePath).toBe(path.join(dir, 'build/greet.wasm'));
    expect(first.digest).toBe(sha256(bytes));
    expect(await readFile(first.manifestPath, 'utf8')).toMatch(new RegExp(`^entrypoint: execute\\ndigest: ${first.digest}$`, 'm'));
    expect(
      WebAssembly.Module.exports(new WebAssembly.Module(bytes))
        .map((e) => e.name)
        .sort(),
    ).toEqual(['alloc', 'dealloc', 'execute', 'helix_panic', 'memory']);
    expect(WebAssembly.Module.imports(new WebAssembly.Module(bytes))).toEqual([]);
    const second = await buildToolpack(dir);
    expect(second).toEqual({ ...first, changed: false });
    const elsewhere = await buildToolpack(await cPack());
    expect(elsewhere.digest).toBe(first.digest);
  }, 60_000);

  it('gives the same bytes whether or not a wasm-opt is on PATH', async () => {
    const plain = await buildToolpack(await cPack());
    const saved = process.env.PATH;
    // npm puts binaryen's wasm-opt here; clang would run it on an optimised link.
    process.env.PATH = `${path.join(REPO, 'node_modules/.bin')}${path.delimiter}${saved}`;
    try {
      expect((await buildToolpack(await cPack())).digest).toBe(plain.digest);
    } finally {
      process.env.PATH = saved;
    }
  }, 60_000);

  it('reports clang diagnostics with the file and line, and writes nothing', async () => {
    const dir = await cPack(
      '#define HELIX_IMPLEMENTATION\n#include "helix.h"\nstatic helix_result handle(const helix_value *input) { return missing(input); }\nHELIX_TOOL(handle)\n',
    );
    const manifestBefore = await readFile(path.join(dir, 'greet.tool.yaml'), 'utf8');
    const error = (await buildToolpack(dir).catch((caught: unknown) => caught)) as ToolpackBuildError;
    expect(error).toBeInstanceOf(ToolpackBuildError);
    expect(error.message).toMatch(/compile failed/);
    expect(error.diagnostics).toMatch(/src\/main\.c:3:\d+: error: implicit declaration of function 'missing'/);
    expect(await readFile(path.join(dir, 'greet.tool.yaml'), 'utf8')).toBe(manifestBefore);
    await expect(readFile(path.join(dir, 'build/greet.wasm'))).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it('says to define HELIX_IMPLEMENTATION when the SDK was only declared', async () => {
    const dir = await cPack(GREET.replace('#define HELIX_IMPLEMENTATION\n', ''));
    await expect(buildToolpack(dir)).rejects.toThrow(
      /undefined symbol: helix_\w+[\s\S]*hint: define HELIX_IMPLEMENTATION before including helix\.h in exactly one \.c file/,
    );
  }, 60_000);

  it('says there is no libc when a source calls one of its functions', async () => {
    const dir = await cPack(
      GREET.replace('return helix_ok_json("true", 4);', 'extern int puts(const char *); puts(name); return helix_ok_json("true", 4);'),
    );
    await expect(buildToolpack(dir)).rejects.toThrow(/hint: there is no libc: puts must come from your sources/);
  }, 60_000);

  it('refuses a module without the execute export, saying how the C SDK defines it', async () => {
    const dir = await cPack(GREET.replace('HELIX_TOOL(handle)', 'helix_result (*keep)(const helix_value *) = handle;'));
    await expect(buildToolpack(dir)).rejects.toThrow(/entrypoint execute is not an exported function/);
  }, 60_000);

  it('names the package to install when clang cannot be found', async () => {
    const dir = await cPack();
    const saved = process.env.HELIX_CLANG;
    process.env.HELIX_CLANG = path.join(root, 'no-such-clang');
    try {
      await expect(buildToolpack(dir)).rejects.toThrow(
        /clang not found \(.*no-such-clang\): C toolpacks need clang and wasm-ld\nhint: apt-get install clang lld/,
      );
    } finally {
      if (saved === undefined) delete process.env.HELIX_CLANG;
      else process.env.HELIX_CLANG = saved;
    }
  });

  it('refuses a pack with neither asconfig.json nor C sources', async () => {
    const dir = await cPack();
    await rm(path.join(dir, 'src'), { recursive: true });
    await expect(buildToolpack(dir)).rejects.toThrow(
      /nothing to build: no asconfig\.json \(AssemblyScript: entries, outFile, options\) and no src\/\*\.c/,
    );
  });
});
