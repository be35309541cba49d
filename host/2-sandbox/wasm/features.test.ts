// Tests that decodeModule reports the proposals each feature module uses, and that the
// instrumented module still validates and computes exactly what the original computes.

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { decodeModule, FUEL_EXPORT, instrumentModule } from './index.js';
import { binary, body, instantiate, metered, section, wabtValidate, wat } from '../../../test/helpers/wasm.js';

// Node 20's V8 ships these behind flags; turning them on lets V8 itself judge the output.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
v8.setFlagsFromString('--experimental-wasm-extended-const');
v8.setFlagsFromString('--experimental-wasm-memory64');

interface Case {
  name: string;
  wat: string;
  features: string[];
  calls: [string, unknown[]][];
  /** Validate with wabt instead of V8 (proposals this V8 cannot enable). */
  wabtOnly?: boolean;
  /** Neither V8 nor wabt's validator here knows the proposal: check the output decodes. */
  decodeOnly?: boolean;
}

const cases: Case[] = [
  {
    name: 'SIMD with lane ops, v128.const, shuffle and lane loads',
    features: ['simd'],
    wat: `(module (memory 1) (data (i32.const 0) "\\01\\02\\03\\04\\05\\06\\07\\08")
      (func (export "lanes") (param i32) (result i32) (local v128)
        (local.set 1 (i8x16.shuffle 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0 (v128.const i32x4 1 2 3 4) (i32x4.splat (local.get 0))))
        (local.set 1 (i32x4.replace_lane 1 (local.get 1) (i32.const 77)))
        (local.set 1 (v128.load8_lane 2 (i32.const 3) (local.get 1)))
        (v128.store32_lane 0 (i32.const 16) (local.get 1))
        (i32.add (i32.add (i32x4.extract_lane 0 (local.get 1)) (i32x4.extract_lane 1 (local.get 1)))
          (i32.add (i8x16.extract_lane_u 15 (i8x16.add (local.get 1) (v128.load (i32.const 0)))) (i32.load (i32.const 16))))))`,
    calls: [
      ['lanes', [5]],
      ['lanes', [-1]],
    ],
  },
  {
    name: 'relaxed SIMD',
    features: ['relaxed-simd', 'simd'],
    wat: `(module (func (export "swz") (param i32) (result i32)
      (i8x16.extract_lane_u 3 (i8x16.relaxed_swizzle (v128.const i8x16 9 8 7 6 5 4 3 2 1 0 10 11 12 13 14 15) (i8x16.splat (local.get 0))))))`,
    calls: [
      ['swz', [2]],
      ['swz', [7]],
    ],
  },
  {
    name: 'bulk memory with passive data',
    features: ['bulk-memory'],
    wat: `(module (memory 1) (data $d "hello, world")
      (func (export "bulk") (param i32) (result i32)
        (memory.init $d (i32.const 100) (i32.const 0) (i32.const 12))
        (memory.copy (i32.const 200) (i32.const 100) (local.get 0))
        (memory.fill (i32.const 300) (i32.const 7) (local.get 0))
        (data.drop $d)
        (i32.add (i32.load8_u (i32.const 204)) (i32.load8_u (i32.const 300)))))`,
    calls: [['bulk', [8]]],
  },
  {
    name: 'reference types with externref tables and typed select',
    features: ['bulk-memory', 'reference-types'],
    wat: `(module (table $t 2 externref) (table $f 1 funcref) (elem declare func $g)
      (func $g (result i32) (i32.const 5))
      (func (export "refs") (param externref) (result i32)
        (table.set $t (i32.const 1) (local.get 0))
        (drop (table.grow $t (ref.null extern) (i32.const 3)))
        (table.fill $t (i32.const 2) (local.get 0) (i32.const 2))
        (table.set $f (i32.const 0) (ref.func $g))
        (i32.add (i32.add (table.size $t) (call_indirect $f (result i32) (i32.const 0)))
          (select (result i32) (i32.const 10) (i32.const 20) (ref.is_null (table.get $t (i32.const 3)))))))`,
    calls: [
      ['refs', ['x']],
      ['refs', [null]],
    ],
  },
  {
    name: 'tail calls',
    features: ['tail-call'],
    wat: `(module (type $t (func (param i64 i64) (result i64))) (table 1 funcref) (elem (i32.const 0) $acc)
      (func $acc (param i64 i64) (result i64)
        (if (result i64) (i64.eqz (local.get 0)) (then (local.get 1))
          (else (return_call_indirect (type $t) (i64.sub (local.get 0) (i64.const 1)) (i64.mul (local.get 0) (local.get 1)) (i32.const 0)))))
      (func (export "fact") (param i64) (result i64) (return_call $acc (local.get 0) (i64.const 1))))`,
    calls: [
      ['fact', [10n]],
      ['fact', [20n]],
    ],
  },
  {
    name: 'legacy exception handling',
    features: ['exceptions'],
    wat: `(module (tag $e (param i32))
      (func $thrower (param i32) (if (local.get 0) (then (throw $e (local.get 0)))))
      (func (export "eh") (param i32) (result i32) (local i32)
        (try (result i32)
          (do (try (do (call $thrower (local.get 0))) (catch_all (local.set 1 (i32.const 100)) (rethrow 0))) (i32.const 1))
          (catch $e (i32.add (local.get 1)))))
      (func (export "deleg") (param i32) (result i32)
        (try (result i32) (do (try (do (call $thrower (local.get 0))) (delegate 0)) (i32.const 0)) (catch $e))))`,
    calls: [
      ['eh', [0]],
      ['eh', [7]],
      ['deleg', [0]],
      ['deleg', [9]],
    ],
  },
  {
    name: 'atomics on shared memory',
    features: ['threads'],
    wat: `(module (memory 1 1 shared)
      (func (export "atom") (param i32) (result i32)
        (i32.atomic.store (i32.const 8) (local.get 0))
        (drop (i32.atomic.rmw.add (i32.const 8) (i32.const 5)))
        (atomic.fence)
        (drop (i64.atomic.rmw.cmpxchg (i32.const 16) (i64.const 0) (i64.const 9)))
        (drop (memory.atomic.notify (i32.const 8) (i32.const 1)))
        (i32.add (i32.atomic.load (i32.const 8)) (i32.wrap_i64 (i64.atomic.load (i32.const 16))))))`,
    calls: [
      ['atom', [1]],
      ['atom', [40]],
    ],
  },
  {
    name: 'multi-value blocks and functions',
    features: ['multi-value'],
    wat: `(module (func $two (param i32) (result i32 i32) (local.get 0) (i32.mul (local.get 0) (i32.const 3)))
      (func (export "mv") (param i32) (result i32)
        (call $two (local.get 0))
        (block (param i32 i32) (result i32) (i32.sub))))`,
    calls: [['mv', [4]]],
  },
  {
    name: 'sign extension',
    features: ['sign-ext'],
    wat: `(module (func (export "sx") (param i32) (result i64) (i64.add (i64.extend_i32_s (i32.extend8_s (local.get 0))) (i64.extend16_s (i64.extend_i32_u (local.get 0))))))`,
    calls: [
      ['sx', [0xff]],
      ['sx', [0x8080]],
    ],
  },
  {
    name: 'saturating float-to-int conversions',
    features: ['sat-float-to-int'],
    wat: `(module (func (export "sat") (param f64) (result i32) (i32.add (i32.trunc_sat_f64_s (local.get 0)) (i32.trunc_sat_f64_u (local.get 0)))))`,
    calls: [
      ['sat', [1e20]],
      ['sat', [-5.5]],
      ['sat', [NaN]],
    ],
  },
  {
    name: 'extended constant expressions',
    features: ['extended-const'],
    wat: `(module (global $a i32 (i32.const 40)) (global $b i64 (i64.mul (i64.const 6) (i64.const 7)))
      (global $c i32 (i32.add (i32.const 40) (i32.sub (i32.const 5) (i32.const 3))))
      (func (export "ext") (result i64) (i64.add (i64.extend_i32_u (global.get $c)) (global.get $b))))`,
    calls: [['ext', []]],
  },
  {
    name: 'memory64',
    features: ['bulk-memory', 'memory64'],
    wat: `(module (memory i64 1 4)
      (func (export "m64") (param i64) (result i64)
        (i64.store offset=8 (i64.const 0) (local.get 0))
        (memory.fill (i64.const 64) (i32.const 3) (i64.const 100))
        (drop (memory.grow (i64.const 1)))
        (i64.add (i64.add (i64.load offset=8 (i64.const 0)) (memory.size)) (i64.load8_u (i64.const 100)))))`,
    calls: [['m64', [5n]]],
  },
  {
    name: 'multi-memory',
    features: ['bulk-memory', 'multi-memory'],
    decodeOnly: true,
    wat: `(module (memory $a 1) (memory $b 1 2)
      (func (export "mm") (param i32) (result i32)
        (i32.store $b (i32.const 4) (local.get 0))
        (memory.copy $a $b (i32.const 0) (i32.const 4) (i32.const 4))
        (drop (memory.grow $b (i32.const 1)))
        (i32.load $a (i32.const 0))))`,
    calls: [],
  },
  {
    name: 'exnref exception handling',
    features: ['exceptions', 'exnref', 'multi-value'],
    wabtOnly: true,
    wat: `(module (tag $t (param i32))
      (func (export "x") (param i32) (result i32)
        (block $h (result i32 exnref)
          (try_table (catch_ref $t $h) (throw $t (local.get 0)))
          (unreachable))
        (drop)))`,
    calls: [],
  },
];

