// The built `build:wasm` script on a copy of the bundled C pack: without clang the install keeps
// the shipped module when it matches the manifest digest and skips a pack it cannot build, each
// with one line and exit 0; `--strict` (the test command's build) fails instead. A compiler's
// warning (clang's, asc's) is printed under its pack, and `--strict` refuses it. `--changed` (the
// fast test tier's build) compiles a pack again only when what its build reads changed.

import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';

const SCRIPT = path.join(packageRoot(), 'dist', 'scripts', 'build-wasm.js');
const GC_SKEW = path.join(packageRoot(), 'plugins', 'seq-gc-skew');
const ECHO = path.join(packageRoot(), 'bench', 'fixtures', 'echo');

let root: string | undefined;

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/** A root holding the C pack as shipped (plugins/) and a copy without its build (bench/fixtures/). */
async function makeRoot(): Promise<string> {
  root = await mkdtemp(path.join(tmpdir(), 'helix-build-wasm-'));
  await cp(GC_SKEW, path.join(root, 'plugins', 'seq-gc-skew'), { recursive: true });
  await cp(GC_SKEW, path.join(root, 'bench', 'fixtures', 'skew'), {
    recursive: true,
    filter: (source) => path.basename(source) !== 'build',
  });
  return root;
}

function buildWasm(cwd: string, args: string[], clang: string) {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, HELIX_CLANG: clang },
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('build:wasm without clang', () => {
  it('keeps the shipped module that matches the digest and skips the pack it cannot build, one line each, exit 0', async () => {
    const dir = await makeRoot();
    const manifest = await readFile(path.join(dir, 'plugins/seq-gc-skew/gc-skew.tool.yaml'), 'utf8');
    const result = buildWasm(dir, [], path.join(dir, 'no-clang'));
    expect(result.stdout.trim().split('\n')).toEqual([
      'kept  plugins/seq-gc-skew: clang not found; using the shipped build/gc-skew.wasm, which matches the manifest digest (apt-get install clang lld to rebuild)',
    ]);
    expect(result.stderr.trim().split('\n')).toEqual([
      'skip  bench/fixtures/skew: clang not found and build/gc-skew.wasm is missing, so its tool will not load; apt-get install clang lld, then npm run build',
    ]);
    expect(result.status).toBe(0);
    expect(await readFile(path.join(dir, 'plugins/seq-gc-skew/gc-skew.tool.yaml'), 'utf8')).toBe(manifest);
  }, 120_000);

  it('skips a shipped module whose bytes do not match the manifest digest', async () => {
    const dir = await makeRoot();
    const module = path.join(dir, 'plugins/seq-gc-skew/build/gc-skew.wasm');
    const bytes = await readFile(module);
    bytes[bytes.length - 1]! ^= 1;
    await writeFile(module, bytes);
    const result = buildWasm(dir, [], path.join(dir, 'no-clang'));
    expect(result.stderr).toContain(
      'skip  plugins/seq-gc-skew: clang not found and build/gc-skew.wasm does not match the manifest digest, so its tool will not load; apt-get install clang lld, then npm run build',
    );
    expect(result.stdout).not.toContain('kept');
    expect(result.status).toBe(0);
  }, 120_000);

  it('fails with --strict, naming the package to install', async () => {
    const dir = await makeRoot();
    const result = buildWasm(dir, ['--strict'], path.join(dir, 'no-clang'));
    expect(result.stderr).toMatch(/^FAIL {2}plugins\/seq-gc-skew: .*clang not found .*\nhint: apt-get install clang lld/m);
    expect(result.stderr).toContain('2 of 2 toolpacks failed to build');
    expect(result.status).toBe(1);
  }, 120_000);
});

describe('build:wasm with clang', () => {
  it('fails on an error in the sources even though a matching module is shipped', async () => {
    const dir = await makeRoot();
    await rm(path.join(dir, 'bench'), { recursive: true });
    const source = path.join(dir, 'plugins/seq-gc-skew/src/gc_skew.c');
    await writeFile(source, `${await readFile(source, 'utf8')}\nint broken(void) { return undeclared_name; }\n`);
    const result = buildWasm(dir, [], process.env.HELIX_CLANG || 'clang');
    expect(result.stderr).toMatch(/^FAIL {2}plugins\/seq-gc-skew: .*compile failed:[\s\S]*undeclared_name/m);
    expect(result.stdout).not.toContain('kept');
    expect(result.status).toBe(1);
  }, 120_000);
});

