// A WAT guest that calls helix_v1.capability_call_bulk (or capability_call) itself, so tests can
// pass it any buffer, good or bad, and see the raw answer envelope. Its input is rawBulkInput's.
import { abiPrelude, watString } from './guest-wat.js';

const PREFIX = '{"status":"ok","output":{"answer":';

/**
 * The input for bulkCallModule: `request` sent through capability_call_bulk with the buffer
 * [bufPtr, bufPtr+bufLen), or through capability_call when `text`. Keys are chosen so the
 * canonical input keeps them in this order: the guest reads fixed offsets.
 */
export function rawBulkInput(request: unknown, bufPtr: number, bufLen: number, text = false): Record<string, unknown> {
  const digits = (n: number): string => String(n >>> 0).padStart(10, '0');
  return { a: digits(bufPtr), b: digits(bufLen), c: text ? 1 : 0, d: request };
}

/**
 * A helix/v1 module of 4 pages (buffers from 131072 up are free) importing both capability
 * imports; it answers {"answer": <the host's answer envelope>}.
 */
export function bulkCallModule(): string {
  // {"a":"dddddddddd","b":"dddddddddd","c":N,"d":<request>}: digits at 6 and 23, N at 39, request from 45.
  return `(module
  (import "helix_v1" "capability_call" (func $cc (param i32 i32) (result i64)))
  (import "helix_v1" "capability_call_bulk" (func $ccb (param i32 i32 i32 i32) (result i64)))
  ${abiPrelude({ pages: 4 })}
  (data (i32.const 16) "${watString(PREFIX)}")
  (func $num (param $p i32) (result i32)
    (local $i i32) (local $n i64)
    (loop $digit
      (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (i32.sub (i32.load8_u (i32.add (local.get $p) (local.get $i))) (i32.const 48)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (i32.const 10))))
    (i32.wrap_i64 (local.get $n)))
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $packed i64) (local $a i32) (local $alen i32) (local $out i32) (local $n i32)
    (if (i32.eq (i32.load8_u (i32.add (local.get $ptr) (i32.const 39))) (i32.const 49))
      (then (local.set $packed (call $cc (i32.add (local.get $ptr) (i32.const 45)) (i32.sub (local.get $len) (i32.const 46)))))
      (else (local.set $packed (call $ccb (i32.add (local.get $ptr) (i32.const 45)) (i32.sub (local.get $len) (i32.const 46))
        (call $num (i32.add (local.get $ptr) (i32.const 6))) (call $num (i32.add (local.get $ptr) (i32.const 23)))))))
    (local.set $a (i32.wrap_i64 (i64.shr_u (local.get $packed) (i64.const 32))))
    (local.set $alen (i32.wrap_i64 (local.get $packed)))
    (local.set $n (i32.add (local.get $alen) (i32.const ${PREFIX.length + 2})))
    (local.set $out (call $alloc (local.get $n)))
    (memory.copy (local.get $out) (i32.const 16) (i32.const ${PREFIX.length}))
    (memory.copy (i32.add (local.get $out) (i32.const ${PREFIX.length})) (local.get $a) (local.get $alen))
    (i32.store16 (i32.add (local.get $out) (i32.add (local.get $alen) (i32.const ${PREFIX.length}))) (i32.const 0x7d7d))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32)) (i64.extend_i32_u (local.get $n)))))`;
}
