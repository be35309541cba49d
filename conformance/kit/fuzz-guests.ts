// helix/v1 guests for replaying fuzz cases in the conformance suite: one module holds a whole
// sample of cases in data segments, and the call's input picks one to return as the output or to
// send as a capability request (helix/v1), or to set as the output or the error (extism/v1).
import { EMIT, KERNEL } from './extism-wat.js';
import { abiPrelude, watString } from './guest-wat.js';

/** Where a selector module's table of cases (pointer, length) lives, and where the cases' bytes begin (page 1, clear of the allocator). */
const TABLE_AT = 1024;
const CASES_AT = 0x10000;
const MAX_CASES = (4096 - TABLE_AT) / 8;

/** $index: the decimal number at offset 5 of the input, which is {"i":N}. */
const INDEX = `
  (func $index (param $ptr i32) (param $len i32) (result i32)
    (local $i i32) (local $n i32) (local $c i32)
    (local.set $i (i32.const 5))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (local.set $c (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
      (br_if $done (i32.or (i32.lt_u (local.get $c) (i32.const 48)) (i32.gt_u (local.get $c) (i32.const 57))))
      (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (i32.sub (local.get $c) (i32.const 48))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.get $n))`;

/**
 * One module holding many cases, which the input {"i":N} selects: with `output`, execute returns
 * case N's bytes verbatim as its output; with `request`, it sends them as a capability request
 * and outputs {"status":"ok","output":{"answer":<the answer>}} when the host answers. One toolpack serves a whole sample, so the host loads
 * one module instead of fifty.
 */
export function selectorModule(cases: readonly Uint8Array[], mode: 'output' | 'request'): string {
  if (cases.length > MAX_CASES) throw new Error(`a selector module holds at most ${MAX_CASES} cases`);
  const segments: string[] = [];
  const table: number[] = [];
  let at = CASES_AT;
  for (const c of cases) {
    segments.push(`(data (i32.const ${at}) "${watString(c)}")`);
    table.push(at, c.length);
    at += c.length + 8;
  }
  const tableBytes = new Uint8Array(new Uint32Array(table).buffer);
  const pages = Math.ceil(at / 65536) + 1;
  const prefix = '{"status":"ok","output":{"answer":';
  const pick = `
    (local.set $k (i32.add (i32.const ${TABLE_AT}) (i32.shl (call $index (local.get $ptr) (local.get $len)) (i32.const 3))))
    (local.set $cptr (i32.load (local.get $k)))
    (local.set $clen (i32.load offset=4 (local.get $k)))`;
  const body =
    mode === 'output'
      ? `${pick}
    (i64.or (i64.shl (i64.extend_i32_u (local.get $cptr)) (i64.const 32)) (i64.extend_i32_u (local.get $clen)))`
      : `${pick}
    (local.set $answer (call $cap (local.get $cptr) (local.get $clen)))
    (local.set $aptr (i32.wrap_i64 (i64.shr_u (local.get $answer) (i64.const 32))))
    (local.set $alen (i32.wrap_i64 (local.get $answer)))
    (local.set $out (call $alloc (i32.add (local.get $alen) (i32.const ${prefix.length + 2}))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const ${prefix.length}))
    (memory.copy (i32.add (local.get $out) (i32.const ${prefix.length})) (local.get $aptr) (local.get $alen))
    (i32.store16 (i32.add (local.get $out) (i32.add (local.get $alen) (i32.const ${prefix.length}))) (i32.const 0x7d7d))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.add (local.get $alen) (i32.const ${prefix.length + 2}))))`;
  return `(module
  ${mode === 'request' ? '(import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))' : ''}
  ${abiPrelude({ pages })}
  (data (i32.const 16) "${watString(prefix)}")
  (data (i32.const ${TABLE_AT}) "${watString(tableBytes)}")
  ${segments.join('\n  ')}
  ${INDEX}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $k i32) (local $cptr i32) (local $clen i32) (local $answer i64) (local $aptr i32) (local $alen i32) (local $out i32)
    ${body}))`;
}

/**
 * The extism/v1 form of selectorModule (entry `run`): the input {"i":N} picks case N, whose bytes
 * become the plugin's output (`output_set`, return 0) or its error (`error_set`, return 1).
 */
export function extismSelectorModule(cases: readonly Uint8Array[], mode: 'output' | 'error'): string {
  if (cases.length > MAX_CASES) throw new Error(`a selector module holds at most ${MAX_CASES} cases`);
  const segments: string[] = [];
  const table: number[] = [];
  let at = CASES_AT;
  for (const c of cases) {
    segments.push(`(data (i32.const ${at}) "${watString(c)}")`);
    table.push(at, c.length);
    at += c.length + 8;
  }
  const tableBytes = new Uint8Array(new Uint32Array(table).buffer);
  const send =
    mode === 'output'
      ? '(call $output_set (local.get $block) (i64.extend_i32_u (local.get $clen))) (i32.const 0)'
      : '(call $error_set (local.get $block)) (i32.const 1)';
  return `(module ${KERNEL}
  (memory (export "memory") ${Math.ceil(at / 65536) + 1})
  (data (i32.const ${TABLE_AT}) "${watString(tableBytes)}")
  ${segments.join('\n  ')}
  ${EMIT}
  (func $index (result i32)
    (local $i i64) (local $n i32) (local $c i32) (local $len i64)
    (local.set $len (call $input_length))
    (local.set $i (i64.const 5))
    (block $done (loop $next
      (br_if $done (i64.ge_u (local.get $i) (local.get $len)))
      (local.set $c (call $input_load_u8 (local.get $i)))
      (br_if $done (i32.or (i32.lt_u (local.get $c) (i32.const 48)) (i32.gt_u (local.get $c) (i32.const 57))))
      (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10)) (i32.sub (local.get $c) (i32.const 48))))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $next)))
    (local.get $n))
  (func (export "run") (result i32)
    (local $k i32) (local $clen i32) (local $block i64)
    (local.set $k (i32.add (i32.const ${TABLE_AT}) (i32.shl (call $index) (i32.const 3))))
    (local.set $clen (i32.load offset=4 (local.get $k)))
    (local.set $block (call $emit (i32.load (local.get $k)) (local.get $clen)))
    ${send}))`;
}
