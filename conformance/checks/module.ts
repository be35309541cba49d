// Conformance checks: module shape and imports. A module that breaks the ABI's shape must be
// refused when the host loads it, with the violation named, before any call is served.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createHost, hostStore } from '../../host/5-host/host.js';
import { moduleCacheKey } from '../../host/4-calls/loader/loader-cache.js';
import { readAudit } from '../../host/3-store/audit.js';
import { rawDatabases } from '../../host/3-store/raw-access.js';
import { instrumentModule } from '../../host/2-sandbox/wasm/index.js';
import { packageRoot } from '../../host/1-base/paths.js';
import { collectSourceInputs, stampPath, stampText } from '../../host/6-faces/toolchain/source-stamp.js';
import { checkDefaultPolicy } from '../runner.js';
import { expect, expectOutcome, expectSuccess, type Check, type CheckContext } from '../check.js';
import { EXTISM_ECHO } from '../kit/canary.js';
import { extismWat } from '../kit/extism-wat.js';
import { abiPrelude, echoModule, fixedOutputModule } from '../kit/guest-wat.js';
import { DEFAULT_LIMITS, digestOf, writeToolpack } from '../kit/toolpack.js';
import { wat2wasm } from '../kit/wat.js';

/** A helix/v1 module that meets the ABI, with `extra` fields. */
const okHelix = (extra = ''): string =>
  `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const 0)) ${extra})`;
/** An extism/v1 manifest's fields. */
const extismManifest = (more: Record<string, unknown> = {}): Record<string, unknown> => ({ abi: 'extism/v1', entrypoint: 'run', ...more });

/** The refusal's violation lines (`file:line: field: reason`). */
function violationsOf(refusal: { details: Record<string, unknown> }): string[] {
  const v = refusal.details.violations;
  return Array.isArray(v) ? v.map(String) : [];
}

