// Guests that make the engine allocate tables: helix/v1 and extism/v1 modules that grow their
// tables until table.grow fails and report the elements they hold, and modules whose declared
// tables alone are huge (the three and six tables of 10 million entries).

import { numberResultModule } from './guest-wat.js';

/**
 * WAT that grows tables 0..count-1 (funcref) in halving steps from 2^20 until no step fits, then
 * leaves the sum of their sizes (i32) on the stack; needs locals $d and $sum of type i32.
 */
function growAndSum(count: number): string {
  const grow = (t: number) => `
    (local.set $d (i32.const 1048576))
    (block $full${t} (loop $step${t}
      (if (i32.eq (table.grow ${t} (ref.null func) (local.get $d)) (i32.const -1))
        (then (local.set $d (i32.shr_u (local.get $d) (i32.const 1))) (br_if $full${t} (i32.eqz (local.get $d)))))
      (br $step${t})))
    (local.set $sum (i32.add (local.get $sum) (table.size ${t})))`;
  return `${Array.from({ length: count }, (_, t) => grow(t)).join('')} (local.get $sum)`;
}

/** `count` funcref tables of `initial` elements each, declared without a maximum. */
export function tableDecls(count: number, initial = 0): string {
  return Array.from({ length: count }, () => `(table ${initial} funcref)`).join(' ');
}

/** A helix/v1 module with `count` tables that grows them all and answers {"value": total elements}. */
export function growTablesModule(count: number): string {
  return numberResultModule(`${growAndSum(count)} (i64.extend_i32_u)`, {
    extra: tableDecls(count),
    locals: '(local $d i32) (local $sum i32)',
  });
}

/** A helix/v1 module that echoes nothing but declares `count` tables of `initial` elements. */
export function bigTablesModule(count: number, initial = 10_000_000): string {
  return numberResultModule('(i64.const 0)', { extra: tableDecls(count, initial) });
}

const EXTISM_KERNEL = `
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))`;

/**
 * An extism/v1 plugin whose `run` grows its `count` tables (or, with `initial`, only declares
 * them that large) and outputs {"size":<total elements>}.
 */
export function extismTablesPlugin(count: number, initial = 0): string {
  const body = initial === 0 ? growAndSum(count) : `(i32.const ${count * initial})`;
  return `(module ${EXTISM_KERNEL}
  (memory (export "memory") 1)
  ${tableDecls(count, initial)}
  (data (i32.const 0) "{\\"size\\":")
  (func (export "run") (result i32) (local $d i32) (local $sum i32) (local $n i32) (local $len i32) (local $i i32) (local $block i64)
    (local.set $n ${body})
    ;; the decimal digits of $n at 8.., then the closing brace
    (local.set $i (local.get $n))
    (loop $count (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (local.set $i (i32.div_u (local.get $i) (i32.const 10))) (br_if $count (local.get $i)))
    (local.set $i (local.get $len))
    (loop $digit (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (i32.const 8) (local.get $i)) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10))) (br_if $digit (local.get $i)))
    (i32.store8 (i32.add (i32.const 8) (local.get $len)) (i32.const 125))
    (local.set $len (i32.add (local.get $len) (i32.const 9)))
    (local.set $block (call $alloc (i64.extend_i32_u (local.get $len))))
    (local.set $i (i32.const 0))
    (block $done (loop $copy (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $block) (i64.extend_i32_u (local.get $i))) (i32.load8_u (local.get $i)))
      (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $copy)))
    (call $output_set (local.get $block) (i64.extend_i32_u (local.get $len)))
    (i32.const 0)))`;
}
