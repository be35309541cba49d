// WAT building blocks for extism/v1 test plugins: the Extism kernel imports they use, a copy of
// linear memory into an Extism block, and a plugin exporting `run` around a custom body.

/** The kernel functions the test plugins import. */
export const KERNEL = `
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))`;

/** Copies `len` bytes of linear memory at `ptr` into a new Extism block; returns its offset. */
export const EMIT = `
  (func $emit (param $ptr i32) (param $len i32) (result i64)
    (local $block i64) (local $i i32)
    (local.set $block (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done (loop $copy
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (call $store_u8 (i64.add (local.get $block) (i64.extend_i32_u (local.get $i))) (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $copy)))
    (local.get $block))`;

/**
 * A plugin exporting `run` with `body` (locals first, then instructions leaving the i32 return
 * code), memory of `pages`, optional data at 0 and `extra` module fields; it imports the broker.
 */
export function extismWat(body: string, opts: { pages?: number; data?: string; extra?: string } = {}): string {
  return `(module ${KERNEL}
  (import "extism:host/user" "helix_capability_call" (func $cap (param i64) (result i64)))
  (memory (export "memory") ${opts.pages ?? 1})
  ${opts.data === undefined ? '' : `(data (i32.const 0) "${opts.data}")`}
  ${EMIT}
  ${opts.extra ?? ''}
  (func (export "run") (result i32) ${body}))`;
}

/**
 * Counts its calls three ways, in a mutable global, a byte of linear memory and an Extism var,
 * and outputs the counts as {"g":G,"m":M,"v":V}: a plugin that served an earlier call would show
 * a count above 1 (ABI-CALL-001).
 */
export const EXTISM_COUNTER = `(module ${KERNEL}
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\\"g\\":0,\\"m\\":0,\\"v\\":0}")
  (data (i32.const 32) "n")
  (global $g (mut i32) (i32.const 0))
  ${EMIT}
  (func (export "run") (result i32) (local $val i64) (local $v i32)
    (global.set $g (i32.add (global.get $g) (i32.const 1)))
    (i32.store8 (i32.const 5) (i32.add (i32.const 48) (global.get $g)))
    (i32.store8 (i32.const 100) (i32.add (i32.load8_u (i32.const 100)) (i32.const 1)))
    (i32.store8 (i32.const 11) (i32.add (i32.const 48) (i32.load8_u (i32.const 100))))
    (local.set $val (call $var_get (call $emit (i32.const 32) (i32.const 1))))
    (if (i64.ne (local.get $val) (i64.const 0)) (then (local.set $v (call $load_u8 (local.get $val)))))
    (local.set $v (i32.add (local.get $v) (i32.const 1)))
    (i32.store8 (i32.const 64) (local.get $v))
    ;; var_get freed the key block: var_set needs a new one.
    (call $var_set (call $emit (i32.const 32) (i32.const 1)) (call $emit (i32.const 64) (i32.const 1)))
    (i32.store8 (i32.const 17) (i32.add (i32.const 48) (local.get $v)))
    (call $output_set (call $emit (i32.const 0) (i32.const 19)) (i64.const 19))
    (i32.const 0)))`;
