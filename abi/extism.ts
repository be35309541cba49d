// What an extism/v1 module may import and must export (ABI-EXTISM-002..005), shared by the
// loader, which refuses anything else, and the Extism runner, which provides it.
import type { Signature } from './constants.js';

/** The Extism kernel's namespace; the engine provides these functions (ABI-EXTISM-011). */
export const EXTISM_ENV_MODULE = 'extism:host/env';

/** The namespace of user host functions, and the one Helix offers there: the broker. */
export const EXTISM_USER_MODULE = 'extism:host/user';
export const EXTISM_CAPABILITY_CALL = 'helix_capability_call';
export const EXTISM_CAPABILITY_CALL_SIGNATURE: Signature = { params: ['i64'], results: ['i64'] };

/** The entry function's signature: no parameters, an i32 return code (0 is success). */
export const EXTISM_ENTRY_SIGNATURE: Signature = { params: [], results: ['i32'] };

const sig = (params: string[], results: string[]): Signature => ({ params, results });

/**
 * The kernel functions a plugin may import, with their signatures. Left out on purpose:
 * `http_request`, `http_status_code` and `http_headers`, because a plugin reaches the network
 * only through the broker's `http.request`, under the manifest's and the policy's rules.
 */
export const EXTISM_KERNEL_IMPORTS: Readonly<Record<string, Signature>> = {
  input_length: sig([], ['i64']),
  input_load_u8: sig(['i64'], ['i32']),
  input_load_u64: sig(['i64'], ['i64']),
  length: sig(['i64'], ['i64']),
  length_unsafe: sig(['i64'], ['i64']),
  alloc: sig(['i64'], ['i64']),
  free: sig(['i64'], []),
  output_set: sig(['i64', 'i64'], []),
  error_set: sig(['i64'], []),
  error_get: sig([], ['i64']),
  config_get: sig(['i64'], ['i64']),
  var_get: sig(['i64'], ['i64']),
  var_set: sig(['i64', 'i64'], []),
  store_u8: sig(['i64', 'i32'], []),
  load_u8: sig(['i64'], ['i32']),
  store_u64: sig(['i64', 'i64'], []),
  load_u64: sig(['i64'], ['i64']),
  log_trace: sig(['i64'], []),
  log_debug: sig(['i64'], []),
  log_info: sig(['i64'], []),
  log_warn: sig(['i64'], []),
  log_error: sig(['i64'], []),
  get_log_level: sig([], ['i32']),
};

/**
 * Exports Extism runs while it instantiates a plugin (WASI command and reactor entry points,
 * GHC's initialiser): outside a call and unmetered; Helix refuses them so that a plugin behaves
 * the same on the engine and on @extism/extism. A module's start section is fine: the instrumenter
 * turns it into an export that the metering shim runs at the beginning of each call.
 */
export const EXTISM_REFUSED_EXPORTS = ['_start', '_initialize', 'hs_init'] as const;
