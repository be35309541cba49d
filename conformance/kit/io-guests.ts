// Hostile guests for the io and decisions checks: helix/v1 modules and extism/v1 plugins that
// output, or send as a capability request, exactly the bytes their input carries (so a check can
// make a guest say anything, valid JSON or not, at any depth), and guests that use WebAssembly
// exception handling (try/catch_all, throw) to outlive a host decision, re-enter the host or
// throw their own exceptions. Adapted from test/helpers/bytes-guest-wat.ts and catching-guests.ts.
import { KERNEL, extismWat } from './extism-wat.js';
import { abiPrelude, numberResultModule, watString, type PreludeOptions } from './guest-wat.js';

/** The input that makes a bytes guest send `bytes` (a string is sent as UTF-8). */
export function bytesInput(bytes: string | Uint8Array): { hex: string } {
  return { hex: Buffer.from(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes).toString('hex') };
}

/** `{"hex":"` before the digits and `"}` after them, as JSON.stringify writes the input. */
const HEAD = 8;
const TAIL = 2;

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
export const packResult = (ptr: string, len: string): string =>
  `(i64.or (i64.shl (i64.extend_i32_u ${ptr}) (i64.const 32)) (i64.extend_i32_u ${len}))`;

/** helix/v1: the output is exactly the bytes the input carries. */
export function bytesOutputModule(): string {
  return `(module ${abiPrelude({ pages: 2 })} ${UNHEX}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32) (local $out i32)
    (local.set $n (i32.shr_u (i32.sub (local.get $len) (i32.const ${HEAD + TAIL})) (i32.const 1)))
    (local.set $out (call $alloc (local.get $n)))
    (call $unhex (i32.add (local.get $ptr) (i32.const ${HEAD})) (local.get $n) (local.get $out))
    ${packResult('(local.get $out)', '(local.get $n)')}))`;
}

/** helix/v1: sends the input's bytes as one capability request; outputs {"answer":<the answer>}. */
export function bytesRequestModule(): string {
  const prefix = '{"status":"ok","output":{"answer":';
  return `(module
  (import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))
  ${abiPrelude({ pages: 2 })} ${UNHEX}
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
    ${packResult('(local.get $out)', `(i32.add (local.get $alen) (i32.const ${prefix.length + 2}))`)}))`;
}

/**
 * extism/v1 (entry `run`): decodes the input's hex into an Extism block and sends it as its
 * output, as its error (`error_set`, returning 1), or as a capability request whose answer
 * becomes its output.
 */
