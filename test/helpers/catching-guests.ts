// helix/v1 guests in WAT that use WebAssembly exception handling (try/catch_all, throw) to
// outlive the host's decision to end their call, to re-enter the host, or to throw their own
// exceptions out of it (the conformance kit's, shared), and the same attacks as extism/v1 plugin
// parts for extismWat: the hostile side of ABI-FINAL-001 to ABI-FINAL-006.
import { watString } from '../../conformance/kit/guest-wat.js';
import { CLOCK_REQUEST } from '../../conformance/kit/io-guests.js';

export {
  ANSWER_BAD_POINTER,
  ANSWER_THROW,
  BAD_POINTER_CAUGHT,
  CALL_CAUGHT,
  callingFrom,
  CATCHING_RECURSION,
  CATCHING_SPIN,
  CLOCK_REQUEST,
  PANIC_WITH_CALL,
  REENTRANT_ALLOC,
  START_CALL_CAUGHT,
  stormGuest,
  throwingGuest,
  TRAP_WITH_CALLING_PANIC,
} from '../../conformance/kit/io-guests.js';

const REQUEST_LEN = new TextEncoder().encode(CLOCK_REQUEST).length;

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
export const FILLING_PLUGIN = plugin(
  `(block $full (loop $l (br_if $full (i64.eqz (call $alloc (i64.const 65536)))) (br $l))) (i32.const 0)`,
);

/** Calls the Extism kernel's output_set on a block that does not exist, catches its error, and outputs `{}`. */
export const KERNEL_ERROR_CAUGHT = plugin(
  `(try (do (call $output_set (i64.const 0x7fff000000000000) (i64.const 1))) (catch_all)) ${PLUGIN_OK}`,
);