describe('decodeModule and instrumentModule on feature modules', () => {
  for (const c of cases) {
    it(`${c.name}: decodes with the right features and behaves the same instrumented`, async () => {
      const original = await wat(c.wat);
      expect(decodeModule(original).features).toEqual(c.features);
      const result = instrumentModule(original, { maxMemoryPages: 16 });
      expect(result.info.features).toEqual(c.features);
      if (c.wabtOnly || c.decodeOnly) {
        if (c.wabtOnly) await wabtValidate(result.bytes);
        expect(decodeModule(result.bytes).features).toEqual(c.features);
        return;
      }
      expect(WebAssembly.validate(original)).toBe(true);
      expect(WebAssembly.validate(result.bytes)).toBe(true);
      for (const [name, args] of c.calls) {
        const plain = await instantiate(original);
        const metered_ = await instantiate(result.bytes);
        const want = (plain[name] as (...a: unknown[]) => unknown)(...args);
        const got = metered(metered_, name, args);
        expect(got.error).toBeUndefined();
        expect(got.result).toEqual(want);
        expect(got.used).toBeGreaterThan(0n);
      }
    });
  }

  it('typed function references (final encoding) decode and instrument consistently', () => {
    // Node 20's V8 only knows the pre-standard encoding of this proposal, so no engine here
    // can run it: this checks the decoder's reading of call_ref, return_call_ref,
    // ref.as_non_null, br_on_null, br_on_non_null and (ref null 0) types, and that the
    // instrumented bytes decode again.
    const bytes = binary(
      section(1, [2, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 2, 0x63, 0, 0x7f, 1, 0x7f]),
      section(3, [5, 0, 1, 0, 0, 0]),
      section(9, [1, 3, 0, 1, 0]),
      section(10, [
        5,
        ...body(0x20, 0, 0x41, 1, 0x6a, 0x0b),
        ...body(0x20, 1, 0x20, 0, 0xd4, 0x14, 0, 0x0b),
        ...body(0xd2, 0, 0x20, 0, 0x10, 1, 0x0b),
        ...body(0x02, 0x40, 0xd0, 0x00, 0xd5, 0x00, 0xd6, 0x00, 0x1a, 0x41, 1, 0x0f, 0x0b, 0x41, 7, 0x0b),
        ...body(0x20, 0, 0xd2, 0, 0x15, 0, 0x0b),
      ]),
    );
    const info = decodeModule(bytes);
    expect(info.features).toEqual(['bulk-memory', 'function-references', 'reference-types', 'tail-call']);
    const out = instrumentModule(bytes, { maxMemoryPages: 1 });
    expect(decodeModule(out.bytes).exports.map((e) => e.name)).toEqual([FUEL_EXPORT]);
  });
});
