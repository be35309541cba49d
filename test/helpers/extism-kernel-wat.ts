// A WAT Extism plugin that calls the kernel functions directly, one export per behaviour, for the
// conformance test of the engine's kernel against @extism/extism (test/extism-conformance.test.ts):
// variables, config, errors, output, u64 and u8 loads and stores, input, logging, the memory cap,
// and the kernel's own failures.
import { EMIT } from './extism-wat.js';

/** Strings in linear memory: offset and text; every one ASCII. */
const STRINGS = {
  key: [0, 'k'],
  value: [16, '"v1"'],
  boom: [32, 'boom'],
  jsonError: [48, '{"code":"I-REQ-INPUT","message":"bad input"}'],
  yes: [128, 'true'],
  no: [136, 'false'],
  nil: [144, 'null'],
  cfg: [160, 'x'],
  log: [176, 'log line'],
} as const;
type Name = keyof typeof STRINGS;

const at = (name: Name) => `(i32.const ${STRINGS[name][0]}) (i32.const ${STRINGS[name][1].length})`;
const block = (name: Name) => `(call $emit ${at(name)})`;
const out = (name: Name) => `(call $out ${at(name)})`;
const NO_BLOCK = '(i64.const 0x63000000000000)';

/** The plugin's exports, each `() -> i32`, by name. */
const ENTRIES: Record<string, string> = {
  vars: `(local $v i64)
    (call $var_set ${block('key')} ${block('value')})
    (local.set $v (call $var_get ${block('key')}))
    (call $output_set (local.get $v) (call $length (local.get $v)))
    (i32.const 0)`,
  vars_delete: `(call $var_set ${block('key')} ${block('value')})
    (call $var_set ${block('key')} (i64.const 0))
    (if (i64.eqz (call $var_get ${block('key')})) (then ${out('yes')}) (else ${out('no')}))
    (i32.const 0)`,
  config: `(if (i64.eqz (call $config_get ${block('cfg')})) (then ${out('nil')}) (else ${out('no')}))
    (i32.const 0)`,
  error_plain: `(call $error_set ${block('boom')}) (i32.const 1)`,
  error_json: `(call $error_set ${block('jsonError')}) (i32.const 1)`,
  error_freed: `(local $b i64)
    (local.set $b ${block('boom')})
    (call $error_set (local.get $b))
    (if (i64.ne (call $error_get) (local.get $b)) (then unreachable))
    (call $free (local.get $b))
    (i32.const 0)`,
  copy_u64: `(local $n i64) (local $a i64) (local $b i64) (local $i i64)
    (local.set $n (call $input_length))
    (local.set $a (call $alloc (local.get $n)))
    (local.set $b (call $alloc (local.get $n)))
    (block $d (loop $l
      (br_if $d (i64.gt_u (i64.add (local.get $i) (i64.const 8)) (local.get $n)))
      (call $store_u64 (i64.add (local.get $a) (local.get $i)) (call $input_load_u64 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 8))) (br $l)))
    (block $d (loop $l
      (br_if $d (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $a) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1))) (br $l)))
    (local.set $i (i64.const 0))
    (block $d (loop $l
      (br_if $d (i64.gt_u (i64.add (local.get $i) (i64.const 8)) (local.get $n)))
      (call $store_u64 (i64.add (local.get $b) (local.get $i)) (call $load_u64 (i64.add (local.get $a) (local.get $i))))
      (local.set $i (i64.add (local.get $i) (i64.const 8))) (br $l)))
    (block $d (loop $l
      (br_if $d (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $b) (local.get $i)) (call $load_u8 (i64.add (local.get $a) (local.get $i))))
      (local.set $i (i64.add (local.get $i) (i64.const 1))) (br $l)))
    (call $free (local.get $a))
    (call $output_set (local.get $b) (call $length_unsafe (local.get $b)))
    (i32.const 0)`,
  short_output: `(local $b i64)
    (local.set $b (call $alloc (i64.const 10)))
    (call $store_u8 (local.get $b) (i32.const 49))
    (call $output_set (local.get $b) (i64.const 1))
    (i32.const 0)`,
  no_output: '(i32.const 0)',
  log: `(local $b i64)
    (local.set $b ${block('log')})
    (call $log_info (local.get $b))
    (call $log_error ${block('log')})
    (if (i32.and (i32.eq (call $get_log_level) (i32.const 0x7fffffff)) (i64.eqz (call $length (local.get $b)))) (then ${out('yes')}) (else ${out('no')}))
    (i32.const 0)`,
  alloc_cap: `(if (i64.eqz (call $alloc (i64.const 4194305))) (then ${out('yes')}) (else ${out('no')}))
    (i32.const 0)`,
  bad_load: `(drop (call $load_u64 ${NO_BLOCK})) (i32.const 0)`,
  bad_store: `(call $store_u8 (i64.add (call $alloc (i64.const 10)) (i64.const 100)) (i32.const 1)) (i32.const 0)`,
  bad_output: `(call $output_set ${NO_BLOCK} (i64.const 1)) (i32.const 0)`,
  long_output: `(call $output_set (call $alloc (i64.const 4)) (i64.const 5)) (i32.const 0)`,
};

/** The names of the plugin's entries. */
export const KERNEL_ENTRIES = Object.keys(ENTRIES);

const IMPORTS: Array<[string, string]> = [
  ['input_length', '(result i64)'],
  ['input_load_u8', '(param i64) (result i32)'],
  ['input_load_u64', '(param i64) (result i64)'],
  ['length', '(param i64) (result i64)'],
  ['length_unsafe', '(param i64) (result i64)'],
  ['alloc', '(param i64) (result i64)'],
  ['free', '(param i64)'],
  ['output_set', '(param i64 i64)'],
  ['error_set', '(param i64)'],
  ['error_get', '(result i64)'],
  ['config_get', '(param i64) (result i64)'],
  ['var_get', '(param i64) (result i64)'],
  ['var_set', '(param i64 i64)'],
  ['store_u8', '(param i64 i32)'],
  ['load_u8', '(param i64) (result i32)'],
  ['store_u64', '(param i64 i64)'],
  ['load_u64', '(param i64) (result i64)'],
  ['log_info', '(param i64)'],
  ['log_error', '(param i64)'],
  ['get_log_level', '(result i32)'],
];

/** The plugin's WAT source. */
export const KERNEL_PLUGIN = `(module
  ${IMPORTS.map(([name, sig]) => `(import "extism:host/env" "${name}" (func $${name} ${sig}))`).join('\n  ')}
  (memory (export "memory") 1)
  ${Object.values(STRINGS)
    .map(([offset, text]) => `(data (i32.const ${offset}) "${text.replace(/"/g, '\\"')}")`)
    .join('\n  ')}
  ${EMIT}
  (func $out (param $ptr i32) (param $len i32)
    (call $output_set (call $emit (local.get $ptr) (local.get $len)) (i64.extend_i32_u (local.get $len))))
  ${Object.entries(ENTRIES)
    .map(([name, body]) => `(func (export "${name}") (result i32) ${body})`)
    .join('\n  ')})`;