export function bytesExtismModule(mode: 'output' | 'error' | 'request'): string {
  const send = {
    output: '(call $output_set (local.get $block) (local.get $n)) (i32.const 0)',
    error: '(call $error_set (local.get $block)) (i32.const 1)',
    request:
      '(local.set $block (call $cap (local.get $block))) (call $output_set (local.get $block) (call $length (local.get $block))) (i32.const 0)',
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

/** `n` nested objects `{"a":...}` around `leaf`: depth n. */
export function nestedObjects(n: number, leaf = '0'): string {
  return `${'{"a":'.repeat(n)}${leaf}${'}'.repeat(n)}`;
}

/** `n` nested arrays: depth n. */
export function nestedArrays(n: number): string {
  return `${'['.repeat(n)}${']'.repeat(n)}`;
}

/** A helix/v1 ok envelope around an output value given as JSON text. */
export function okEnvelope(output: string): string {
  return `{"status":"ok","output":${output}}`;
}

/** The pointer /a/a/.../a of `n` segments under `prefix`. */
export function aPointer(prefix: string, n: number): string {
  return `${prefix}${'/a'.repeat(n)}`;
}

// ---- guests that catch host decisions ----

/** The capability request every catching guest sends: allowlisted, cheap, journaled when served. */
export const CLOCK_REQUEST = '{"abi_version":1,"name":"clock.now_unix","args":{}}';
const REQUEST_LEN = new TextEncoder().encode(CLOCK_REQUEST).length;
export const PANIC_TEXT = 'panicked on purpose';

const IMPORTS = '(import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))';
const COMMON = `(tag $oops)
  (data (i32.const 1024) "${watString(CLOCK_REQUEST)}")
  (data (i32.const 2048) "${watString(PANIC_TEXT)}")
  (global $inside (mut i32) (i32.const 0))`;

/** One capability call; whatever it throws, the guest catches and carries on. */
export const CALL_CAUGHT = `(try (do (drop (call $cap (i32.const 1024) (i32.const ${REQUEST_LEN})))) (catch_all))`;
const CALL_INSIDE = `(global.set $inside (i32.const 1)) ${CALL_CAUGHT} (global.set $inside (i32.const 0))`;

/** `helix_panic`, which itself tries a capability call before it answers its message. */
export const PANIC_WITH_CALL = `(func (export "helix_panic") (result i64)
    ${CALL_CAUGHT}
    (i64.or (i64.shl (i64.const 2048) (i64.const 32)) (i64.const ${PANIC_TEXT.length})))`;

function guest({ body, extra = '', ...prelude }: PreludeOptions & { body: string; extra?: string }): string {
  return numberResultModule(body, { ...prelude, imports: IMPORTS, extra: `${COMMON} ${extra}`, locals: '(local $i i32)' });
}

/** Makes `calls` capability calls, catching whatever each throws, then runs `after` and answers how many it made. */
export function stormGuest(calls: number, after = '', extra = ''): string {
  return guest({
    body: `(block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (i32.const ${calls})))
      ${CALL_CAUGHT}
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    ${after}
    (i64.extend_i32_u (local.get $i))`,
    extra,
  });
}

/** Passes a pointer far outside its memory to capability_call, catches the fault, and answers ok. */
export const BAD_POINTER_CAUGHT = guest({
  body: '(try (do (drop (call $cap (i32.const 0x7ffffff0) (i32.const 64)))) (catch_all)) (i64.const 1)',
});
/** A start function that makes a capability call and catches the refusal; execute answers ok. */
export const START_CALL_CAUGHT = guest({ body: '(i64.const 1)', extra: `(func $start ${CALL_CAUGHT}) (start $start)` });

/** Throws its own exception, uncaught, from `phase`. */
export function throwingGuest(phase: 'start' | 'alloc' | 'execute' | 'dealloc'): string {
  const oops = '(throw $oops)';
  if (phase === 'start') return guest({ body: '(i64.const 1)', extra: `(func $start ${oops}) (start $start)` });
  if (phase === 'alloc') return guest({ body: '(i64.const 1)', allocHook: oops });
  if (phase === 'dealloc') return guest({ body: '(i64.const 1)', deallocHook: oops });
  return guest({ body: `${oops} (i64.const 1)` });
}

/** alloc, or dealloc, makes a capability call whenever the host calls it, and catches the refusal. */
export function callingFrom(where: 'alloc' | 'dealloc'): string {
  return guest({ body: '(i64.const 1)', ...(where === 'alloc' ? { allocHook: CALL_CAUGHT } : { deallocHook: CALL_CAUGHT }) });
}

/** While the host places a capability answer, alloc makes a capability call of its own (re-entry). */
export const REENTRANT_ALLOC = guest({
  body: `${CALL_INSIDE} (i64.const 1)`,
  allocHook: `(if (global.get $inside) (then ${CALL_CAUGHT}))`,
});
/** While the host places a capability answer, alloc returns a pointer outside memory; execute catches the fault. */
export const ANSWER_BAD_POINTER = guest({
  body: `${CALL_INSIDE} (i64.const 1)`,
  allocHook: '(if (global.get $inside) (then (return (i32.const 0x7ffffff0))))',
});
/** While the host places a capability answer, alloc throws; execute catches its own exception. */
export const ANSWER_THROW = guest({ body: `${CALL_INSIDE} (i64.const 1)`, allocHook: '(if (global.get $inside) (then (throw $oops)))' });
/** One served capability call, then a trap; its helix_panic tries a capability call too. */
export const TRAP_WITH_CALLING_PANIC = guest({ body: `${CALL_CAUGHT} (unreachable)`, extra: PANIC_WITH_CALL });
/** Recurses inside try/catch_all until the stack runs out. */
export const CATCHING_RECURSION = guest({
  body: '(i64.extend_i32_u (call $down (i32.const 0)))',
  extra:
    '(func $down (param $n i32) (result i32) (try (result i32) (do (call $down (i32.add (local.get $n) (i32.const 1)))) (catch_all (local.get $n))))',
});
/** Spins inside try/catch_all until its fuel (or its deadline) runs out. */
export const CATCHING_SPIN = guest({ body: '(try (do (loop $l (br $l))) (catch_all)) (i64.const 1)' });

const PLUGIN_COMMON = `(tag $oops) (data (i32.const 512) "{}")`;
/** Outputs `{}` and returns 0. */
const PLUGIN_OK = '(call $output_set (call $emit (i32.const 512) (i32.const 2)) (i64.const 2)) (i32.const 0)';

function plugin(body: string, extra = ''): string {
  return extismWat(body, { data: watString(CLOCK_REQUEST), extra: `${PLUGIN_COMMON} ${extra}` });
}

/** extism/v1: makes `calls` capability calls, catching whatever each throws, then `after`, then outputs `{}`. */
export function stormPlugin(calls: number, after = ''): string {
  return plugin(`(local $req i64) (local $i i32)
    (local.set $req (call $emit (i32.const 0) (i32.const ${REQUEST_LEN})))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (i32.const ${calls})))
      (try (do (drop (call $cap (local.get $req)))) (catch_all))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    ${after}
    ${PLUGIN_OK}`);
}

/** extism/v1: passes an offset that names no Extism block, catches the fault, and outputs `{}`. */
export const BAD_OFFSET_PLUGIN = plugin(`(try (do (drop (call $cap (i64.const 0x7fff000000000000)))) (catch_all)) ${PLUGIN_OK}`);
/** extism/v1: throws its own exception, uncaught, from its entry function or its start function. */
export function throwingPlugin(where: 'start' | 'execute'): string {
  return where === 'start' ? plugin(PLUGIN_OK, '(func $start (throw $oops)) (start $start)') : plugin('(throw $oops)');
}
/** extism/v1: allocates Extism blocks until Extism refuses (alloc returns 0), then returns 0 without an output. */
export const FILLING_PLUGIN = plugin(
  `(block $full (loop $l (br_if $full (i64.eqz (call $alloc (i64.const 65536)))) (br $l))) (i32.const 0)`,
);
/** extism/v1: calls output_set on a block that does not exist, catches the kernel's error, outputs `{}`. */
export const KERNEL_ERROR_CAUGHT = plugin(
  `(try (do (call $output_set (i64.const 0x7fff000000000000) (i64.const 1))) (catch_all)) ${PLUGIN_OK}`,
);
/** extism/v1: the same kernel error, not caught. */
export const KERNEL_ERROR_UNCAUGHT = plugin(`(call $output_set (i64.const 0x7fff000000000000) (i64.const 1)) ${PLUGIN_OK}`);
/** extism/v1: spins inside try/catch_all until its fuel or deadline runs out. */
export const CATCHING_SPIN_PLUGIN = plugin(`(try (do (loop $l (br $l))) (catch_all)) ${PLUGIN_OK}`);
