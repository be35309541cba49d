// Conformance checks of module shape for extism/v1 plugins: exports that would run code at load,
// kernel imports that reach past the broker, a missing entry or memory, a module that cannot be
// instantiated, and offsets passed to helix_capability_call that name no block.
import { expect, expectOutcome, expectSuccess, type Check } from '../../check.js';
import { extismWat } from '../../kit/extism-wat.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';

/** The manifest fields of an extism/v1 toolpack. */
const MANIFEST = { abi: 'extism/v1', entrypoint: 'run' } as const;

/** The checks of this file, in the report's order. */
export const extismPluginChecks: readonly Check[] = [
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
        manifest: { ...MANIFEST },
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
        manifest: { ...MANIFEST },
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
        manifest: { ...MANIFEST },
      },
      { id: 'module.x_absent', module: extismWat('(i32.const 0)'), manifest: { ...MANIFEST, entrypoint: 'main' } },
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
        manifest: { ...MANIFEST },
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
        manifest: { ...MANIFEST },
      },
      {
        id: 'module.x_huge_offset',
        module: extismWat('(drop (call $cap (i64.const 0x7fff000000000010))) (i32.const 0)'),
        manifest: { ...MANIFEST },
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
        manifest: { ...MANIFEST },
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
];

/** The request the forwarding plugin sends: a capability its manifest does not allow. */
const REQUEST = '{"abi_version":1,"name":"kv.put","args":{"key":"k","value":1}}';
