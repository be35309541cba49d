// helix/v1 test guests that send bytes the test chooses: the input is {"hex":"<hex>"}, and the
// module decodes the hex and returns it as its output, or hands it to capability_call as the
// request. A test can so make a guest say anything, valid JSON or not, at any depth.
import { abiPrelude, watString } from './guest-wat.js';
import { KERNEL } from './extism-wat.js';

/** The input that makes a bytes guest send `bytes` (a string is sent as UTF-8). */
export function bytesInput(bytes: string | Uint8Array): { hex: string } {
  return { hex: Buffer.from(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes).toString('hex') };
}

/** `{"hex":"` before the digits and `"}` after them, as JSON.stringify writes the input. */
const HEAD = 8;
const TAIL = 2;

/** $nibble (one hex digit's value) and $unhex (n bytes from 2n digits at $src into $dst). */
const UNHEX = `
  (func $nibble (param $c i32) (result i32)
    (if (result i32) (i32.le_u (local.get $c) (i32.const 57))
      (then (i32.sub (local.get $c) (i32.const 48)))
      (else (i32.sub (i32.or (local.get $c) (i32.const 32)) (i32.const 87)))))
  (func $unhex (param $src i32) (param $n i32) (param $dst i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1))))
        (i32.store8 (i32.add (local.get $dst) (local.get $i))
          (i32.or (i32.shl (call $nibble (i32.load8_u (local.get $s))) (i32.const 4))
                  (call $nibble (i32.load8_u (i32.add (local.get $s) (i32.const 1))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))`;

/** Packs a pointer and a length into execute's i64 result. */
const pack = (ptr: string, len: string): string => `(i64.or (i64.shl (i64.extend_i32_u ${ptr}) (i64.const 32)) (i64.extend_i32_u ${len}))`;

/** A module whose output is exactly the bytes its input carries (ABI-OUTPUT-001's raw bytes). */
export function bytesOutputModule(): string {
  return `(module ${abiPrelude()} ${UNHEX}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32) (local $out i32)
    (local.set $n (i32.shr_u (i32.sub (local.get $len) (i32.const ${HEAD + TAIL})) (i32.const 1)))
    (local.set $out (call $alloc (local.get $n)))
    (call $unhex (i32.add (local.get $ptr) (i32.const ${HEAD})) (local.get $n) (local.get $out))
    ${pack('(local.get $out)', '(local.get $n)')}))`;
}

/**
 * A module that sends the bytes its input carries as one capability request and, when the host
 * answers (rather than ending the run), outputs {"status":"ok","output":{"answer":<the answer>}}.
 */
export function bytesRequestModule(): string {
  const prefix = '{"status":"ok","output":{"answer":';
  return `(module
  (import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))
  ${abiPrelude()} ${UNHEX}
  (data (i32.const 16) "${watString(prefix)}")
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32) (local $req i32) (local $answer i64) (local $aptr i32) (local $alen i32) (local $out i32)
    (local.set $n (i32.shr_u (i32.sub (local.get $len) (i32.const ${HEAD + TAIL})) (i32.const 1)))
    (local.set $req (call $alloc (local.get $n)))
    (call $unhex (i32.add (local.get $ptr) (i32.const ${HEAD})) (local.get $n) (local.get $req))
    (local.set $answer (call $cap (local.get $req) (local.get $n)))
    (local.set $aptr (i32.wrap_i64 (i64.shr_u (local.get $answer) (i64.const 32))))
    (local.set $alen (i32.wrap_i64 (local.get $answer)))
    (local.set $out (call $alloc (i32.add (local.get $alen) (i32.const ${prefix.length + 2}))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const ${prefix.length}))
    (memory.copy (i32.add (local.get $out) (i32.const ${prefix.length})) (local.get $aptr) (local.get $alen))
    (i32.store16 (i32.add (local.get $out) (i32.add (local.get $alen) (i32.const ${prefix.length}))) (i32.const 0x7d7d))
    ${pack('(local.get $out)', `(i32.add (local.get $alen) (i32.const ${prefix.length + 2}))`)}))`;
}

/**
 * The same for extism/v1: a plugin (entry `run`) that decodes its input's hex into an Extism
 * block and sends it as its output, as its error (`error_set`, returning 1), or as a capability
 * request, whose answer becomes its output.
 */
export function bytesExtismModule(mode: 'output' | 'error' | 'request'): string {
  const send = {
    output: '(call $output_set (local.get $block) (local.get $n)) (i32.const 0)',
    error: '(call $error_set (local.get $block)) (i32.const 1)',
    request: '(local.set $block (call $cap (local.get $block))) (call $output_set (local.get $block) (call $length (local.get $block))) (i32.const 0)',
  }[mode];
  return `(module
${KERNEL}
  (import "extism:host/user" "helix_capability_call" (func $cap (param i64) (result i64)))
  (memory (export "memory") 1)
  (func $nibble (param $c i32) (result i32)
    (if (result i32) (i32.le_u (local.get $c) (i32.const 57))
      (then (i32.sub (local.get $c) (i32.const 48)))
      (else (i32.sub (i32.or (local.get $c) (i32.const 32)) (i32.const 87)))))
  (func (export "run") (result i32)
    (local $n i64) (local $block i64) (local $i i64) (local $s i64)
    (local.set $n (i64.shr_u (i64.sub (call $input_length) (i64.const ${HEAD + TAIL})) (i64.const 1)))
    (local.set $block (call $alloc (local.get $n)))
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i64.add (i64.const ${HEAD}) (i64.shl (local.get $i) (i64.const 1))))
        (call $store_u8 (i64.add (local.get $block) (local.get $i))
          (i32.or (i32.shl (call $nibble (call $input_load_u8 (local.get $s))) (i32.const 4))
                  (call $nibble (call $input_load_u8 (i64.add (local.get $s) (i64.const 1))))))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    ${send}))`;
}
