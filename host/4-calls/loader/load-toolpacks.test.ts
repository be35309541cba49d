import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HelixError, PolicySchema } from '../../../abi/index.js';
import { abiPrelude, echoModule, fixedOutputModule } from '../../../test/helpers/guest-wat.js';
import { toolpacksDir, tempDir, writeToolpack } from '../../../test/helpers/toolpack.js';
import { loadToolpacks, loadToolpacksOrThrow } from './load-toolpacks.js';
import { formatViolation } from '../../1-base/files/violation.js';

const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, ceilings: { maxMemoryPages: 64 } });
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function load(specs: Parameters<typeof toolpacksDir>[0]) {
  const p = await toolpacksDir(specs);
  cleanups.push(p.cleanup);
  const result = await loadToolpacks(p.dir, policy);
  return { ...result, dir: p.dir, lines: result.violations.map(formatViolation) };
}

describe('loadToolpacks', () => {
  it('loads a valid toolpack with schemas, limits capped by policy, and a compiled module', async () => {
    const { tools, violations } = await load([
      { id: 'test.echo', module: echoModule(), manifest: { limits: { maxInputBytes: 10, maxOutputBytes: 10, maxMemoryPages: 1000 } } },
    ]);
    expect(violations).toEqual([]);
    expect(tools).toHaveLength(1);
    const t = tools[0]!;
    expect(t.manifest.id).toBe('test.echo');
    expect(t.limits.maxMemoryPages).toBe(64);
    const { compiled } = await t.module.prepare();
    expect(compiled).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.Module.exports(compiled).map((e) => e.name)).toContain('__helix_fuel');
  });

  it('lists every violation of a bad manifest directory at once, as file: field: reason', async () => {
    const { tools, lines } = await load([
      { id: 'bad.snake', module: echoModule(), manifest: { timeout_ms: 5, timeoutMs: undefined } },
      { id: 'bad.version', module: echoModule(), manifest: { version: '1.0', deterministic: 'sometimes' } },
      { id: 'bad.digest', module: echoModule(), manifest: { digest: `sha256:${'a'.repeat(64)}` } },
      { id: 'bad.schema', module: echoModule(), inputSchema: { type: 'object', properties: { x: { type: 'strng' } } } },
      { id: 'bad.ref', module: echoModule(), inputSchema: { $ref: 'schemas/missing.json' } },
      { id: 'bad.limits', module: echoModule(), manifest: { limits: { maxInputBytes: 0, maxOutputBytes: 1 } } },
      { id: 'bad.caps', module: echoModule(), manifest: { capabilities: { abiVersion: 1, allow: ['teleport.now'] } } },
      { id: 'Bad-Id', module: echoModule(), dirName: 'badid' },
      { id: 'good.one', module: echoModule() },
    ]);
    expect(tools.map((t) => t.manifest.id)).toEqual(['good.one']);
    const expectLine = (re: RegExp) =>
      expect(
        lines.some((l) => re.test(l)),
        `${re} in\n${lines.join('\n')}`,
      ).toBe(true);
    expectLine(/bad_snake\.tool\.yaml:\d+: timeout_ms: unknown field; manifests use camelCase: write timeoutMs/);
    expectLine(/bad_snake\.tool\.yaml: timeoutMs: /);
    expectLine(/bad_version\.tool\.yaml:\d+: version: must be a semantic version/);
    expectLine(/bad_version\.tool\.yaml:\d+: deterministic: /);
    expectLine(/bad_digest\.tool\.yaml:\d+: digest: D-DATA-DIGEST-MISMATCH/);
    expectLine(/bad_schema\.tool\.yaml:\d+: inputSchema\.properties\.x\.type: not a valid JSON Schema: "strng" is not a JSON Schema type/);
    expectLine(/bad_ref\.tool\.yaml.*: inputSchema.*missing\.json does not exist/);
    expectLine(/bad_limits\.tool\.yaml:\d+: limits\.maxInputBytes: /);
    expectLine(/bad_caps\.tool\.yaml:\d+: capabilities\.allow\[0\]: unknown capability teleport\.now/);
    expectLine(/Bad-Id\.tool\.yaml:\d+: id: must be dotted lowercase/);
  });

  it('refuses a module outside the toolpack directory and a missing module (ABI-FILE-001)', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    await writeToolpack(t.dir, { id: 'esc.ape', module: echoModule(), manifest: { module: '../../etc/passwd.wasm' } });
    await writeToolpack(t.dir, { id: 'gone.module', module: echoModule(), manifest: { module: 'nothere.wasm' } });
    const lines = (await loadToolpacks(t.dir, policy)).violations.map(formatViolation);
    expect(
      lines.some((l) => /esc_ape.*module: \.\.\/\.\.\/etc\/passwd\.wasm leaves the toolpack directory .*\(ABI-FILE-001\)/.test(l)),
    ).toBe(true);
    expect(lines.some((l) => /gone_module.*module: .*nothere\.wasm does not exist; build the toolpack first/.test(l))).toBe(true);
  });

  it('rejects the same id and version twice, and accepts two versions of one id', async () => {
    const dup = await load([
      { id: 'dup.tool', module: echoModule(), dirName: 'a' },
      { id: 'dup.tool', module: echoModule(), dirName: 'b' },
    ]);
    expect(dup.lines.some((l) => /duplicate tool dup\.tool@1\.0\.0: also defined in/.test(l))).toBe(true);
    const two = await load([
      { id: 'ver.tool', module: echoModule(), dirName: 'a' },
      { id: 'ver.tool', module: echoModule(), dirName: 'b', manifest: { version: '2.0.0' } },
    ]);
    expect(two.violations).toEqual([]);
    expect(two.tools.map((t) => t.manifest.version)).toEqual(['1.0.0', '2.0.0']);
  });

  it('follows $ref schemas relative to the manifest', async () => {
    const p = await toolpacksDir([{ id: 'ref.tool', module: echoModule(), inputSchema: { $ref: 'schemas/in.json' } }]);
    cleanups.push(p.cleanup);
    mkdirSync(path.join(p.dir, 'ref.tool', 'schemas'));
    writeFileSync(
      path.join(p.dir, 'ref.tool', 'schemas', 'in.json'),
      JSON.stringify({ type: 'object', properties: { s: { $ref: 'str.json' } } }),
    );
    writeFileSync(path.join(p.dir, 'ref.tool', 'schemas', 'str.json'), JSON.stringify({ type: 'string', minLength: 2 }));
    const { tools, violations } = await loadToolpacks(p.dir, policy);
    expect(violations).toEqual([]);
    expect(tools[0]!.validateInput({ s: 'ab' })).toEqual([]);
    expect(tools[0]!.validateInput({ s: 'a' })).toHaveLength(1);
  });

  it('reports a broken schema file against that file, not the manifest', async () => {
    const p = await toolpacksDir([{ id: 'ref.broken', module: echoModule(), inputSchema: { $ref: 'schemas/in.json' } }]);
    cleanups.push(p.cleanup);
    mkdirSync(path.join(p.dir, 'ref.broken', 'schemas'));
    writeFileSync(
      path.join(p.dir, 'ref.broken', 'schemas', 'in.json'),
      JSON.stringify({ type: 'object', properties: { s: { $ref: 'str.json' } } }),
    );
    writeFileSync(path.join(p.dir, 'ref.broken', 'schemas', 'str.json'), '{ "type": "string", }');
    const lines = (await loadToolpacks(p.dir, policy)).violations.map(formatViolation);
    expect(lines).toEqual([expect.stringMatching(/schemas\/str\.json:1: -: not valid JSON at line 1, column 21: /)]);
  });

  it('fails closed: loadToolpacksOrThrow throws P-PRECOND-MANIFEST-INVALID with every violation', async () => {
    const p = await toolpacksDir([
      { id: 'ok.tool', module: echoModule() },
      { id: 'bad.tool', module: echoModule(), manifest: { abi: 'helix/v9', limits: {} } },
    ]);
    cleanups.push(p.cleanup);
    const err = await loadToolpacksOrThrow(p.dir, policy).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HelixError);
    expect((err as HelixError).code).toBe('P-PRECOND-MANIFEST-INVALID');
    expect(((err as HelixError).details.violations as string[]).length).toBeGreaterThanOrEqual(3);
  });

  it('reports a missing toolpacks directory and an empty one', async () => {
    const err = await loadToolpacks('/nonexistent/plugins', policy).catch((e: unknown) => e);
    expect((err as HelixError).code).toBe('P-PRECOND-PLUGINS-DIR');
    const t = tempDir();
    cleanups.push(t.cleanup);
    expect((await loadToolpacks(t.dir, policy)).violations[0]?.reason).toMatch(/no \*\.tool\.yaml manifests found/);
  });
});

