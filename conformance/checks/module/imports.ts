// Conformance checks of module shape: imports. A module importing anything outside the ABI, or an
// ABI import with the wrong type, is refused when the host loads it, the violation named.
import { expect, type Check } from '../../check.js';
import { abiPrelude } from '../../kit/guest-wat.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';

/** The checks of this file, in the report's order. */
export const importChecks: readonly Check[] = [
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
];
