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
 * code), memory of `pages` (and a declared maximum of `maxPages`), optional data at 0 and `extra`
 * module fields; it imports the broker.
 */
export function extismWat(body: string, opts: { pages?: number; maxPages?: number; data?: string; extra?: string } = {}): string {
  return `(module ${KERNEL}
  (import "extism:host/user" "helix_capability_call" (func $cap (param i64) (result i64)))
  (memory (export "memory") ${opts.pages ?? 1}${opts.maxPages === undefined ? '' : ` ${opts.maxPages}`})
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

/** The body of a plugin whose output is its input, byte for byte. */
const ECHO_BODY = `
    (local $n i64) (local $block i64) (local $i i64)
    (local.set $n (call $input_length))
    (local.set $block (call $alloc (local.get $n)))
    (block $done (loop $copy
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $block) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $copy)))
    (call $output_set (local.get $block) (local.get $n))
    (i32.const 0)`;

/** An extism/v1 plugin whose output is its input, byte for byte, with `pages` of memory. */
export function extismEcho(pages?: number): string {
  return extismWat(ECHO_BODY, pages === undefined ? {} : { pages });
}

/** What extismRun and extismNumber are built with. */
export interface PluginBodyOptions {
  /** Locals of `run`, declared first. */
  readonly locals?: string;
  /** Module fields (functions, tables, memories, a start). */
  readonly extra?: string;
  readonly pages?: number;
  readonly maxPages?: number;
}

const memoryOf = (o: PluginBodyOptions): { pages?: number; maxPages?: number } => ({
  ...(o.pages === undefined ? {} : { pages: o.pages }),
  ...(o.maxPages === undefined ? {} : { maxPages: o.maxPages }),
});

/** A plugin whose run runs `body` (leaving nothing) and sets {} as its output. */
export function extismRun(body: string, o: PluginBodyOptions = {}): string {
  return extismWat(`${o.locals ?? ''} ${body} (call $output_set (call $emit (i32.const 0) (i32.const 2)) (i64.const 2)) (i32.const 0)`, {
    data: '{}',
    pages: o.pages ?? 1,
    extra: o.extra ?? '',
    ...(o.maxPages === undefined ? {} : { maxPages: o.maxPages }),
  });
}

/** A plugin whose `run` computes an i32 with `body` (its own `locals` first) and outputs {"value":N}. */
export function extismNumber(body: string, o: PluginBodyOptions = {}): string {
  return extismWat(
    `(local $n i32) (local $len i32) (local $i i32) ${o.locals ?? ''}
    ${body}
    (local.set $n)
    (local.set $i (local.get $n))
    (loop $count (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (local.set $i (i32.div_u (local.get $i) (i32.const 10))) (br_if $count (local.get $i)))
    (local.set $i (local.get $len))
    (loop $digit (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (i32.const 9) (local.get $i)) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10))) (br_if $digit (local.get $i)))
    (i32.store8 (i32.add (i32.const 9) (local.get $len)) (i32.const 125))
    (local.set $len (i32.add (local.get $len) (i32.const 10)))
    (call $output_set (call $emit (i32.const 0) (local.get $len)) (i64.extend_i32_u (local.get $len)))
    (i32.const 0)`,
    { data: '{\\"value\\":', ...(o.extra === undefined ? {} : { extra: o.extra }), ...memoryOf(o) },
  );
}