/** Malformed modules: each must be refused at load with its ABI reason. */
const MALFORMED: Array<[string, string | Uint8Array, RegExp]> = [
  ['not wasm at all', new TextEncoder().encode('hello world, not wasm'), /ABI-MODULE-001: cannot decode/],
  ['truncated module', new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01]), /ABI-MODULE-001/],
  [
    'no memory export',
    `(module (func (export "alloc") (param i32) (result i32) (i32.const 0)) (func (export "dealloc") (param i32 i32)) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-EXPORT-001/,
  ],
  [
    'no alloc',
    `(module (memory (export "memory") 1) (func (export "dealloc") (param i32 i32)) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-EXPORT-002: the module must export a function "alloc"/,
  ],
  [
    'alloc with wrong signature',
    `(module (memory (export "memory") 1) (func (export "alloc") (param i64) (result i32) (i32.const 0)) (func (export "dealloc") (param i32 i32)) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-EXPORT-002: export "alloc" has signature \(i64\) -> \(i32\)/,
  ],
  [
    'no dealloc',
    `(module (memory (export "memory") 1) (func (export "alloc") (param i32) (result i32) (i32.const 0)) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-EXPORT-003/,
  ],
  [
    'execute returning i32',
    `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i32) (i32.const 0)))`,
    /ABI-EXPORT-004: export "execute" has signature/,
  ],
  [
    'env.abort import',
    `(module (import "env" "abort" (func (param i32 i32 i32 i32))) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-IMPORT-001: import env\.abort .*--use abort/,
  ],
  [
    'WASI import',
    `(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-IMPORT-001: import wasi_snapshot_preview1\.fd_write/,
  ],
  [
    'capability_call with wrong signature',
    `(module (import "helix_v1" "capability_call" (func (param i32) (result i64))) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-IMPORT-002/,
  ],
  [
    'capability_call_bulk under capabilities.abiVersion 1',
    `(module (import "helix_v1" "capability_call_bulk" (func (param i32 i32 i32 i32) (result i64))) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /capabilities\.abiVersion: ABI-IMPORT-001: the module imports helix_v1\.capability_call_bulk, the bulk path of capability ABI 2, but the manifest says capabilities\.abiVersion: 1; set capabilities\.abiVersion: 2/,
  ],
  [
    'imported memory',
    `(module (import "env" "memory" (memory 1)) (func (export "alloc") (param i32) (result i32) (i32.const 0)) (func (export "dealloc") (param i32 i32)) (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
    /ABI-IMPORT-001: import env\.memory \(memory\)/,
  ],
  [
    'initial memory above the cap',
    fixedOutputModule('{}').replace('(memory (export "memory") 1)', '(memory (export "memory") 100)'),
    /ABI-MEMORY-003: memory 0 starts at 100 pages, above the cap of 16 pages/,
  ],
  ['reserved export name', fixedOutputModule('{}', '(global (export "__helix_fuel") i32 (i32.const 0))'), /ABI-EXPORT-007|reserved/],
  ['bad panic export', fixedOutputModule('{}', '(func (export "helix_panic") (result i32) (i32.const 0))'), /ABI-EXPORT-006/],
];

describe('the loader refuses malformed modules', () => {
  it.each(MALFORMED)('%s', async (_name, module, reason) => {
    const { tools, lines } = await load([{ id: 'mal.formed', module }]);
    expect(tools).toEqual([]);
    expect(
      lines.some((l) => reason.test(l)),
      `${reason} in\n${lines.join('\n')}`,
    ).toBe(true);
  });

  it('takes capability_call_bulk under capabilities.abiVersion 2, with its exact signature only', async () => {
    const bulk = (params: string) =>
      `(module (import "helix_v1" "capability_call_bulk" (func (param ${params}) (result i64))) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`;
    const manifest = { capabilities: { abiVersion: 2 as const, allow: [] } };
    const good = await load([{ id: 'bulk.good', module: bulk('i32 i32 i32 i32'), manifest }]);
    expect(good.lines).toEqual([]);
    expect(good.tools.map((t) => t.manifest.id)).toEqual(['bulk.good']);
    const bad = await load([{ id: 'bulk.bad', module: bulk('i32 i32'), manifest }]);
    expect(bad.tools).toEqual([]);
    expect(bad.lines.join('\n')).toMatch(
      /ABI-IMPORT-002: helix_v1\.capability_call_bulk must be imported as a function \(i32, i32, i32, i32\) -> \(i64\), found func \(i32, i32\) -> \(i64\)/,
    );
  });
});
