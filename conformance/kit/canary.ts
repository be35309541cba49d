// The canary: a well-behaved tool every check's host also loads. After each hostile check the
// runner calls it on the same host with a new input, so it runs rather than replays, and the
// check fails unless it answers with its input: the host survived. On the extism engine the
// canary is an extism/v1 plugin, so the Extism lanes are proven alive too.
import { extismWat } from './extism-wat.js';
import { echoModule } from './guest-wat.js';
import type { ToolpackSpec } from './toolpack.js';

export const CANARY_ID = 'conformance.canary';

/** An extism/v1 plugin whose output is its input, byte for byte. */
export const EXTISM_ECHO = extismWat(`
    (local $n i64) (local $block i64) (local $i i64)
    (local.set $n (call $input_length))
    (local.set $block (call $alloc (local.get $n)))
    (block $done (loop $copy
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $block) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $copy)))
    (call $output_set (local.get $block) (local.get $n))
    (i32.const 0)`);

/** The canary's toolpack for an engine. */
export function canaryPack(engine: 'helix' | 'extism' | 'container'): ToolpackSpec {
  if (engine === 'extism') return { id: CANARY_ID, module: EXTISM_ECHO, manifest: { abi: 'extism/v1', entrypoint: 'run' } };
  return { id: CANARY_ID, module: echoModule() };
}