/** Starts the host expecting a P-PRECOND-MANIFEST-INVALID refusal; returns its violation lines (observed). */
async function refusedWith(ctx: CheckContext): Promise<string[]> {
  const refusal = await ctx.refusedStart();
  expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID: ${refusal.message}`);
  const lines = violationsOf(refusal);
  ctx.observe('violations', lines);
  return lines;
}

/** Fails unless some line matches every pattern. */
function expectLine(lines: readonly string[], what: string, ...patterns: RegExp[]): void {
  expect(
    lines.some((l) => patterns.every((p) => p.test(l))),
    `no violation ${what} (${patterns.map(String).join(', ')}) among: ${JSON.stringify(lines)}`,
  );
}

/** Runs the CLI (bounded); resolves with its exit code and output. */
function cli(args: readonly string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(packageRoot(), 'dist', 'cli', 'main.js'), ...args],
      { timeout: timeoutMs, maxBuffer: 16 * 2 ** 20 },
      (err, stdout, stderr) => {
        const code =
          err === null
            ? 0
            : typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number'
              ? (err as unknown as { code: number }).code
              : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export const moduleChecks: readonly Check[] = [
  {
    id: 'module.import-outside-abi',
    title: 'A module importing a function outside the ABI is refused at load',
    category: 'module',
    abi: ['ABI-IMPORT-001', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-MANIFEST-INVALID naming the import',
    packs: () => [
      {
        id: 'module.wasi',
        module: `(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))) ${abiPrelude()}
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
    ],
    async run(ctx) {
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID`);
      const violations = JSON.stringify(refusal.details);
      expect(
        violations.includes('fd_write') && violations.includes('ABI-IMPORT-001'),
        `the refusal does not name the import and its rule: ${violations}`,
      );
      ctx.observe('violations', refusal.details.violations);
    },
  },
  {
    id: 'module.non-function-imports',
    title: 'Imported memory, table, global and tag, and the bulk import under capability ABI 1, are refused',
    category: 'module',
    abi: ['ABI-IMPORT-001', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with one ABI-IMPORT-001 violation per forbidden import (table, global, tag), and capability_call_bulk under abiVersion 1 naming the fix capabilities.abiVersion: 2',
    packs: () => [
      {
        id: 'module.imports_things',
        module: `(module
  (import "helix_v1" "table" (table 4 funcref))
  (import "env" "secret" (global i32))
  (import "env" "boom" (tag (param i32)))
  ${abiPrelude()}
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
      {
        id: 'module.bulk_under_v1',
        module: `(module (import "helix_v1" "capability_call_bulk" (func (param i32 i32 i32 i32) (result i64))) ${abiPrelude()}
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the imported table', /ABI-IMPORT-001/, /helix_v1\.table \(table\)/);
      expectLine(lines, 'for the imported global', /ABI-IMPORT-001/, /env\.secret \(global\)/);
      expectLine(lines, 'for the imported tag', /ABI-IMPORT-001/, /env\.boom \(tag\)/);
      expectLine(
        lines,
        'for the bulk import under abiVersion 1',
        /capabilities\.abiVersion/,
        /ABI-IMPORT-001/,
        /set capabilities\.abiVersion: 2/,
      );
    },
  },
  {
    id: 'module.capability-call-mistyped',
    title: 'helix_v1.capability_call and capability_call_bulk imported with the wrong signatures are refused',
    category: 'module',
    abi: ['ABI-IMPORT-002'],
    engines: ['helix'],
    expected: 'P-PRECOND-MANIFEST-INVALID; ABI-IMPORT-002 names each import, the signature required and the one found',
    packs: () => [
      {
        id: 'module.cap_i32',
        module: `(module (import "helix_v1" "capability_call" (func (param i32) (result i32))) ${abiPrelude()}
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
      {
        id: 'module.bulk_mistyped',
        module: `(module (import "helix_v1" "capability_call_bulk" (func (param i32 i32) (result i64))) ${abiPrelude()}
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
        manifest: { capabilities: { abiVersion: 2, allow: [] } },
      },
      {
        id: 'module.cap_as_global',
        module: `(module (import "helix_v1" "capability_call" (global i64)) ${abiPrelude()}
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(
        lines,
        'for capability_call (i32) -> (i32)',
        /module_cap_i32/,
        /ABI-IMPORT-002/,
        /\(i32, i32\) -> \(i64\)/,
        /found func \(i32\) -> \(i32\)/,
      );
      expectLine(
        lines,
        'for capability_call_bulk (i32, i32) -> (i64)',
        /module_bulk_mistyped/,
        /ABI-IMPORT-002/,
        /\(i32, i32, i32, i32\) -> \(i64\)/,
      );
      expectLine(lines, 'for capability_call imported as a global', /module_cap_as_global/, /ABI-IMPORT-002/, /found global/);
      expect(lines.length === 3, `expected exactly 3 violations, got ${lines.length}`);
    },
  },
  {
    id: 'module.missing-and-mistyped-exports',
    title: 'Missing memory, mistyped alloc and dealloc, absent entrypoint: every violation reported at once',
    category: 'module',
    abi: ['ABI-EXPORT-001', 'ABI-EXPORT-002', 'ABI-EXPORT-003', 'ABI-EXPORT-004', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID listing, in one refusal, ABI-EXPORT-001 (no memory export), -002 (alloc (i64) -> (i64)), -003 (dealloc missing), -004 (execute (i32) -> (i32)) and -004 for a manifest entrypoint the module lacks',
    packs: () => [
      {
        id: 'module.shapeless',
        module: `(module (memory 1) (export "mem" (memory 0))
  (func (export "alloc") (param i64) (result i64) (i64.const 0))
  (func (export "execute") (param i32) (result i32) (i32.const 0)))`,
      },
      {
        id: 'module.no_entry',
        module: okHelix(),
        manifest: { entrypoint: 'main' },
      },
      {
        id: 'module.memory_is_function',
        module: `(module (memory 1)
  (func (export "memory"))
  (global $bump (mut i32) (i32.const 4096))
  (func (export "alloc") (param i32) (result i32) (i32.const 0))
  (func (export "dealloc") (param i32 i32))
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the missing memory export', /module_shapeless/, /ABI-EXPORT-001/);
      expectLine(lines, 'for the mistyped alloc', /module_shapeless/, /ABI-EXPORT-002/, /\(i64\) -> \(i64\)/);
      expectLine(lines, 'for the missing dealloc', /module_shapeless/, /ABI-EXPORT-003/, /dealloc/);
      expectLine(lines, 'for the mistyped execute', /module_shapeless/, /ABI-EXPORT-004/, /\(i32\) -> \(i32\)/);
      expectLine(lines, 'for the entrypoint the module lacks', /module_no_entry/, /entrypoint: ABI-EXPORT-004/, /"main"/);
      expectLine(lines, 'for "memory" exported as a function', /module_memory_is_function/, /ABI-EXPORT-001/);
      ctx.observe('violation_count', lines.length);
    },
  },
  {
    id: 'module.reserved-and-panic-exports',
    title: 'Exports under the reserved __helix_ prefix and a mistyped helix_panic are refused, on both ABIs',
    category: 'module',
    abi: ['ABI-EXPORT-006', 'ABI-EXPORT-007'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID naming ABI-EXPORT-007 for an export named __helix_fuel (a name the instrumenter uses) and, on helix/v1, ABI-EXPORT-006 for helix_panic exported as (i32) -> (i32)',
    packs: (engine) =>
      engine === 'extism'
        ? [
            {
              id: 'module.reserved',
              module: extismWat('(i32.const 0)', {
                extra: '(global (export "__helix_fuel") (mut i64) (i64.const 0)) (func (export "__helix_start"))',
              }),
              manifest: extismManifest(),
            },
          ]
        : [
            {
              id: 'module.reserved',
              module: okHelix('(global (export "__helix_fuel") (mut i64) (i64.const 0)) (func (export "__helix_start"))'),
            },
            { id: 'module.bad_panic', module: okHelix('(func (export "helix_panic") (param i32) (result i32) (i32.const 0))') },
          ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for __helix_fuel', /ABI-EXPORT-007/, /"__helix_fuel"/);
      expectLine(lines, 'for __helix_start', /ABI-EXPORT-007/, /"__helix_start"/);
      if (ctx.engine === 'helix') expectLine(lines, 'for the mistyped helix_panic', /module_bad_panic/, /ABI-EXPORT-006/, /helix_panic/);
    },
  },
  {
    id: 'module.extra-exports-and-panic',
    title:
      "Extra exports are ignored; a trapping guest's helix_panic message lands in the error, and a looping helix_panic cannot hold the call",
    category: 'module',
    abi: ['ABI-EXPORT-005', 'ABI-EXPORT-006'],
    engines: ['helix'],
    expected:
      'the module with extra exports (functions, a global, a table) loads and serves; a trap is S-TOOL-TRAP with details.panic the exported message, a 5000-byte message cut to at most 1024 bytes; a helix_panic that loops forever still ends the call with S-TOOL-TRAP promptly (small fuel allowance), without a panic message',
    packs: () => [
      {
        id: 'module.panicky',
        module: `(module ${abiPrelude()}
  (data (i32.const 64) "the guest gave up: bad input")
  (table (export "tbl") 2 funcref)
  (global (export "answer") i32 (i32.const 42))
  (func (export "extra_entry") (result i32) (i32.const 7))
  (func (export "helix_panic") (result i64) (i64.or (i64.shl (i64.const 64) (i64.const 32)) (i64.const 28)))
  (func (export "execute") (param i32 i32) (result i64) unreachable))`,
      },
      {
        id: 'module.panic_loops',
        module: `(module ${abiPrelude()}
  (func (export "helix_panic") (result i64) (loop $l (br $l)) (i64.const 0))
  (func (export "execute") (param i32 i32) (result i64) unreachable))`,
        manifest: { limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000 }, timeoutMs: 20_000 },
      },
      {
        id: 'module.panic_long',
        module: `(module ${abiPrelude()}
  (data (i32.const 8192) "${'x'.repeat(5000)}")
  (func (export "helix_panic") (result i64) (i64.or (i64.shl (i64.const 8192) (i64.const 32)) (i64.const 5000)))
  (func (export "execute") (param i32 i32) (result i64) unreachable))`,
      },
      {
        id: 'module.extras_ok',
        module: echoModule(
          '(func (export "not_called") (result i32) unreachable) (global (export "flag") i32 (i32.const 1)) (table (export "fns") 1 funcref)',
        ),
      },
    ],
    async run(ctx) {
      const ok = await ctx.call('module.extras_ok', { hello: 'extra exports' });
      const out = expectSuccess(ok);
      expect(out.hello === 'extra exports', `the echo with extra exports answered ${JSON.stringify(out)}`);
      const r = await ctx.call('module.panicky', {});
      expectOutcome(r, 'terminal_error', 'S-TOOL-TRAP');
      expect(r.error?.details?.panic === 'the guest gave up: bad input', `details.panic is ${JSON.stringify(r.error?.details?.panic)}`);
      ctx.observe('panic_details', r.error?.details);
      const long = await ctx.call('module.panic_long', {});
      expectOutcome(long, 'terminal_error', 'S-TOOL-TRAP');
      const text = long.error?.details?.panic;
      expect(
        typeof text === 'string' && text.length > 0 && text.length <= 1024,
        `a 5000-byte panic message gave details.panic of ${typeof text === 'string' ? text.length : JSON.stringify(text)} characters, not at most 1024`,
      );
      ctx.observe('long_panic_chars', (text as string).length);
      const t0 = performance.now();
      const loops = await ctx.call('module.panic_loops', {});
      const ms = performance.now() - t0;
      expectOutcome(loops, 'terminal_error', 'S-TOOL-TRAP');
      expect(
        loops.error?.details?.panic === undefined,
        `a looping helix_panic produced a message: ${JSON.stringify(loops.error?.details?.panic)}`,
      );
      expect(ms < 10_000, `the call with a looping helix_panic took ${Math.round(ms)} ms`);
      ctx.observe('looping_panic_ms', Math.round(ms));
    },
  },
  {
    id: 'module.not-webassembly',
    title: 'Bad magic, a truncated module, a function body cut short and a GC-proposal module are refused',
    category: 'module',
    abi: ['ABI-MODULE-001', 'ABI-LOAD-001', 'ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with one ABI-MODULE-001 violation per toolpack (four), each saying why the module cannot be decoded',
    async packs(engine) {
      const good = await wat2wasm(engine === 'extism' ? extismWat('(i32.const 0)') : okHelix());
      const manifest = engine === 'extism' ? extismManifest() : {};
      // The code section is the last one: cutting the last bytes cuts a function body.
      const cutBody = good.slice(0, good.length - 3);
      const packs = [
        { id: 'module.elf', module: new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 0, 0, 0, ...good.slice(8)]), manifest },
        { id: 'module.truncated', module: good.slice(0, 5), manifest },
        { id: 'module.cut_body', module: cutBody, manifest },
      ];
      // A GC-proposal type (a struct, form 0x5f), written by hand: wabt cannot write it.
      packs.push({ id: 'module.gc', module: GC_MODULE, manifest });
      return packs;
    },
    async run(ctx) {
      const lines = await refusedWith(ctx);
      for (const id of ['module_elf', 'module_truncated', 'module_cut_body', 'module_gc']) {
        expectLine(lines, `for ${id}`, new RegExp(id), /ABI-MODULE-001/);
      }
    },
  },
  {
    id: 'module.digest-mismatch',
    title: 'A module swapped after its manifest was written (digest mismatch) is refused',
    category: 'module',
    abi: ['ABI-MODULE-002', 'ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected: "P-PRECOND-MANIFEST-INVALID at the digest field, D-DATA-DIGEST-MISMATCH naming the module's real digest and the manifest's",
    async packs(engine) {
      const decoy = await wat2wasm(engine === 'extism' ? extismWat('(i32.const 0)') : okHelix());
      const evil =
        engine === 'extism'
          ? extismWat('(loop $l (br $l)) (i32.const 0)')
          : okHelix().replace('(i64.const 0)', '(loop $l (br $l)) (i64.const 0)');
      return [
        { id: 'module.swapped', module: evil, manifest: { ...(engine === 'extism' ? extismManifest() : {}), digest: digestOf(decoy) } },
      ];
    },
    async run(ctx) {
      const lines = await refusedWith(ctx);
      const dir = path.join(await ctx.pluginsDir(), 'module.swapped');
      const real = digestOf(readFileSync(path.join(dir, 'tool.wasm')));
      expectLine(lines, 'at digest naming both digests', /digest: D-DATA-DIGEST-MISMATCH/, new RegExp(real.replace(':', '.')));
      ctx.observe('module_digest', real);
    },
  },
  {
    id: 'module.memory64',
    title: 'A 64-bit memory is refused on both ABIs',
    category: 'module',
    abi: ['ABI-MEMORY-001', 'ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected: 'P-PRECOND-MANIFEST-INVALID: ABI-MEMORY-001 memory 0 is 64-bit',
    packs: (engine) => [
      engine === 'extism'
        ? {
            id: 'module.wide',
            module: '(module (memory (export "memory") i64 1) (func (export "run") (result i32) (i32.const 0)))',
            manifest: extismManifest(),
          }
        : {
            id: 'module.wide',
            module: `(module (memory (export "memory") i64 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "dealloc") (param i32 i32))
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
          },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for memory64', /module_wide/, /ABI-MEMORY-001/, /64-bit/);
    },
  },
  {
    id: 'module.start-function',
    title: 'A start function that spins or traps runs inside the call, metered, never at load',
    category: 'module',
    abi: ['ABI-EXTISM-005', 'ABI-CALL-002'],
    engines: ['helix', 'extism'],
    expected:
      'the host starts (the loader runs no guest code); a call of the spinning start ends S-TOOL-FUEL-EXHAUSTED with fuel_used at least the budget; a trapping start ends S-TOOL-TRAP',
    packs: (engine) => {
      const limits = { ...DEFAULT_LIMITS, fuel: 2_000_000 };
      const spin = '(start $init) (func $init (loop $l (br $l)))';
      const trap = '(start $init) (func $init unreachable)';
      return engine === 'extism'
        ? [
            {
              id: 'module.start_spin',
              module: extismWat('(i32.const 0)', { extra: spin }),
              manifest: extismManifest({ limits, timeoutMs: 30_000 }),
            },
            { id: 'module.start_trap', module: extismWat('(i32.const 0)', { extra: trap }), manifest: extismManifest({ limits }) },
          ]
        : [
            { id: 'module.start_spin', module: okHelix(spin), manifest: { limits, timeoutMs: 30_000 } },
            { id: 'module.start_trap', module: okHelix(trap), manifest: { limits } },
          ];
    },
    async run(ctx) {
      const t0 = performance.now();
      await ctx.host();
      ctx.observe('host_start_ms', Math.round(performance.now() - t0));
      const spin = await ctx.call('module.start_spin', {});
      expectOutcome(spin, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(spin.metrics.fuel_used >= 2_000_000, `fuel_used ${spin.metrics.fuel_used} is below the budget`);
      const trap = await ctx.call('module.start_trap', {});
      expectOutcome(trap, 'terminal_error', 'S-TOOL-TRAP');
      ctx.observe('trap_details', trap.error?.details);
    },
  },
  {
    id: 'module.extism-forbidden-exports',
    title: 'An Extism plugin exporting _start, _initialize or hs_init is refused',
    category: 'module',
    abi: ['ABI-EXTISM-005'],
    engines: ['extism'],
    expected: 'P-PRECOND-MANIFEST-INVALID with an ABI-EXTISM-005 violation for each of _start, _initialize and hs_init',
    packs: () => [
      {
        id: 'module.init_exports',
        module: extismWat('(i32.const 0)', {
          extra: '(func (export "_start") (loop $l (br $l))) (func (export "_initialize")) (func (export "hs_init"))',
        }),
        manifest: extismManifest(),
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      for (const name of ['_start', '_initialize', 'hs_init']) expectLine(lines, `for ${name}`, /ABI-EXTISM-005/, new RegExp(`"${name}"`));
    },
  },
  {
    id: 'module.extism-kernel-imports',
    title: "An Extism plugin importing the kernel's HTTP functions, foreign modules, a global, or a mistyped broker is refused",
    category: 'module',
    abi: ['ABI-EXTISM-002'],
    engines: ['extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with one ABI-EXTISM-002 violation per import: http_request (pointing at the broker), env.abort, a global from extism:host/env, helix_capability_call as (i32) -> (i32), store_u8 mistyped',
    packs: () => [
      {
        id: 'module.x_imports',
        module: `(module
  (import "extism:host/env" "http_request" (func (param i64 i64) (result i64)))
  (import "env" "abort" (func (param i32 i32 i32 i32)))
  (import "extism:host/env" "input_length" (global i64))
  (import "extism:host/user" "helix_capability_call" (func (param i32) (result i32)))
  (import "extism:host/env" "store_u8" (func (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32) (i32.const 0)))`,
        manifest: extismManifest(),
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for http_request', /ABI-EXTISM-002/, /http_request/, /broker/);
      expectLine(lines, 'for env.abort', /ABI-EXTISM-002/, /env\.abort/);
      expectLine(lines, 'for the imported global', /ABI-EXTISM-002/, /input_length/, /found global/);
      expectLine(
        lines,
        'for the mistyped broker',
        /ABI-EXTISM-002/,
        /helix_capability_call must be imported as a function \(i64\) -> \(i64\)/,
      );
      expectLine(lines, 'for the mistyped store_u8', /ABI-EXTISM-002/, /store_u8/);
      expect(lines.length === 5, `expected 5 violations, got ${lines.length}`);
    },
  },
  {
    id: 'module.extism-entry-and-memory',
    title: 'An Extism plugin without its entrypoint in the manifest, with a mistyped entry, or without a memory export is refused',
    category: 'module',
    abi: ['ABI-EXTISM-001', 'ABI-EXTISM-003'],
    engines: ['extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID: ABI-EXTISM-003 for a manifest without entrypoint, for run (i32) -> (i32), for an entrypoint the module does not export; ABI-EXTISM-001 for no memory export',
    packs: () => [
      { id: 'module.x_no_entrypoint', module: extismWat('(i32.const 0)'), manifest: { abi: 'extism/v1' } },
      {
        id: 'module.x_mistyped',
        module: '(module (func (export "run") (param i32) (result i32) (i32.const 0)))',
        manifest: extismManifest(),
      },
      { id: 'module.x_absent', module: extismWat('(i32.const 0)'), manifest: extismManifest({ entrypoint: 'main' }) },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the missing entrypoint field', /module_x_no_entrypoint/, /ABI-EXTISM-003/);
      expectLine(lines, 'for the mistyped entry', /module_x_mistyped/, /ABI-EXTISM-003/, /\(i32\) -> \(i32\)/);
      expectLine(lines, 'for the missing memory', /module_x_mistyped/, /ABI-EXTISM-001/, /"memory"/);
      expectLine(lines, 'for the absent entry', /module_x_absent/, /ABI-EXTISM-003/, /"main"/);
    },
  },
  {
    id: 'module.extism-uninstantiable',
    title: 'An Extism plugin whose data segment lies past its memory is refused at load, before Extism sees it',
    category: 'module',
    abi: ['ABI-EXTISM-001'],
    engines: ['extism'],
    expected: 'P-PRECOND-MANIFEST-INVALID: ABI-EXTISM-001 the module cannot be instantiated (data segment out of bounds)',
    packs: () => [
      {
        id: 'module.x_oob',
        module: '(module (memory (export "memory") 1) (data (i32.const 65535) "xy") (func (export "run") (result i32) (i32.const 0)))',
        manifest: extismManifest(),
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the out-of-bounds segment', /ABI-EXTISM-001/, /cannot be instantiated/, /data segment/i);
    },
  },
  {
    id: 'module.extism-broker-offsets',
    title: "helix_capability_call with an offset naming no block ends the call; a real block gets the broker's answer",
    category: 'module',
    abi: ['ABI-EXTISM-004'],
    engines: ['extism'],
    expected:
      "an offset naming no block (block 99 of a call that made two, block 0x7fff) ends the call with S-TOOL-BAD-POINTER; a request in a real block for a capability not allowed gets the forbidden answer A-AUTH-FORBIDDEN as the plugin's output",
    packs: () => [
      {
        id: 'module.x_bad_offset',
        module: extismWat('(drop (call $cap (i64.const 0x0063000000000000))) (i32.const 0)'),
        manifest: extismManifest(),
      },
      {
        id: 'module.x_huge_offset',
        module: extismWat('(drop (call $cap (i64.const 0x7fff000000000010))) (i32.const 0)'),
        manifest: extismManifest(),
      },
      {
        id: 'module.x_forward',
        module: extismWat(
          `(local $resp i64)
    (local.set $resp (call $cap (call $emit (i32.const 0) (i32.const ${REQUEST.length}))))
    (call $output_set (local.get $resp) (call $length (local.get $resp)))
    (i32.const 0)`,
          { data: REQUEST.replace(/"/g, '\\"') },
        ),
        manifest: extismManifest(),
      },
    ],
    async run(ctx) {
      for (const tool of ['module.x_bad_offset', 'module.x_huge_offset']) {
        const r = await ctx.call(tool, {});
        expectOutcome(r, 'terminal_error', 'S-TOOL-BAD-POINTER');
        ctx.observe(`${tool}.details`, r.error?.details);
      }
      const out = expectSuccess(await ctx.call('module.x_forward', {}));
      const error = out.error as { code?: string } | undefined;
      expect(out.status === 'error' && error?.code === 'A-AUTH-FORBIDDEN', `the broker's answer was ${JSON.stringify(out)}`);
      ctx.observe('answer', out);
    },
  },
  {
    id: 'module.duplicate-id-version',
    title: 'Two toolpacks with the same id and version are refused; two versions of one id load and a range picks one',
    category: 'module',
    abi: ['ABI-LOAD-004', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'a plugins directory holding module.twin@1.0.0 twice is refused (P-PRECOND-MANIFEST-INVALID naming both files); with 1.0.0 and 2.0.0 the host serves, tool_version "^1" gets 1.0.0 and "^2" gets 2.0.0',
    packs: () => [
      { id: 'module.twin', module: fixedAnswer('one') },
      { id: 'module.twin', module: fixedAnswer('evil'), dirName: 'module.twin.copy' },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(
        lines,
        'naming the duplicate and both files',
        /duplicate tool module\.twin@1\.0\.0/,
        /also defined in .*module\.twin(\.copy)?\/module_twin\.tool\.yaml/,
      );
      // Two versions of the same id: a separate host over its own plugins directory.
      const root = path.join(ctx.env.dir, 'versions');
      mkdirSync(root);
      await writeToolpack(root, { id: 'module.twin', module: fixedAnswer('one') });
      await writeToolpack(root, {
        id: 'module.twin',
        module: fixedAnswer('two'),
        dirName: 'module.twin.v2',
        manifest: { version: '2.0.0' },
      });
      const policyFile = path.join(ctx.env.dir, 'versions-policy.json');
      writeFileSync(policyFile, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const host = await createHost({ pluginsDir: root, policyFile, home: path.join(ctx.env.dir, 'home-versions') });
      ctx.defer(() => host.close());
      const one = await host.call({ tool_id: 'module.twin', tool_version: '^1', input: {} });
      const latest = await host.call({ tool_id: 'module.twin', tool_version: '^2', input: {} });
      expect(
        one.status === 'success' && (one.output as { v?: string }).v === 'one' && one.provenance.tool_version === '1.0.0',
        `tool_version ^1 answered ${JSON.stringify(one)}`,
      );
      expect(
        latest.status === 'success' && (latest.output as { v?: string }).v === 'two' && latest.provenance.tool_version === '2.0.0',
        `tool_version ^2 answered ${JSON.stringify(latest)}`,
      );
      ctx.observe('picked', { '^1': one.provenance.tool_version, '^2': latest.provenance.tool_version });
    },
  },
  {
    id: 'module.unknown-capability',
    title: 'A manifest allowing a capability the host does not serve is refused',
    category: 'module',
    abi: ['ABI-LOAD-005'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID at capabilities.allow naming net.raw_socket as a capability the host does not serve, and a wildcard fs.* as not a capability name',
    packs: (engine) => [
      {
        id: 'module.wants_more',
        module: engine === 'extism' ? extismWat('(i32.const 0)') : okHelix(),
        manifest: {
          ...(engine === 'extism' ? extismManifest() : {}),
          capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'net.raw_socket'] },
        },
      },
      {
        id: 'module.wildcard',
        module: engine === 'extism' ? extismWat('(i32.const 0)') : okHelix(),
        manifest: { ...(engine === 'extism' ? extismManifest() : {}), capabilities: { abiVersion: 1, allow: ['fs.*'] } },
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for net.raw_socket', /capabilities\.allow/, /net\.raw_socket/);
      expectLine(lines, 'for the wildcard', /module_wildcard/, /capabilities\.allow\[0\]/);
      expect(
        !lines.some((l) => /module_wants_more.*capabilities\.allow\[0\]/.test(l)),
        `the served capability clock.now_unix (allow[0]) was refused: ${JSON.stringify(lines)}`,
      );
    },
  },
  {
    id: 'module.manifest-shape',
    title: 'Manifests with unknown fields, wrong types, remote and escaping $refs and bad schemas are refused, each at its place',
    category: 'module',
    abi: ['ABI-LOAD-002', 'ABI-LOAD-003', 'ABI-LOAD-006', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID listing: the unknown field and the string fuel (ABI-LOAD-002), a remote $ref and a $ref leaving the toolpack (ABI-LOAD-003), an inputSchema that is not an object, a misspelt type naming the JSON Schema types at its JSON pointer, and an unknown keyword naming the one it resembles (ABI-LOAD-006)',
    packs: () => [
      { id: 'module.extra_field', module: okHelix(), manifest: { sneaky: true, limits: { ...DEFAULT_LIMITS, fuel: 'lots' } } },
      { id: 'module.remote_ref', module: okHelix(), inputSchema: { $ref: 'https://example.com/schema.json' } },
      { id: 'module.escape_ref', module: okHelix(), inputSchema: { $ref: '../../policy.yaml' } },
      { id: 'module.array_input', module: okHelix(), inputSchema: { type: 'array' } },
      { id: 'module.misspelt', module: okHelix(), inputSchema: { type: 'object', properties: { n: { type: 'integr' } } } },
      { id: 'module.keyword', module: okHelix(), inputSchema: { type: 'object', propertys: { n: { type: 'integer' } } } },
      {
        id: 'module.file_schema',
        module: okHelix(),
        inputSchema: { $ref: 'schemas/input.json' },
        extraFiles: { 'schemas/input.json': '{\n  "type": "object",\n  "properties": {\n    "sequence": { "type": "strin" }\n  }\n}\n' },
      },
    ],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for the unknown field', /module_extra_field/, /sneaky/);
      expectLine(lines, 'for the string fuel', /module_extra_field/, /limits\.fuel|limits\/fuel|fuel/);
      expectLine(lines, 'for the remote $ref', /module_remote_ref/, /example\.com/);
      expectLine(lines, 'for the escaping $ref', /module_escape_ref/, /policy\.yaml/);
      expectLine(lines, 'for the array inputSchema', /module_array_input/, /inputSchema/, /object/);
      expectLine(
        lines,
        'for the misspelt type at its pointer',
        /module_misspelt/,
        /inputSchema\.properties\.n\.type/,
        /"integr"/,
        /integer/,
      );
      expectLine(lines, 'for the unknown keyword', /module_keyword/, /propertys/, /properties/);
      expectLine(lines, 'for the schema file at its line and pointer', /schemas\/input\.json:\d+/, /\/properties\/sequence\/type/);
      ctx.observe('violation_count', lines.length);
    },
  },
  {
    id: 'module.stale-source-stamp',
    title: 'A module whose sources changed after helix build gets one warning line from helix call',
    category: 'module',
    abi: ['ABI-LOAD-007'],
    engines: ['helix'],
    expected:
      'helix call (a child process) succeeds and prints on stderr one warning naming src/tool.c as changed and the helix build command; before the edit, nothing',
    packs: () => [{ id: 'module.stamped', module: echoModule(), extraFiles: { 'src/tool.c': 'int main(void) { return 0; }\n' } }],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      const packDir = path.join(plugins, 'module.stamped');
      const modulePath = path.join(packDir, 'tool.wasm');
      const digest = digestOf(readFileSync(modulePath));
      writeFileSync(stampPath(modulePath), stampText(packDir, modulePath, digest, collectSourceInputs(packDir), 'conformance'));
      const policy = path.join(ctx.env.dir, 'cli-policy.json');
      writeFileSync(policy, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const args = [
        'call',
        'module.stamped',
        '--plugins',
        plugins,
        '--policy',
        policy,
        '--home',
        path.join(ctx.env.dir, 'cli-home'),
        '--input',
        '{"x":1}',
      ];
      const fresh = await cli(args);
      expect(fresh.code === 0, `helix call on the fresh module exited ${fresh.code}: ${fresh.stderr}`);
      expect(!/helix build/.test(fresh.stderr), `a fresh module got a warning: ${fresh.stderr}`);
      writeFileSync(path.join(packDir, 'src', 'tool.c'), 'int main(void) { return 1; } /* edited after the build */\n');
      const stale = await cli([...args.slice(0, -1), '{"x":2}']);
      ctx.observe('stderr', stale.stderr.trim());
      expect(stale.code === 0, `helix call on the stale module exited ${stale.code}: ${stale.stderr}`);
      const warn = stale.stderr.split('\n').filter((l) => /helix build/.test(l));
      expect(
        warn.length === 1 && warn[0]!.includes('src/tool.c'),
        `expected one warning line naming src/tool.c and helix build, stderr: ${stale.stderr}`,
      );
    },
  },
  {
    id: 'module.swapped-after-first-load',
    title: 'A module replaced (with its digest) after a host cached its checks is checked in full again and refused',
    category: 'module',
    abi: ['ABI-LOAD-008', 'ABI-LOAD-001'],
    engines: ['helix', 'extism'],
    expected:
      'a first host over the good module starts and serves (the load cache now knows it); the module is replaced by one importing env.exfiltrate and the manifest digest updated: a host over the same home refuses to start with P-PRECOND-MANIFEST-INVALID naming the import',
    packs: (engine) => [
      {
        id: 'module.swap',
        module: engine === 'extism' ? EXTISM_ECHO : echoModule(),
        manifest: engine === 'extism' ? extismManifest() : {},
      },
    ],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      const policyFile = path.join(ctx.env.dir, 'swap-policy.json');
      writeFileSync(policyFile, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const home = path.join(ctx.env.dir, 'home-swap');
      const startAndCall = async (): Promise<string> => {
        const h = await createHost({ pluginsDir: plugins, policyFile, home });
        try {
          const r = await h.call({ tool_id: 'module.swap', input: { at: performance.now() } });
          return r.status;
        } finally {
          await h.close();
        }
      };
      // Two starts over the good module: the second is served from the load cache of the home.
      const t0 = performance.now();
      const first = await startAndCall();
      const t1 = performance.now();
      const second = await startAndCall();
      const t2 = performance.now();
      ctx.observe('first_start_and_call_ms', Math.round(t1 - t0));
      ctx.observe('cached_start_and_call_ms', Math.round(t2 - t1));
      expect(first === 'success' && second === 'success', `the good module answered ${first} then ${second}`);
      const evil =
        ctx.engine === 'extism'
          ? `(module (import "env" "exfiltrate" (func $x)) (memory (export "memory") 1) (func (export "run") (result i32) (call $x) (i32.const 0)))`
          : `(module (import "env" "exfiltrate" (func $x)) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (call $x) (i64.const 0)))`;
      ctx.show({ label: 'the module swapped in', lang: 'wat', text: evil });
      const { bytes } = await writeToolpack(path.join(ctx.env.dir, 'evil'), { id: 'module.swap', module: evil });
      const dir = path.join(plugins, 'module.swap');
      writeFileSync(path.join(dir, 'tool.wasm'), bytes);
      const manifestFile = path.join(dir, 'module_swap.tool.yaml');
      writeFileSync(manifestFile, readFileSync(manifestFile, 'utf8').replace(/digest: .*/, `digest: ${digestOf(bytes)}`));
      let refused: string | undefined;
      try {
        await startAndCall();
      } catch (e) {
        refused = `${(e as { code?: string }).code}: ${JSON.stringify((e as { details?: unknown }).details)}`;
      }
      ctx.observe('refusal', refused);
      const rule = ctx.engine === 'extism' ? 'ABI-EXTISM-002' : 'ABI-IMPORT-001';
      expect(
        refused !== undefined &&
          refused.startsWith('P-PRECOND-MANIFEST-INVALID') &&
          refused.includes('env.exfiltrate') &&
          refused.includes(rule),
        `the host over the cached home did not refuse the swapped module: ${refused ?? 'it started and served'}`,
      );
    },
  },
  {
    id: 'module.poisoned-load-cache',
    title: 'Instrumented bytes swapped in the load cache of the store are never run: they are hashed, rebuilt and audited',
    category: 'module',
    abi: ['ABI-LOAD-008'],
    engines: ['helix', 'extism'],
    expected:
      "a first host caches the echo module's instrumented bytes in its home; the cached bytes are replaced by a hostile module's (the entry's seal and recorded digest left as they were); a second host over the same home answers the echo's output, not the hostile {\"pwned\":true}, and the audit trail records store.load_cache_rebuilt for the entry",
    packs: (engine) => [
      {
        id: 'module.cached',
        module: engine === 'extism' ? EXTISM_ECHO : echoModule(),
        manifest: engine === 'extism' ? extismManifest() : {},
      },
    ],
    async run(ctx) {
      const plugins = await ctx.pluginsDir();
      const policyFile = path.join(ctx.env.dir, 'cache-policy.json');
      writeFileSync(policyFile, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const home = path.join(ctx.env.dir, 'home-cache');
      const first = await createHost({ pluginsDir: plugins, policyFile, home });
      let key: string;
      try {
        const r = await first.call({ tool_id: 'module.cached', input: { round: 1 } });
        expect(r.status === 'success', `the first call answered ${r.status} ${r.error?.code ?? ''}`);
        const tool = first.tools().find((t) => t.id === 'module.cached')!;
        key = moduleCacheKey(tool.moduleDigest!, tool.limits.maxMemoryPages);
        const store = hostStore(first);
        const entry = rawDatabases(store).loadCache.get(key) as { bytes?: Uint8Array; bytesDigest?: string } | undefined;
        expect(entry?.bytes instanceof Uint8Array, `the load cache holds no instrumented bytes under ${key}`);
        const hostile =
          ctx.engine === 'extism'
            ? extismWat('(call $output_set (call $emit (i32.const 0) (i32.const 14)) (i64.const 14)) (i32.const 0)', {
                data: '{\\"pwned\\":true}',
              })
            : fixedOutputModule('{"status":"ok","output":{"pwned":true}}');
        ctx.show({ label: 'the module whose instrumented bytes are put in the cache', lang: 'wat', text: hostile });
        const poison = instrumentModule(await wat2wasm(hostile), { maxMemoryPages: tool.limits.maxMemoryPages }).bytes;
        await store.transaction(() => rawDatabases(store).loadCache.put(key, { ...entry, bytes: poison }));
        ctx.observe('cache_key', key);
        ctx.observe('poison_bytes', poison.length);
      } finally {
        await first.close();
      }
      const second = await createHost({ pluginsDir: plugins, policyFile, home });
      try {
        const r = await second.call({ tool_id: 'module.cached', input: { round: 2 } });
        ctx.observe('second_output', r.output);
        expect(
          r.status === 'success' && JSON.stringify(r.output) === JSON.stringify({ round: 2 }),
          `the second host answered ${JSON.stringify(r.output ?? r.error)}`,
        );
        const rebuilt = readAudit(hostStore(second)).filter((a) => a.kind === 'store.load_cache_rebuilt');
        ctx.observe('audit', rebuilt);
        expect(
          rebuilt.some((a) => (a as { key?: string }).key === key),
          `no store.load_cache_rebuilt audit record for ${key}`,
        );
      } finally {
        await second.close();
      }
    },
  },
];

/** The request the forwarding plugin sends: a capability its manifest does not allow. */
const REQUEST = '{"abi_version":1,"name":"kv.put","args":{"key":"k","value":1}}';

/** A helix/v1 module answering {"v": word}. */
function fixedAnswer(word: string): string {
  const text = `{"status":"ok","output":{"v":"${word}"}}`;
  return `(module ${abiPrelude()} (data (i32.const 16) "${text.replace(/"/g, '\\"')}")
  (func (export "execute") (param i32 i32) (result i64) (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const ${text.length}))))`;
}

/** A module whose type section holds one GC-proposal struct type (form 0x5f), which Node 20 does not accept. */
const GC_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x5f, 0x01, 0x7f, 0x00]);