describe('build:wasm and compiler warnings', () => {
  /** A root with the C pack and the AssemblyScript echo pack, each with one line its compiler warns about. */
  async function warningRoot(): Promise<string> {
    root = await mkdtemp(path.join(tmpdir(), 'helix-build-wasm-'));
    // The AssemblyScript pack resolves @helix/sdk-as and asconfig's `extends` through node_modules.
    await symlink(path.join(packageRoot(), 'node_modules'), path.join(root, 'node_modules'), 'dir');
    const skew = path.join(root, 'plugins', 'seq-gc-skew');
    await cp(GC_SKEW, skew, { recursive: true });
    const cSource = path.join(skew, 'src/gc_skew.c');
    await writeFile(cSource, `${await readFile(cSource, 'utf8')}\nint toy(void) { int unused_local = 3; return 0; }\n`);
    const echo = path.join(root, 'plugins', 'echo');
    await cp(ECHO, echo, { recursive: true, filter: (source) => path.basename(source) !== 'build' });
    const asSource = path.join(echo, 'assembly/index.ts');
    const text = await readFile(asSource, 'utf8');
    await writeFile(
      asSource,
      text.replace(
        '  return packPointer(out, size);',
        '  let n: i32 = 0;\n  n += out;\n  store<u8>(out, <u8>n);\n  return packPointer(out, size);',
      ),
    );
    return root;
  }

  it('prints each warning under its pack and succeeds; with --strict the same warnings fail the build', async () => {
    const dir = await warningRoot();
    const clang = process.env.HELIX_CLANG || 'clang';
    const lenient = buildWasm(dir, [], clang);
    expect(lenient.stdout).toBe('');
    expect(lenient.stderr).toMatch(
      /^warn {2}plugins\/echo: plugins\/echo\/build\/echo\.wasm \d+ bytes .*, with the compiler's warnings:\n {6}WARNING AS201: /m,
    );
    expect(lenient.stderr).toMatch(
      /^warn {2}plugins\/seq-gc-skew: .*, with the compiler's warnings:\n {6}src\/gc_skew\.c:\d+:\d+: warning: unused variable 'unused_local'/m,
    );
    expect(lenient.status).toBe(0);
    const strict = buildWasm(dir, ['--strict'], clang);
    expect(strict.stderr).toMatch(
      /^FAIL {2}plugins\/echo: built, but the compiler warned, and --strict refuses a warning:\n {6}WARNING AS201: /m,
    );
    expect(strict.stderr).toMatch(
      /^FAIL {2}plugins\/seq-gc-skew: built, but the compiler warned, and --strict refuses a warning:\n.*unused variable/m,
    );
    expect(strict.stderr).toContain('2 of 2 toolpacks failed to build');
    expect(strict.status).toBe(1);
  }, 240_000);

  it('passes --strict on the packs as shipped, with no warning printed', async () => {
    const dir = await makeRoot();
    await rm(path.join(dir, 'bench'), { recursive: true });
    const result = buildWasm(dir, ['--strict'], process.env.HELIX_CLANG || 'clang');
    expect(result.stdout).toMatch(/^ok {4}plugins\/seq-gc-skew: /);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  }, 120_000);
});

describe('build:wasm --changed', () => {
  it('compiles a pack once, then again only when its sources or the compiler change', async () => {
    const dir = await makeRoot();
    await rm(path.join(dir, 'bench'), { recursive: true });
    const clang = process.env.HELIX_CLANG || 'clang';
    const line = (state: string) =>
      new RegExp(`^ok {4}plugins/seq-gc-skew: plugins/seq-gc-skew/build/gc-skew\\.wasm \\d+ bytes sha256:[0-9a-f]{12}… \\(${state}\\)$`);
    const changed = () => {
      const r = buildWasm(dir, ['--changed'], clang);
      expect(r.status).toBe(0);
      return r.stdout.trim();
    };
    expect(changed()).toMatch(line('unchanged'));
    expect(changed()).toMatch(line('current'));
    expect(JSON.parse(await readFile(path.join(dir, 'dist', '.build-wasm.json'), 'utf8')).packs).toHaveProperty(['plugins/seq-gc-skew']);
    // Without the flag every pack is compiled, as the install and the test command's build do.
    expect(buildWasm(dir, [], clang).stdout.trim()).toMatch(line('unchanged'));

    const source = path.join(dir, 'plugins/seq-gc-skew/src/gc_skew.c');
    await writeFile(source, `${await readFile(source, 'utf8')}\n/* an edit */\n`);
    expect(changed()).toMatch(line('unchanged'));
    expect(changed()).toMatch(line('current'));

    // Another clang (here none at all) is another input: the pack is not taken as current.
    const none = buildWasm(dir, ['--changed'], path.join(dir, 'no-clang'));
    expect(none.stdout).toMatch(/^kept {2}plugins\/seq-gc-skew: clang not found/m);
  }, 120_000);
});
