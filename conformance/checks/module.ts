// Conformance checks: module shape and imports. A module that breaks the ABI's shape must be
// refused when the host loads it, with the violation named, before any call is served.
import { expect, type Check } from '../check.js';
import { abiPrelude } from '../kit/guest-wat.js';

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
      expect(violations.includes('fd_write') && violations.includes('ABI-IMPORT-001'), `the refusal does not name the import and its rule: ${violations}`);
      ctx.observe('violations', refusal.details.violations);
    },
  },
];
