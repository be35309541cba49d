// helix/v1 guests in WAT that use WebAssembly exception handling (try/catch_all, throw) to
// outlive the host's decision to end their call, to re-enter the host, or to throw their own
// exceptions out of it: the hostile side of ABI-FINAL-001 to ABI-FINAL-005.
import { numberResultModule, watString, type PreludeOptions } from './guest-wat.js';

/** The capability request every guest here sends: allowlisted, cheap, and journaled when served. */
export const CLOCK_REQUEST = '{"abi_version":1,"name":"clock.now_unix","args":{}}';
const REQUEST_LEN = new TextEncoder().encode(CLOCK_REQUEST).length;
const PANIC_TEXT = 'panicked on purpose';

const IMPORTS = '(import "helix_v1" "capability_call" (func $cap (param i32 i32) (result i64)))';
/** The guest's own tag, the request at 1024, a panic message at 2048, and a flag execute raises around its call. */
const COMMON = `(tag $oops)
  (data (i32.const 1024) "${watString(CLOCK_REQUEST)}")
  (data (i32.const 2048) "${watString(PANIC_TEXT)}")
  (global $inside (mut i32) (i32.const 0))`;

/** One capability call; whatever it throws, the guest catches and carries on. */
export const CALL_CAUGHT = `(try (do (drop (call $cap (i32.const 1024) (i32.const ${REQUEST_LEN})))) (catch_all))`;

/** One capability call with `$inside` raised, so the alloc hooks below act only while the host places its answer. */
const CALL_INSIDE = `(global.set $inside (i32.const 1)) ${CALL_CAUGHT} (global.set $inside (i32.const 0))`;

/** `helix_panic`, which itself tries a capability call before it answers its message. */
export const PANIC_WITH_CALL = `(func (export "helix_panic") (result i64)
    ${CALL_CAUGHT}
    (i64.or (i64.shl (i64.const 2048) (i64.const 32)) (i64.const ${PANIC_TEXT.length})))`;

interface GuestParts extends PreludeOptions {
  /** Instructions of execute that leave an i64 (the answer's value). */
  readonly body: string;
  readonly extra?: string;
}

function guest({ body, extra = '', ...prelude }: GuestParts): string {
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
export const BAD_POINTER_CAUGHT = guest({ body: '(try (do (drop (call $cap (i32.const 0x7ffffff0) (i32.const 64)))) (catch_all)) (i64.const 1)' });

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
export const REENTRANT_ALLOC = guest({ body: `${CALL_INSIDE} (i64.const 1)`, allocHook: `(if (global.get $inside) (then ${CALL_CAUGHT}))` });

/** While the host places a capability answer, alloc returns a pointer outside memory; execute catches the fault. */
export const ANSWER_BAD_POINTER = guest({ body: `${CALL_INSIDE} (i64.const 1)`, allocHook: '(if (global.get $inside) (then (return (i32.const 0x7ffffff0))))' });

/** While the host places a capability answer, alloc throws; execute catches its own exception. */
export const ANSWER_THROW = guest({ body: `${CALL_INSIDE} (i64.const 1)`, allocHook: '(if (global.get $inside) (then (throw $oops)))' });

/** One served capability call, then a trap; its helix_panic tries a capability call too. */
export const TRAP_WITH_CALLING_PANIC = guest({ body: `${CALL_CAUGHT} (unreachable)`, extra: PANIC_WITH_CALL });

/** Recurses inside try/catch_all until the stack runs out. */
export const CATCHING_RECURSION = guest({
  body: '(i64.extend_i32_u (call $down (i32.const 0)))',
  extra: '(func $down (param $n i32) (result i32) (try (result i32) (do (call $down (i32.add (local.get $n) (i32.const 1)))) (catch_all (local.get $n))))',
});

/** Spins inside try/catch_all until its fuel runs out. */
export const CATCHING_SPIN = guest({ body: '(try (do (loop $l (br $l))) (catch_all)) (i64.const 1)' });

/** extism/v1 plugins (see extism-wat.ts) doing the same through `helix_capability_call`. */
const PLUGIN_COMMON = `(tag $oops) (data (i32.const 512) "{}")`;
/** Outputs `{}` and returns 0. */
const PLUGIN_OK = '(call $output_set (call $emit (i32.const 512) (i32.const 2)) (i64.const 2)) (i32.const 0)';

/** The parts of a plugin for extismWat: `run`'s body, the request at 0, and the common fields. */
export interface PluginParts {
  readonly body: string;
  readonly data: string;
  readonly extra: string;
}

function plugin(body: string, extra = ''): PluginParts {
  return { body, data: watString(CLOCK_REQUEST), extra: `${PLUGIN_COMMON} ${extra}` };
}

/** Makes `calls` capability calls, catching whatever each throws, then outputs `{}`. */
export function stormPlugin(calls: number): PluginParts {
  return plugin(`(local $req i64) (local $i i32)
    (local.set $req (call $emit (i32.const 0) (i32.const ${REQUEST_LEN})))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (i32.const ${calls})))
      (try (do (drop (call $cap (local.get $req)))) (catch_all))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    ${PLUGIN_OK}`);
}

/** Passes an offset that names no Extism block, catches the fault, and outputs `{}`. */
export const BAD_OFFSET_PLUGIN = plugin(`(try (do (drop (call $cap (i64.const 0x7fff000000000000)))) (catch_all)) ${PLUGIN_OK}`);

/** Throws its own exception, uncaught, from its entry function or its start function. */
export function throwingPlugin(where: 'start' | 'execute'): PluginParts {
  return where === 'start' ? plugin(PLUGIN_OK, '(func $start (throw $oops)) (start $start)') : plugin('(throw $oops)');
}

/** Allocates Extism blocks until Extism refuses, then returns 0 without an output. */
export const FILLING_PLUGIN = plugin(`(block $full (loop $l (br_if $full (i64.eqz (call $alloc (i64.const 65536)))) (br $l))) (i32.const 0)`);

/** Calls the Extism kernel's output_set on a block that does not exist, catches its error, and outputs `{}`. */
export const KERNEL_ERROR_CAUGHT = plugin(`(try (do (call $output_set (i64.const 0x7fff000000000000) (i64.const 1))) (catch_all)) ${PLUGIN_OK}`);
