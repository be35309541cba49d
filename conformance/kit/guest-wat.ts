// WAT building blocks for helix/v1 test guests: a bump allocator, a no-op dealloc, an itoa,
// and modules that return fixed bytes, echo their input, or run a custom body.

/** Escapes bytes for a WAT data string. */
export function watString(text: string | Uint8Array): string {
  const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
  return Array.from(bytes, (b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
}

/** What a guest module is built from; `allocHook` and `deallocHook` run first in alloc and dealloc. */
export interface PreludeOptions {
  pages?: number;
  maxPages?: number;
  allocHook?: string;
  deallocHook?: string;
}

/** Memory (1 page unless told), a bump allocator from 4096 upward, and a no-op dealloc. */
export function abiPrelude(opts: PreludeOptions = {}): string {
  const max = opts.maxPages === undefined ? '' : ` ${opts.maxPages}`;
  return `
  (memory (export "memory") ${opts.pages ?? 1}${max})
  (global $bump (mut i32) (i32.const 4096))
  (func $alloc (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    ${opts.allocHook ?? ''}
    (local.set $p (global.get $bump))
    (global.set $bump (i32.add (global.get $bump) (local.get $len)))
    ;; grow when the bump pointer passes the end of memory
    (block $done
      (loop $grow
        (br_if $done (i32.le_u (global.get $bump) (i32.mul (memory.size) (i32.const 65536))))
        (br_if $done (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $grow)))
    (local.get $p))
  (func (export "dealloc") (param i32 i32) ${opts.deallocHook ?? ''})
  ;; writes the decimal form of $n at $p, returns the number of bytes written
  (func $itoa (param $p i32) (param $n i64) (result i32)
    (local $len i32) (local $t i64) (local $i i32)
    (local.set $t (local.get $n))
    (loop $count
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (local.set $t (i64.div_u (local.get $t) (i64.const 10)))
      (br_if $count (i64.ne (local.get $t) (i64.const 0))))
    (local.set $i (local.get $len))
    (loop $digits
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (local.get $p) (local.get $i))
        (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $n) (i64.const 10)))))
      (local.set $n (i64.div_u (local.get $n) (i64.const 10)))
      (br_if $digits (i32.ne (local.get $i) (i32.const 0))))
    (local.get $len))
`;
}

/** A module whose execute returns `output` (any bytes) verbatim. */
export function fixedOutputModule(output: string | Uint8Array, extra = ''): string {
  const len = typeof output === 'string' ? new TextEncoder().encode(output).length : output.length;
  return `(module ${abiPrelude()}
  (data (i32.const 16) "${watString(output)}")
  (func (export "execute") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const ${len})))
  ${extra})`;
}

/** A module that answers {"status":"ok","output":<input>} by copying bytes; `opts` shape its memory. */
export function echoModule(extra = '', opts: PreludeOptions = {}): string {
  const prefix = '{"status":"ok","output":';
  return `(module ${abiPrelude(opts)}
  (data (i32.const 16) "${watString(prefix)}")
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $out i32)
    (local.set $out (call $alloc (i32.add (local.get $len) (i32.const ${prefix.length + 1}))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const ${prefix.length}))
    (memory.copy (i32.add (local.get $out) (i32.const ${prefix.length})) (local.get $ptr) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.add (local.get $len) (i32.const ${prefix.length}))) (i32.const 125))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.add (local.get $len) (i32.const ${prefix.length + 1})))))
  ${extra})`;
}

/**
 * A module whose execute runs `body` (which leaves an i64 on the stack) and answers
 * {"status":"ok","output":{"value":<that i64>}}; `imports` come first, as WAT wants.
 */
export function numberResultModule(
  body: string,
  opts: PreludeOptions & { extra?: string; locals?: string; imports?: string } = {},
): string {
  const prefix = '{"status":"ok","output":{"value":';
  return `(module ${opts.imports ?? ''} ${abiPrelude(opts)}
  (data (i32.const 16) "${watString(prefix)}")
  ${opts.extra ?? ''}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $v i64) (local $out i32) (local $n i32) ${opts.locals ?? ''}
    ${body}
    (local.set $v)
    (local.set $out (call $alloc (i32.const 64)))
    (memory.copy (local.get $out) (i32.const 16) (i32.const ${prefix.length}))
    (local.set $n (call $itoa (i32.add (local.get $out) (i32.const ${prefix.length})) (local.get $v)))
    (i32.store16 (i32.add (local.get $out) (i32.add (local.get $n) (i32.const ${prefix.length}))) (i32.const 0x7d7d))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.add (local.get $n) (i32.const ${prefix.length + 2})))))
)`;
}

/** The ok envelope with an empty output. */
const OK_EMPTY = '{"status":"ok","output":{}}';

/**
 * A module whose execute runs `body` (leaving nothing; `locals` first) and answers {} as its
 * output; `extra` module fields, `pages` and `maxPages` of memory.
 */
export function runningModule(body: string, o: PreludeOptions & { locals?: string; extra?: string } = {}): string {
  return `(module ${abiPrelude({ pages: o.pages ?? 1, ...(o.maxPages === undefined ? {} : { maxPages: o.maxPages }) })}
  (data (i32.const 16) "${watString(OK_EMPTY)}")
  ${o.extra ?? ''}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64) ${o.locals ?? ''}
    ${body}
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const ${OK_EMPTY.length}))))`;
}
