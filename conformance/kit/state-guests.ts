// Guests that keep state between calls, to show that none survives into the next call: counters of
// their own calls and executions, and plants that look for what an earlier call left in memory,
// globals and Extism variables before leaving their own (ABI-CALL-001, ABI-EXTISM-006). One of each
// for helix/v1 and for extism/v1; the engine adapters hand a check its engine's.
import { EMIT, extismWat, KERNEL } from './extism-wat.js';
import { numberResultModule } from './guest-wat.js';

/**
 * helix/v1: counts its calls in a global, a byte of memory and the pages before growing by one,
 * answering {"value": global x 10,000 + byte x 100 + pages}: 10101 on a fresh instance.
 */
export const HELIX_STATE_COUNTER = numberResultModule(
  `(global.set $g (i32.add (global.get $g) (i32.const 1)))
    (i32.store8 (i32.const 8000) (i32.add (i32.load8_u (i32.const 8000)) (i32.const 1)))
    (local.set $pages (memory.size))
    (drop (memory.grow (i32.const 1)))
    (i32.store8 (i32.const 70000) (i32.add (i32.load8_u (i32.const 70000)) (i32.const 1)))
    (i64.extend_i32_u (i32.add (i32.add (i32.mul (global.get $g) (i32.const 10000)) (i32.mul (i32.load8_u (i32.const 8000)) (i32.const 100))) (local.get $pages)))`,
  { extra: '(global $g (mut i32) (i32.const 0))', locals: '(local $pages i32)' },
);

/** helix/v1: counts its executions in a global and answers the count as {"value": N}. */
export const HELIX_EXECUTION_COUNTER = numberResultModule(
  '(global.set $count (i64.add (global.get $count) (i64.const 1))) (global.get $count)',
  {
    extra: '(global $count (mut i64) (i64.const 0))',
  },
);

/** extism/v1: the same, answering {"value": N} with N its execution count (one digit). */
export const EXTISM_EXECUTION_COUNTER = extismWat(
  `(global.set $count (i32.add (global.get $count) (i32.const 1)))
    (i32.store8 (i32.const 9) (i32.add (i32.const 48) (global.get $count)))
    (call $output_set (call $emit (i32.const 0) (i32.const 11)) (i64.const 11))
    (i32.const 0)`,
  { data: '{\\"value\\":0}', extra: '(global $count (mut i32) (i32.const 0))' },
);

/** Where a plant keeps the secret it leaves for the next call to find. */
export const SECRET_SLOT = 60_000;

/**
 * helix/v1: reports what it finds of an earlier call (bit 1: the secret slot is not zero, bit 2: a
 * mutable global is set, bit 4: memory is not its initial page) and the input pointer `alloc`
 * gave, as flags x 1,000,000 + pointer; then plants its own input in the slot and sets the global
 * (and, with `grow`, grows memory and writes in the new page).
 */
export function helixPlant(grow: boolean): string {
  return numberResultModule(
    `
    (if (i64.ne (i64.load (i32.const ${SECRET_SLOT})) (i64.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 1)))))
    (if (i32.ne (global.get $g) (i32.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 2)))))
    (if (i32.ne (memory.size) (i32.const 1)) (then (local.set $f (i32.or (local.get $f) (i32.const 4)))))
    (memory.copy (i32.const ${SECRET_SLOT}) (local.get $ptr) (local.get $len))
    (global.set $g (i32.const 777))
    ${grow ? '(drop (memory.grow (i32.const 1))) (i32.store (i32.const 70000) (i32.const 0x5ec2e7))' : ''}
    (i64.add (i64.mul (i64.extend_i32_u (local.get $f)) (i64.const 1000000)) (i64.extend_i32_u (local.get $ptr)))`,
    { locals: '(local $f i32)', extra: '(global $g (mut i32) (i32.const 0))' },
  );
}

/**
 * extism/v1: the same, plus an Extism variable (bit 8 when `k` is set); answers {"v":<flags>}
 * and plants a secret in memory, a global and the variable `k`.
 */
export const EXTISM_PLANT = `(module ${KERNEL}
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 0))
  (data (i32.const 0) "{\\"v\\":0}")
  (data (i32.const 100) "k")
  (data (i32.const 104) "secret")
  ${EMIT}
  (func (export "run") (result i32)
    (local $f i32)
    (if (i64.ne (i64.load (i32.const ${SECRET_SLOT})) (i64.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 1)))))
    (if (i32.ne (global.get $g) (i32.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 2)))))
    (if (i64.ne (call $var_get (call $emit (i32.const 100) (i32.const 1))) (i64.const 0)) (then (local.set $f (i32.or (local.get $f) (i32.const 8)))))
    (i64.store (i32.const ${SECRET_SLOT}) (i64.add (call $input_length) (i64.const 0x5ec2e70000)))
    (global.set $g (i32.const 777))
    (call $var_set (call $emit (i32.const 100) (i32.const 1)) (call $emit (i32.const 104) (i32.const 6)))
    (i32.store8 (i32.const 5) (i32.add (i32.const 48) (local.get $f)))
    (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
    (i32.const 0)))`;
