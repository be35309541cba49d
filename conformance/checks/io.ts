// Conformance checks: input and output across the ABI. Oversize input and output, pointers and
// lengths that lie outside the guest's memory or wrap past 2^32, an alloc that returns garbage,
// output that is not UTF-8, not JSON, not an envelope, not within the JSON bounds or not valid
// against the output schema, requests a client should never be able to slip past the host, and the
// extism/v1 ways of answering. Each ends in one envelope with its exact code; the host serves on.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../host/1-base/paths.js';
import { hostStore } from '../../host/5-host/host.js';
import { verifyRun } from '../../host/4-calls/runs/verify.js';
import { readModuleRecord } from '../../host/3-store/modules.js';
import { loadExtism } from '../../host/2-sandbox/engine/extism.js';
import type { ResponseEnvelope } from '../../abi/index.js';
import { CheckFailure, expect, expectOutcome, expectSuccess, type Check } from '../check.js';
import { EXTISM_COUNTER, extismWat, KERNEL, EMIT } from '../kit/extism-wat.js';
import { abiPrelude, echoModule, numberResultModule, watString } from '../kit/guest-wat.js';
import {
  aPointer,
  bytesInput,
  bytesPackModule,
  FILLING_PLUGIN,
  KERNEL_ERROR_CAUGHT,
  KERNEL_ERROR_UNCAUGHT,
  nestedArrays,
  nestedObjects,
  okEnvelope,
} from '../kit/io-guests.js';
import {
  expectDetails,
  expectGuestFault,
  expectRefused,
  IO_LIMITS,
  ioPack,
  journalOf,
  runOf,
  capabilityAuditOf,
} from '../kit/io-support.js';
import { wat2wasm } from '../kit/wat.js';
import { EXTISM_ECHO } from '../kit/canary.js';

const BOTH = ['helix', 'extism'] as const;
const OPEN = { type: 'object' };

/** A helix/v1 module whose execute returns the packed i64 `packed` (a WAT literal) without writing anything. */
const packedResultModule = (packed: string): string =>
  `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const ${packed})))`;

/** A helix/v1 echo guest whose alloc answers `ret` (a WAT expression) instead of a place in memory. */
const garbageAllocModule = (ret: string): string => echoModule().replace('(local $p i32)', `(local $p i32) (return ${ret})`);

/** An extism/v1 plugin that outputs the bytes of `text` (given as data at 0). */
const extismOutput = (bytes: Uint8Array | string): string => {
  const n = typeof bytes === 'string' ? new TextEncoder().encode(bytes).length : bytes.length;
  return extismWat(`(call $output_set (call $emit (i32.const 0) (i32.const ${n})) (i64.const ${n})) (i32.const 0)`, {
    data: watString(bytes),
  });
};

/** True when a value's JSON holds a lone surrogate (JSON.stringify escapes only those). */
const hasLoneSurrogate = (v: unknown): boolean => /\\ud[89a-f][0-9a-f]{2}/i.test(JSON.stringify(v) ?? '');

const numberModule = (body: string, extra = '', locals = ''): string => numberResultModule(body, { extra, locals });

/** Extra kernel imports of the hostile kernel plugins. */
const MORE_KERNEL = `
  (import "extism:host/env" "free" (func $free (param i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))`;

/** extism/v1 plugins misusing the Extism kernel, each with `run`; the data at 0 is {"a":1}. */
const KERNEL_ABUSE: Record<string, string> = {
  short_len: '(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 3)) (i32.const 0)',
  long_len: '(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 4000)) (i32.const 0)',
  load_u8_nothing:
    '(i32.store8 (i32.const 5) (i32.add (i32.const 48) (call $load_u8 (i64.const 0x0123000000000000)))) (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7)) (i32.const 0)',
  load_u64_nothing: '(drop (call $load_u64 (i64.const 0x0123000000000000))) (i32.const 0)',
  store_past_end:
    '(local $b i64) (local.set $b (call $emit (i32.const 0) (i32.const 7))) (call $store_u8 (i64.add (local.get $b) (i64.const 7)) (i32.const 65)) (call $output_set (local.get $b) (i64.const 7)) (i32.const 0)',
  error_then_free:
    '(local $b i64) (local.set $b (call $emit (i32.const 0) (i32.const 7))) (call $error_set (local.get $b)) (call $free (local.get $b)) (i32.const 0)',
  set_missing_block: '(call $output_set (i64.const 0x7fff000000000000) (i64.const 1)) (i32.const 0)',
  output_then_error:
    '(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7)) (call $error_set (call $emit (i32.const 0) (i32.const 7))) (i32.const 1)',
};
const kernelAbuse = (body: string): string => `(module ${KERNEL} ${MORE_KERNEL}
  (import "extism:host/user" "helix_capability_call" (func $cap (param i64) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\\"a\\":1}")
  ${EMIT}
  (func (export "run") (result i32) ${body}))`;

/** How @extism/extism 2.0.0-rc13 in worker mode, configured as Helix configures it, ends one call of `bytes`. */
async function referenceCall(
  bytes: Uint8Array,
  input: Uint8Array,
  pages: number,
): Promise<{ kind: 'output'; bytes: Uint8Array | null } | { kind: 'plugin-error'; text: string } | { kind: 'failure'; message: string }> {
  const createPlugin = await loadExtism();
  const plugin = await createPlugin({ wasm: [{ data: bytes }] }, {
    runInWorker: true,
    useWasi: false,
    logLevel: 'silent',
    functions: {
      'extism:host/user': {
        helix_capability_call: () => {
          throw new Error('no capabilities here');
        },
      },
    },
    memory: { maxPages: pages, maxVarBytes: pages * 65_536, maxHttpResponseBytes: 0 },
    allowedHosts: [],
    timeoutMs: null,
    sharedArrayBufferSize: 1 << 20,
  } as never);
  try {
    const out = await plugin.call('run', input);
    return { kind: 'output', bytes: out === null ? null : out.bytes().slice() };
  } catch (err) {
    const message = err instanceof Error ? err.message : String((err as { message?: unknown }).message ?? err);
    const prefix = 'Plugin-originated error: ';
    return message.startsWith(prefix) ? { kind: 'plugin-error', text: message.slice(prefix.length) } : { kind: 'failure', message };
  } finally {
    await plugin.close();
  }
}

export const ioChecks: readonly Check[] = [
  {
    id: 'io.oversize-input',
    title: 'An input one byte past maxInputBytes is refused before anything runs',
    category: 'io',
    abi: ['ABI-LIMIT-001', 'ABI-RESP-003'],
    engines: BOTH,
    expected:
      'invalid_request I-REQ-INPUT-SIZE with details.max_input_bytes 1024 and no run; an input of exactly 1024 bytes runs and comes back',
    packs: (engine) => [
      ioPack(engine, 'io.echo', engine.name === 'extism' ? EXTISM_ECHO : echoModule(), { limits: { ...IO_LIMITS, maxInputBytes: 1024 } }),
    ],
    async run(ctx) {
      // {"s":"xxx…"} is 8 bytes around the string.
      const fits = { s: 'x'.repeat(1024 - 8) };
      const over = { s: 'x'.repeat(1024 - 7) };
      const big = { s: 'é'.repeat(600) }; // 1200 bytes of UTF-8 in 600 characters: the bound is in bytes
      const r = await ctx.call('io.echo', over);
      expectRefused(r, 'I-REQ-INPUT-SIZE', { max_input_bytes: 1024 });
      expectRefused(await ctx.call('io.echo', big), 'I-REQ-INPUT-SIZE');
      const ok = await ctx.call('io.echo', fits);
      expect(JSON.stringify(expectSuccess(ok)) === JSON.stringify(fits), 'the input of exactly 1024 bytes did not come back');
      ctx.observe('refused', r.error);
    },
  },
  {
    id: 'io.oversize-output',
    title: 'An output past maxOutputBytes is refused before it is decoded, however it is built',
    category: 'io',
    abi: ['ABI-LIMIT-001', 'ABI-EXTISM-007', 'ABI-OUTPUT-001'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-OUTPUT-TOO-LARGE for 4 KiB of output (valid JSON, and bytes that are not even UTF-8) under maxOutputBytes 1024; the run is recorded failed',
    packs: (engine) => [
      ioPack(engine, 'io.bytes', engine.guests.bytes('output'), { limits: { ...IO_LIMITS, maxOutputBytes: 1024 } }, { outputSchema: OPEN }),
    ],
    async run(ctx) {
      const json = ctx.engine.name === 'extism' ? `{"s":"${'x'.repeat(4096)}"}` : okEnvelope(`{"s":"${'x'.repeat(4096)}"}`);
      const r = await ctx.call('io.bytes', bytesInput(json));
      await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-TOO-LARGE');
      // Not UTF-8 and too large: the size is checked first, so nothing is decoded.
      const junk = await ctx.call('io.bytes', bytesInput(new Uint8Array(4096).fill(0xff)));
      await expectGuestFault(ctx, junk, 'S-TOOL-OUTPUT-TOO-LARGE');
      ctx.observe('error', r.error);
    },
  },
  {
    id: 'io.packed-result-outside-memory',
    title: "execute's packed (ptr,len) pointing outside memory, or wrapping past 2^32, is S-TOOL-BAD-POINTER",
    category: 'io',
    abi: ['ABI-CALL-004'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-BAD-POINTER for each: ptr at the end of memory, ptr+len one past it, ptr 0xFFFFFFF0 with len 0x20 (wraps to 0x10), len 0xFFFFFFFF, ptr 0xFFFFFFFF; the host reads nothing outside the guest; an envelope in the last 27 bytes of memory is read (success)',
    packs: () => [
      { id: 'io.ptr_at_end', module: packedResultModule('0x0001000000000001') },
      { id: 'io.ptr_len_past_end', module: packedResultModule('0x0000fff000000011') },
      { id: 'io.ptr_wraps', module: packedResultModule('0xfffffff000000020') },
      { id: 'io.len_huge', module: packedResultModule('0x00000010ffffffff') },
      { id: 'io.ptr_max', module: packedResultModule('0xffffffff00000001') },
      // The edge inside: an envelope in the last 27 bytes of the page is read.
      {
        id: 'io.ptr_last_bytes',
        module: `(module ${abiPrelude()} (data (i32.const 65509) "${watString('{"status":"ok","output":{}}')}") (func (export "execute") (param i32 i32) (result i64) (i64.const 0x0000ffe50000001b)))`,
      },
    ],
    async run(ctx) {
      const seen: Record<string, unknown> = {};
      for (const tool of ['io.ptr_at_end', 'io.ptr_len_past_end', 'io.ptr_wraps', 'io.len_huge', 'io.ptr_max']) {
        const r = await ctx.call(tool, { t: tool });
        await expectGuestFault(ctx, r, 'S-TOOL-BAD-POINTER');
        seen[tool] = r.error?.details;
      }
      expectSuccess(await ctx.call('io.ptr_last_bytes', {}));
      ctx.observe('details', seen);
    },
  },
  {
    id: 'io.alloc-returns-garbage',
    title: 'alloc answering a pointer outside memory, or one whose input would run past its end, is S-TOOL-BAD-POINTER',
    category: 'io',
    abi: ['ABI-CALL-004', 'ABI-CALL-003'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-BAD-POINTER with details.export "alloc" for alloc returning 0xFFFFFFF0, -1, and 65530 for a 100-byte input in a 1-page memory; the host writes nothing outside the guest',
    packs: () => [
      { id: 'io.alloc_far', module: garbageAllocModule('(i32.const 0xfffffff0)') },
      { id: 'io.alloc_minus_one', module: garbageAllocModule('(i32.const -1)') },
      { id: 'io.alloc_near_end', module: garbageAllocModule('(i32.const 65530)') },
    ],
    async run(ctx) {
      const input = { pad: 'p'.repeat(90) };
      for (const tool of ['io.alloc_far', 'io.alloc_minus_one', 'io.alloc_near_end']) {
        const r = await ctx.call(tool, input);
        await expectGuestFault(ctx, r, 'S-TOOL-BAD-POINTER', { export: 'alloc' });
        ctx.observe(tool, r.error?.details);
      }
    },
  },
  {
    id: 'io.input-placed-exactly',
    title: 'The host calls alloc(input_len) once and execute(ptr, input_len) with the UTF-8 JSON of the input, multi-byte text included',
    category: 'io',
    abi: ['ABI-CALL-003'],
    engines: ['helix'],
    expected:
      "success: a guest that traps unless alloc was called exactly once, execute got alloc's pointer and byte length, and the bytes start with '{', echoes an input of multi-byte text back unchanged",
    packs: () => [
      {
        id: 'io.placed',
        module: echoModule(`(global $alen (mut i32) (i32.const -1)) (global $calls (mut i32) (i32.const 0))`)
          .replace(
            '(local $p i32)',
            '(local $p i32) (if (i32.eqz (global.get $calls)) (then (global.set $alen (local.get $len)))) (global.set $calls (i32.add (global.get $calls) (i32.const 1)))',
          )
          .replace(
            '(local $out i32)',
            `(local $out i32)
    (if (i32.ne (global.get $calls) (i32.const 1)) (then unreachable))
    (if (i32.ne (local.get $ptr) (i32.const 4096)) (then unreachable))
    (if (i32.ne (local.get $len) (global.get $alen)) (then unreachable))
    (if (i32.ne (i32.load8_u (local.get $ptr)) (i32.const 123)) (then unreachable))`,
          ),
      },
    ],
    async run(ctx) {
      const input = { text: 'ü€𝄞 — ✓', list: [1, 2.5, null, true], nested: { clé: 'värde' } };
      const out = expectSuccess(await ctx.call('io.placed', input));
      expect(JSON.stringify(out) === JSON.stringify(input), `the echo differs: ${JSON.stringify(out)}`);
      ctx.observe('input_bytes', Buffer.byteLength(JSON.stringify(input)));
    },
  },
  {
    id: 'io.dealloc-order',
    title: 'After reading the output the host calls dealloc(out) and then dealloc(in), and a trap there is a dealloc fault',
    category: 'io',
    abi: ['ABI-CALL-005', 'ABI-TRAP-001'],
    engines: ['helix'],
    expected:
      'success for a guest whose dealloc traps on any other order; S-TOOL-TRAP with details.phase "dealloc" and the panic "input freed second" for a guest that traps on reaching the second (input) dealloc',
    packs: () => {
      const module = (trapAtSecond: boolean): string => `(module ${abiPrelude({
        deallocHook: `
          (if (i32.eqz (global.get $seen))
            (then
              (global.set $msg (i32.const 3000))
              (if (i32.or (i32.ne (local.get 0) (global.get $out)) (i32.ne (local.get 1) (global.get $outlen))) (then unreachable))
              (global.set $seen (i32.const 1)))
            (else
              (global.set $msg (i32.const 3000))
              (if (i32.or (i32.ne (global.get $seen) (i32.const 1)) (i32.or (i32.ne (local.get 0) (global.get $in)) (i32.ne (local.get 1) (global.get $inlen)))) (then unreachable))
              (global.set $msg (i32.const 3100))
              (global.set $seen (i32.const 2))
              ${trapAtSecond ? 'unreachable' : ''}))`,
      })}
  (global $seen (mut i32) (i32.const 0)) (global $msg (mut i32) (i32.const 3000))
  (global $in (mut i32) (i32.const 0)) (global $inlen (mut i32) (i32.const 0)) (global $out (mut i32) (i32.const 0)) (global $outlen (mut i32) (i32.const 0))
  (data (i32.const 16) "{\\"status\\":\\"ok\\",\\"output\\":{}}")
  (data (i32.const 3000) "dealloc out of order")
  (data (i32.const 3100) "input freed second")
  (func (export "helix_panic") (result i64) (i64.or (i64.shl (i64.extend_i32_u (global.get $msg)) (i64.const 32)) (i64.const ${'dealloc out of order'.length})))
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (global.set $in (local.get $ptr)) (global.set $inlen (local.get $len))
    (global.set $out (call $alloc (i32.const 27)))
    (global.set $outlen (i32.const 27))
    (memory.copy (global.get $out) (i32.const 16) (i32.const 27))
    (i64.or (i64.shl (i64.extend_i32_u (global.get $out)) (i64.const 32)) (i64.const 27))))`;
      return [
        { id: 'io.dealloc_ordered', module: module(false) },
        { id: 'io.dealloc_second_traps', module: module(true) },
      ];
    },
    async run(ctx) {
      expectSuccess(await ctx.call('io.dealloc_ordered', { a: 1 }));
      const r = await ctx.call('io.dealloc_second_traps', { a: 1 });
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase: 'dealloc' });
      const panic = String(r.error?.details.panic ?? r.error?.message);
      expect(panic.includes('input freed second'), `the trap in dealloc was not at the input's dealloc after the output's: ${panic}`);
      ctx.observe('error', r.error);
    },
  },
  {
    id: 'io.no-state-survives',
    title: 'A guest counting its calls in a global, in memory and in grown memory sees 1 every call',
    category: 'io',
    abi: ['ABI-CALL-001', 'ABI-EXTISM-006'],
    engines: BOTH,
    expected:
      'success three times with the same counts (global 1, memory byte 1, memory size 1 page before growing; for extism/v1 also an Extism var 1), each call a new run',
    packs: (engine) => {
      if (engine.name === 'extism') {
        return [ioPack(engine, 'io.counter', EXTISM_COUNTER)];
      }
      // value = global*10000 + memory byte*100 + pages before growing
      return [
        {
          id: 'io.counter',
          module: numberModule(
            `(global.set $g (i32.add (global.get $g) (i32.const 1)))
    (i32.store8 (i32.const 8000) (i32.add (i32.load8_u (i32.const 8000)) (i32.const 1)))
    (local.set $pages (memory.size))
    (drop (memory.grow (i32.const 1)))
    (i32.store8 (i32.const 70000) (i32.add (i32.load8_u (i32.const 70000)) (i32.const 1)))
    (i64.extend_i32_u (i32.add (i32.add (i32.mul (global.get $g) (i32.const 10000)) (i32.mul (i32.load8_u (i32.const 8000)) (i32.const 100))) (local.get $pages)))`,
            '(global $g (mut i32) (i32.const 0))',
            '(local $pages i32)',
          ),
        },
      ];
    },
    async run(ctx) {
      const outs: unknown[] = [];
      const runs = new Set<string | null>();
      for (let i = 0; i < 3; i++) {
        const r = await ctx.call('io.counter', { i });
        outs.push(expectSuccess(r));
        runs.add(r.run_id);
      }
      const want = ctx.engine.name === 'extism' ? { g: 1, m: 1, v: 1 } : { value: 10101 };
      for (const o of outs)
        expect(JSON.stringify(o) === JSON.stringify(want), `a call saw state of an earlier one: ${JSON.stringify(outs)}`);
      expect(runs.size === 3, 'the three calls were not three runs');
      ctx.observe('outputs', outs);
    },
  },
  {
    id: 'io.trap-in-every-phase',
    title:
      'A trap in start, alloc, execute or dealloc, a stack overflow and fuel running out in alloc each end the call with a precise fault naming the phase',
    category: 'io',
    abi: ['ABI-TRAP-001', 'ABI-CALL-002'],
    engines: ['helix'],
    expected:
      'terminal_error S-TOOL-TRAP with details.phase start / alloc / execute / dealloc; S-TOOL-STACK-OVERFLOW for unbounded recursion; S-TOOL-FUEL-EXHAUSTED for a loop in alloc; a start function that spins 200k iterations is metered: its fuel counts in the call',
    packs: () => {
      const limits = { ...IO_LIMITS, fuel: 20_000_000 };
      return [
        { id: 'io.trap_start', module: numberModule('(i64.const 1)', '(func $s unreachable) (start $s)') },
        { id: 'io.trap_alloc', module: numberResultModule('(i64.const 1)', { allocHook: 'unreachable' }) },
        { id: 'io.trap_execute', module: numberModule('unreachable') },
        { id: 'io.trap_dealloc', module: numberResultModule('(i64.const 1)', { deallocHook: 'unreachable' }) },
        {
          id: 'io.overflow',
          module: numberModule(
            '(i64.extend_i32_u (call $down (i32.const 0)))',
            '(func $down (param $n i32) (result i32) (i32.add (call $down (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))',
          ),
        },
        { id: 'io.spin_alloc', module: numberResultModule('(i64.const 1)', { allocHook: '(loop $l (br $l))' }), manifest: { limits } },
        {
          id: 'io.start_spins',
          module: numberModule(
            '(i64.const 1)',
            '(global $k (mut i32) (i32.const 0)) (func $s (loop $l (global.set $k (i32.add (global.get $k) (i32.const 1))) (br_if $l (i32.lt_u (global.get $k) (i32.const 200000))))) (start $s)',
          ),
          manifest: { limits },
        },
        { id: 'io.no_start', module: numberModule('(i64.const 1)', '(global $k (mut i32) (i32.const 0))'), manifest: { limits } },
      ];
    },
    async run(ctx) {
      for (const phase of ['start', 'alloc', 'execute', 'dealloc']) {
        const r = await ctx.call(`io.trap_${phase}`, { phase });
        await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { phase });
        expect(
          /unreachable/.test(r.error!.message + JSON.stringify(r.error!.details)),
          `the trap message is not given: ${r.error!.message}`,
        );
        ctx.observe(`trap_${phase}`, r.error);
      }
      const overflow = await ctx.call('io.overflow', {});
      await expectGuestFault(ctx, overflow, 'S-TOOL-STACK-OVERFLOW');
      const spin = await ctx.call('io.spin_alloc', {});
      await expectGuestFault(ctx, spin, 'S-TOOL-FUEL-EXHAUSTED');
      expect(spin.metrics.fuel_used >= 20_000_000, `fuel_used ${spin.metrics.fuel_used} is below the budget`);
      const withStart = await ctx.call('io.start_spins', { again: 1 });
      const without = await ctx.call('io.no_start', {});
      expectSuccess(withStart);
      expectSuccess(without);
      expect(
        withStart.metrics.fuel_used > without.metrics.fuel_used + 200_000,
        `the start function's 200k iterations are not in fuel_used (${withStart.metrics.fuel_used} vs ${without.metrics.fuel_used})`,
      );
      ctx.observe('fuel_with_start', withStart.metrics.fuel_used);
      ctx.observe('fuel_without_start', without.metrics.fuel_used);
    },
  },
  {
    id: 'io.trap-says-where',
    title: 'A trap deep in the guest names the export, the function at the top of its stack, its index and frames',
    category: 'io',
    abi: ['ABI-TRAP-002'],
    engines: BOTH,
    expected:
      'S-TOOL-TRAP, message "The tool trapped in <export>: unreachable, at deep (wasm-function[N])." with details.export the entrypoint, details.function "deep", details.wasm_function N and details.frames innermost first',
    async packs(engine) {
      const wat =
        engine.name === 'extism'
          ? extismWat('(call $mid) (i32.const 0)', { extra: '(func $mid (call $deep)) (func $deep unreachable)' })
          : numberModule('(call $mid) (i64.const 1)', '(func $mid (call $deep)) (func $deep unreachable)');
      return [
        ioPack(
          engine,
          'io.deep_trap',
          await wat2wasm(wat, 'deep.wat', { names: true }),
          engine.name === 'extism' ? {} : { entrypoint: 'execute' },
        ),
      ];
    },
    async run(ctx) {
      const r = await ctx.call('io.deep_trap', {});
      const entry = ctx.engine.name === 'extism' ? 'run' : 'execute';
      await expectGuestFault(ctx, r, 'S-TOOL-TRAP', { export: entry, function: 'deep' });
      const d = r.error!.details as { wasm_function?: unknown; frames?: unknown };
      expect(typeof d.wasm_function === 'number', `details.wasm_function is ${JSON.stringify(d.wasm_function)}`);
      expect(
        r.error!.message === `The tool trapped in ${entry}: unreachable, at deep (wasm-function[${String(d.wasm_function)}]).`,
        `the message is ${JSON.stringify(r.error!.message)}`,
      );
      const frames = d.frames as string[];
      expect(Array.isArray(frames) && frames.length >= 3 && frames.length <= 8, `details.frames is ${JSON.stringify(frames)}`);
      expect(
        frames[0]!.startsWith('deep ') && frames[1]!.startsWith('mid ') && frames.some((f) => f.startsWith(`${entry} `)),
        `frames are not innermost first: ${JSON.stringify(frames)}`,
      );
      ctx.observe('error', r.error);
    },
  },
  {
    id: 'io.output-not-utf8-or-json',
    title:
      'Output that is not UTF-8 (bad bytes, overlong forms, encoded surrogates) or not JSON (text, empty, trailing bytes) is a tool fault',
    category: 'io',
    abi: ['ABI-OUTPUT-001', 'ABI-EXTISM-007'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-OUTPUT-ENCODING for FF FE, C0 AF and ED A0 80 inside a string; S-TOOL-OUTPUT-JSON for "hello", no output at all, and an envelope followed by a second value; each run recorded failed',
    packs: (engine) => [ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN })],
    async run(ctx) {
      const wrap = (inner: Uint8Array): Uint8Array => {
        const head = new TextEncoder().encode(ctx.engine.name === 'extism' ? '{"s":"' : '{"status":"ok","output":{"s":"');
        const tail = new TextEncoder().encode(ctx.engine.name === 'extism' ? '"}' : '"}}');
        return new Uint8Array([...head, ...inner, ...tail]);
      };
      for (const [label, bytes] of [
        ['ff fe', new Uint8Array([0xff, 0xfe])],
        ['overlong /', new Uint8Array([0xc0, 0xaf])],
        ['encoded surrogate', new Uint8Array([0xed, 0xa0, 0x80])],
        ['truncated sequence', new Uint8Array([0xe2, 0x82])],
      ] as const) {
        const r = await ctx.call('io.bytes', bytesInput(wrap(bytes)));
        await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-ENCODING');
        ctx.observe(`encoding ${label}`, r.error?.message);
      }
      const valid = ctx.engine.name === 'extism' ? '{"a":1}' : okEnvelope('{"a":1}');
      for (const [label, text] of [
        ['text', 'hello'],
        ['empty', ''],
        ['two values', `${valid} ${valid}`],
        ['truncated', valid.slice(0, -1)],
      ] as const) {
        const r = await ctx.call('io.bytes', bytesInput(text));
        await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-JSON');
        ctx.observe(`json ${label}`, r.error?.message);
      }
      // Not JSON, with an emoji straddling the host's preview cut: the fault report must stay Unicode text (ABI-JSON-004).
      const astral = await ctx.call('io.bytes', bytesInput(`${'z'.repeat(199)}${'😀'.repeat(300)}`));
      await expectGuestFault(ctx, astral, 'S-TOOL-OUTPUT-JSON');
      expect(
        !hasLoneSurrogate(astral.error),
        `the fault report holds a lone surrogate (an emoji cut in half): ${JSON.stringify(astral.error).slice(0, 300)}`,
      );
    },
  },
  {
    id: 'io.output-not-an-envelope',
    title:
      'A helix/v1 output that is JSON but not exactly one envelope is S-TOOL-OUTPUT-ENVELOPE; a valid error envelope decides the status by its class',
    category: 'io',
    abi: ['ABI-OUTPUT-002'],
    engines: ['helix'],
    expected:
      'S-TOOL-OUTPUT-ENVELOPE for an extra key, an unknown status, a missing output, an array, a bare value, an error code outside the taxonomy, an error with extra keys, and a capability_call without abi_version; an error envelope with R-UPSTREAM-X is retryable_error and with D-DATA-X terminal_error, carrying its code, message and details; a terminal capability_call of clock.now_unix is A-AUTH-FORBIDDEN without the grant and its result is the output with it',
    packs: () => [
      { id: 'io.bytes', module: bytesPackModule('helix', 'output'), outputSchema: OPEN },
      {
        id: 'io.bytes_clock',
        module: bytesPackModule('helix', 'output'),
        outputSchema: OPEN,
        manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix'] } },
      },
    ],
    async run(ctx) {
      const bad: Array<[string, string]> = [
        ['extra key', '{"status":"ok","output":{},"extra":1}'],
        ['unknown status', '{"status":"done","output":{}}'],
        ['missing output', '{"status":"ok"}'],
        ['array', '[{"status":"ok","output":{}}]'],
        ['bare value', '42'],
        ['code outside the taxonomy', '{"status":"error","error":{"code":"NOPE","message":"m"}}'],
        ['error with extra key', '{"status":"error","error":{"code":"D-DATA-X","message":"m","stack":"x"}}'],
        ['capability_call without abi_version', '{"status":"capability_call","capability_call":{"name":"clock.now_unix","args":{}}}'],
      ];
      for (const [label, text] of bad) {
        const r = await ctx.call('io.bytes', bytesInput(text));
        try {
          await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-ENVELOPE');
        } catch (e) {
          throw new CheckFailure(`${label}: ${(e as Error).message}`);
        }
        ctx.observe(label, r.error?.message);
      }
      const astral = await ctx.call('io.bytes', bytesInput(`{"status":"nope","x":"${'z'.repeat(175)}${'😀'.repeat(300)}"}`));
      await expectGuestFault(ctx, astral, 'S-TOOL-OUTPUT-ENVELOPE');
      expect(
        !hasLoneSurrogate(astral.error),
        `the fault report holds a lone surrogate (an emoji cut in half): ${JSON.stringify(astral.error).slice(0, 300)}`,
      );
      const retry = await ctx.call(
        'io.bytes',
        bytesInput('{"status":"error","error":{"code":"R-UPSTREAM-FLAKY","message":"upstream said no","details":{"n":1},"hint":"later"}}'),
      );
      expectOutcome(retry, 'retryable_error', 'R-UPSTREAM-FLAKY');
      expect(
        retry.error!.message === 'upstream said no' && JSON.stringify(retry.error!.details) === '{"n":1}',
        `the tool's error is not carried: ${JSON.stringify(retry.error)}`,
      );
      const data = await ctx.call(
        'io.bytes',
        bytesInput('{"status":"error","error":{"code":"D-DATA-FORMAT","message":"bad line","details":{"line":3}}}'),
      );
      expectOutcome(data, 'terminal_error', 'D-DATA-FORMAT');
      expectDetails(data, { line: 3 });
      // A terminal capability call is served under the allowlist: refused when not allowed, its result the output when allowed.
      const terminal = '{"status":"capability_call","abi_version":1,"capability_call":{"name":"clock.now_unix","args":{}}}';
      const forbidden = await ctx.call('io.bytes', bytesInput(terminal));
      expect(
        forbidden.status !== 'success' && forbidden.error?.code === 'A-AUTH-FORBIDDEN',
        `a terminal call of a capability the tool may not use answered ${forbidden.status} ${forbidden.error?.code}`,
      );
      const served = expectSuccess(await ctx.call('io.bytes_clock', bytesInput(terminal)));
      expect(
        typeof (served as { unix_ms?: unknown }).unix_ms === 'number',
        `the terminal call's result is not the output: ${JSON.stringify(served)}`,
      );
      ctx.observe('terminal_forbidden', forbidden.error);
    },
  },
  {
    id: 'io.output-schema',
    title: "An ok output that breaks the tool's outputSchema is C-CONTRACT-OUTPUT-SCHEMA listing every violation",
    category: 'io',
    abi: ['ABI-OUTPUT-003', 'ABI-EXTISM-007'],
    engines: BOTH,
    expected:
      'terminal_error C-CONTRACT-OUTPUT-SCHEMA whose details list all three violations (count not an integer, name missing, an extra member); a conforming output succeeds',
    packs: (engine) => [
      ioPack(
        engine,
        'io.bytes',
        engine.guests.bytes('output'),
        {},
        {
          outputSchema: {
            type: 'object',
            required: ['count', 'name'],
            additionalProperties: false,
            properties: { count: { type: 'integer' }, name: { type: 'string' } },
          },
        },
      ),
    ],
    async run(ctx) {
      const wrap = (v: string): string => (ctx.engine.name === 'extism' ? v : okEnvelope(v));
      const r = await ctx.call('io.bytes', bytesInput(wrap('{"count":"many","sneaky":true}')));
      expectOutcome(r, 'terminal_error', 'C-CONTRACT-OUTPUT-SCHEMA');
      const details = JSON.stringify(r.error!.details);
      for (const word of ['count', 'name', 'sneaky']) expect(details.includes(word), `the violations do not name ${word}: ${details}`);
      ctx.observe('details', r.error!.details);
      const ok = await ctx.call('io.bytes', bytesInput(wrap('{"count":3,"name":"x"}')));
      expect(JSON.stringify(expectSuccess(ok)) === '{"count":3,"name":"x"}', 'the conforming output did not come back');
    },
  },
  {
    id: 'io.extism-output-is-the-value',
    title: 'An extism/v1 output that looks like an error envelope is the output itself, never read as an envelope',
    category: 'io',
    abi: ['ABI-EXTISM-007'],
    engines: ['extism'],
    expected:
      'success whose output is {"status":"error","error":{"code":"A-AUTH-FORBIDDEN",…}} byte for byte; a capability_call-shaped output is also just output',
    packs: (engine) => [ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN })],
    async run(ctx) {
      for (const text of [
        '{"status":"error","error":{"code":"A-AUTH-FORBIDDEN","message":"forbidden"}}',
        '{"status":"capability_call","abi_version":1,"capability_call":{"name":"kv.put","args":{}}}',
      ]) {
        const out = expectSuccess(await ctx.call('io.bytes', bytesInput(text)));
        expect(JSON.stringify(out) === text, `the output was read as something else: ${JSON.stringify(out)}`);
      }
    },
  },
  {
    id: 'io.extism-errors',
    title: 'An extism/v1 plugin: its JSON error is its error, other error text, a non-zero return and a trap are tool faults',
    category: 'io',
    abi: ['ABI-EXTISM-008'],
    engines: ['extism'],
    expected:
      'D-DATA-FORMAT terminal_error for a JSON taxonomy error; R-UPSTREAM-X retryable_error; S-TOOL-EXTISM-ERROR with the first 1024 bytes in details.plugin_error for 3000 bytes of text; S-TOOL-EXTISM-ERROR with details.return_code 7; S-TOOL-TRAP with memory_pages for unreachable',
    packs: (engine) => [
      ioPack(engine, 'io.err', engine.guests.bytes('error'), {}, { outputSchema: OPEN }),
      ioPack(engine, 'io.ret7', extismWat('(i32.const 7)')),
      ioPack(engine, 'io.trap', extismWat('unreachable')),
    ],
    async run(ctx) {
      const data = await ctx.call(
        'io.err',
        bytesInput('{"code":"D-DATA-FORMAT","message":"bad line","details":{"line":1},"hint":"fix it"}'),
      );
      expectOutcome(data, 'terminal_error', 'D-DATA-FORMAT');
      expectDetails(data, { line: 1 });
      const retry = await ctx.call('io.err', bytesInput('{"code":"R-UPSTREAM-FLAKY","message":"later"}'));
      expectOutcome(retry, 'retryable_error', 'R-UPSTREAM-FLAKY');
      const text = `${'é'.repeat(700)}${'z'.repeat(1600)}`;
      const plain = await ctx.call('io.err', bytesInput(text));
      await expectGuestFault(ctx, plain, 'S-TOOL-EXTISM-ERROR');
      const got = String(plain.error!.details.plugin_error);
      expect(
        Buffer.byteLength(got) <= 1024 && Buffer.byteLength(got) >= 1021 && text.startsWith(got),
        `plugin_error is not the first 1024 bytes of the text: ${Buffer.byteLength(got)} bytes`,
      );
      ctx.observe('plugin_error_bytes', Buffer.byteLength(got));
      // An emoji straddling every cut (the message's and details'): the report must stay Unicode text (ABI-JSON-004).
      const astral = await ctx.call('io.err', bytesInput(`${'z'.repeat(199)}${'😀'.repeat(600)}`));
      await expectGuestFault(ctx, astral, 'S-TOOL-EXTISM-ERROR');
      expect(
        !hasLoneSurrogate(astral.error),
        `the fault report holds a lone surrogate (an emoji cut in half): ${JSON.stringify(astral.error).slice(0, 300)}`,
      );
      expect(Buffer.byteLength(String(astral.error!.details.plugin_error)) <= 1024, 'plugin_error of emoji is over 1024 bytes');
      const notCode = await ctx.call('io.err', bytesInput('{"code":"NOPE","message":"m"}'));
      await expectGuestFault(ctx, notCode, 'S-TOOL-EXTISM-ERROR');
      const seven = await ctx.call('io.ret7', {});
      await expectGuestFault(ctx, seven, 'S-TOOL-EXTISM-ERROR', { return_code: 7 });
      const trap = await ctx.call('io.trap', {});
      await expectGuestFault(ctx, trap, 'S-TOOL-TRAP');
      expect(
        typeof trap.error!.details.memory_pages === 'number' && typeof trap.error!.details.max_memory_pages === 'number',
        `the trap has no memory_pages: ${JSON.stringify(trap.error!.details)}`,
      );
    },
  },
  {
    id: 'io.json-depth',
    title: 'Input, output and capability args nested 1,600 and 100,000 levels deep are refused at the first breach; 64 levels pass',
    category: 'io',
    abi: ['ABI-JSON-001', 'ABI-JSON-002', 'ABI-JSON-006', 'ABI-JSON-007', 'ABI-RESP-003'],
    engines: BOTH,
    expected:
      'I-REQ-JSON-DEPTH (pointer /input/a…/a of 64 segments, max_depth 64, no run) for deep input; S-TOOL-OUTPUT-DEPTH for deep output and S-TOOL-CAPABILITY-DEPTH (journal: one abort with args null; audit: aborted) for deep args to a forbidden capability; 64 levels of input and output succeed',
    packs: (engine) => [
      ioPack(
        engine,
        'io.bytes',
        engine.guests.bytes('output'),
        { limits: { ...IO_LIMITS, maxInputBytes: 2_000_000, maxOutputBytes: 1_000_000, maxMemoryPages: 128 } },
        { outputSchema: OPEN },
      ),
      ioPack(
        engine,
        'io.req',
        engine.guests.bytes('request'),
        { limits: { ...IO_LIMITS, maxInputBytes: 2_000_000, maxMemoryPages: 128 } },
        { outputSchema: OPEN },
      ),
      ioPack(engine, 'io.echo', engine.name === 'extism' ? EXTISM_ECHO : echoModule()),
    ],
    async run(ctx) {
      const deepInput = await ctx.call('io.echo', JSON.parse(nestedObjects(1600)));
      expectRefused(deepInput, 'I-REQ-JSON-DEPTH', { pointer: aPointer('/input', 64), max_depth: 64 });
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 100_000; i++) deep = { a: deep };
      expectRefused(await ctx.call('io.echo', deep), 'I-REQ-JSON-DEPTH', { pointer: aPointer('/input', 64) });
      const at64 = JSON.parse(nestedObjects(64));
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.echo', at64))) === JSON.stringify(at64),
        'an input of 64 levels did not come back',
      );

      const base = ctx.engine.name === 'extism' ? '' : '/output';
      const wrap = (v: string): string => (ctx.engine.name === 'extism' ? v : okEnvelope(v));
      const out = await ctx.call('io.bytes', bytesInput(wrap(nestedObjects(1600))));
      await expectGuestFault(ctx, out, 'S-TOOL-OUTPUT-DEPTH', { pointer: aPointer(base, 64) });
      const arrays = await ctx.call('io.bytes', bytesInput(wrap(`{"v":${nestedArrays(100_000)}}`)));
      await expectGuestFault(ctx, arrays, 'S-TOOL-OUTPUT-DEPTH', { pointer: `${base}/v${'/0'.repeat(63)}` });
      const ok64 = await ctx.call('io.bytes', bytesInput(wrap(nestedObjects(64))));
      expect(JSON.stringify(expectSuccess(ok64)) === nestedObjects(64), 'an output of 64 levels did not come back');

      const req = await ctx.call('io.req', bytesInput(`{"abi_version":1,"name":"kv.put","args":${nestedObjects(1600)}}`));
      await expectGuestFault(ctx, req, 'S-TOOL-CAPABILITY-DEPTH', { pointer: aPointer('/args', 64) });
      const journal = await journalOf(ctx, req);
      expect(
        journal.length === 1 && journal[0]!.outcome === 'abort' && journal[0]!.args === null,
        `the journal is ${JSON.stringify(journal).slice(0, 400)}`,
      );
      const audit = await capabilityAuditOf(ctx, req);
      expect(audit.length === 1 && audit[0]!.decision === 'aborted', `the audit is ${JSON.stringify(audit).slice(0, 400)}`);
      ctx.observe('capability_depth', req.error);
    },
  },
  {
    id: 'io.json-numbers',
    title: 'Numbers a double cannot carry exactly (1e400, NaN, 2^53, a u64) are refused in input, output and capability args',
    category: 'io',
    abi: ['ABI-JSON-003', 'ABI-JSON-002', 'ABI-JSON-006', 'ABI-JSON-007'],
    engines: BOTH,
    expected:
      'I-REQ-JSON-NUMBER at /input/x/1 for 1e400, at /input/y for NaN, for 9007199254740993 and 9007199254740992; S-TOOL-OUTPUT-NUMBER quoting 18446744073709551615 for a u64 output; I-REQ-CAPABILITY-ARGS (the guest goes on) for 1e400 in kv.put args; 9007199254740991 passes; 0.1 and 0.10 are the same run',
    packs: (engine) => [
      ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN }),
      ioPack(
        engine,
        'io.kv',
        engine.guests.bytes('request'),
        { capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.get'] } },
        { outputSchema: OPEN },
      ),
      ioPack(engine, 'io.echo', engine.name === 'extism' ? EXTISM_ECHO : echoModule()),
    ],
    async run(ctx) {
      const inf = await ctx.call('io.echo', JSON.parse('{"x":[1,1e400]}'));
      expectRefused(inf, 'I-REQ-JSON-NUMBER', { pointer: '/input/x/1' });
      expect(
        inf.error!.message.includes('/input/x/1') && inf.error!.message.includes('Infinity'),
        `the message does not say where and what: ${inf.error!.message}`,
      );
      expectRefused(await ctx.call('io.echo', { y: Number.NaN }), 'I-REQ-JSON-NUMBER', { pointer: '/input/y' });
      for (const n of ['9007199254740993', '9007199254740992', '-9007199254740992', '1e20']) {
        const r = await ctx.call('io.echo', JSON.parse(`{"n":${n}}`));
        expectRefused(r, 'I-REQ-JSON-NUMBER', { pointer: '/input/n' });
      }
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.echo', { n: 9007199254740991 }))) === '{"n":9007199254740991}',
        'the largest safe integer did not pass',
      );
      const a = await ctx.call('io.echo', JSON.parse('{"f":0.1}'));
      const b = await ctx.call('io.echo', JSON.parse('{"f":0.10}'));
      expect(a.run_id === b.run_id && b.replayed === true, `0.1 and 0.10 are different runs (${a.run_id}, ${b.run_id})`);

      const wrap = (v: string): string => (ctx.engine.name === 'extism' ? v : okEnvelope(v));
      const base = ctx.engine.name === 'extism' ? '' : '/output';
      const u64 = await ctx.call('io.bytes', bytesInput(wrap('{"id":18446744073709551615}')));
      await expectGuestFault(ctx, u64, 'S-TOOL-OUTPUT-NUMBER', { pointer: `${base}/id` });
      expect(
        u64.error!.message.includes('18446744073709551615'),
        `the message does not quote the number as written: ${u64.error!.message}`,
      );
      const big = await ctx.call('io.bytes', bytesInput(wrap('{"x":1e400}')));
      await expectGuestFault(ctx, big, 'S-TOOL-OUTPUT-NUMBER', { pointer: `${base}/x` });

      const args = await ctx.call('io.kv', bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":{"v":1e400}}}'));
      const answer = JSON.stringify(expectSuccess(args));
      expect(
        answer.includes('I-REQ-CAPABILITY-ARGS') && answer.includes('/args/value/v'),
        `the guest did not get I-REQ-CAPABILITY-ARGS at /args/value/v: ${answer.slice(0, 400)}`,
      );
      const journal = await journalOf(ctx, args);
      expect(
        journal[0]?.outcome === 'error' && journal[0]?.args === null,
        `the journal keeps the args: ${JSON.stringify(journal).slice(0, 300)}`,
      );
      ctx.observe('u64_output', u64.error);
    },
  },
  {
    id: 'io.json-strings-and-keys',
    title: 'Lone surrogates and __proto__ members are refused everywhere; duplicate keys keep the last; constructor is plain data',
    category: 'io',
    abi: ['ABI-JSON-004', 'ABI-JSON-002', 'ABI-JSON-006', 'ABI-JSON-007'],
    engines: BOTH,
    expected:
      'I-REQ-JSON-VALUE (pointer /input/s/1, problem string; /input/__proto__) for input; S-TOOL-OUTPUT-VALUE (pointer …/s, …/__proto__) for output; I-REQ-CAPABILITY-ARGS for a lone surrogate in args; {"a":1,"a":2} outputs {"a":2}; members named constructor and prototype pass through unchanged',
    packs: (engine) => [
      ioPack(engine, 'io.bytes', engine.guests.bytes('output'), {}, { outputSchema: OPEN }),
      ioPack(
        engine,
        'io.kv',
        engine.guests.bytes('request'),
        { capabilities: { abiVersion: 1, allow: ['kv.put', 'kv.get'] } },
        { outputSchema: OPEN },
      ),
      ioPack(engine, 'io.echo', engine.name === 'extism' ? EXTISM_ECHO : echoModule()),
    ],
    async run(ctx) {
      const lone = await ctx.call('io.echo', { s: ['fine', 'bad \ud800'] });
      expectRefused(lone, 'I-REQ-JSON-VALUE', { pointer: '/input/s/1', problem: 'string' });
      expectRefused(await ctx.call('io.echo', JSON.parse('{"ok":1,"__proto__":{"x":1}}')), 'I-REQ-JSON-VALUE', {
        pointer: '/input/__proto__',
      });
      expectRefused(await ctx.call('io.echo', JSON.parse('{"deep":{"__proto__":{"polluted":true}}}')), 'I-REQ-JSON-VALUE', {
        pointer: '/input/deep/__proto__',
      });
      expect(({} as Record<string, unknown>).polluted === undefined, 'Object.prototype was polluted');
      const plain = JSON.parse('{"constructor":{"prototype":{"x":1}},"toString":"s","a":1,"a":2}');
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.echo', plain))) === '{"constructor":{"prototype":{"x":1}},"toString":"s","a":2}',
        'constructor/prototype members did not come back as plain data',
      );

      const wrap = (v: string): string => (ctx.engine.name === 'extism' ? v : okEnvelope(v));
      const base = ctx.engine.name === 'extism' ? '' : '/output';
      const surrogate = await ctx.call('io.bytes', bytesInput(wrap('{"s":"\\udc00"}')));
      await expectGuestFault(ctx, surrogate, 'S-TOOL-OUTPUT-VALUE', { pointer: `${base}/s` });
      const keySurrogate = await ctx.call('io.bytes', bytesInput(wrap('{"k\\ud800":1}')));
      await expectGuestFault(ctx, keySurrogate, 'S-TOOL-OUTPUT-VALUE');
      const proto = await ctx.call('io.bytes', bytesInput(wrap('{"__proto__":{"isAdmin":true}}')));
      await expectGuestFault(ctx, proto, 'S-TOOL-OUTPUT-VALUE', { pointer: `${base}/__proto__` });
      if (ctx.engine.name === 'helix') {
        // An envelope that says error and then ok is ok: the last value of a member given twice.
        const twice = await ctx.call('io.bytes', bytesInput('{"status":"error","status":"ok","output":{"last":true}}'));
        expect(JSON.stringify(expectSuccess(twice)) === '{"last":true}', `a status given twice did not keep the last: ${twice.status}`);
      }
      const dup = await ctx.call('io.bytes', bytesInput(wrap('{"a":1,"a":2,"constructor":{"name":"x"}}')));
      expect(
        JSON.stringify(expectSuccess(dup)) === '{"a":2,"constructor":{"name":"x"}}',
        `duplicate keys did not keep the last: ${JSON.stringify(dup.output)}`,
      );

      const args = await ctx.call('io.kv', bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":{"v":"\\ud800"}}}'));
      const answer = JSON.stringify(expectSuccess(args));
      expect(answer.includes('I-REQ-CAPABILITY-ARGS'), `a lone surrogate in args was not refused: ${answer.slice(0, 300)}`);
      const protoArgs = await ctx.call(
        'io.kv',
        bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","value":{"__proto__":{"x":1}}}}'),
      );
      const protoAnswer = JSON.stringify(expectSuccess(protoArgs));
      expect(protoAnswer.includes('I-REQ-CAPABILITY-ARGS'), `a __proto__ member in args was not refused: ${protoAnswer.slice(0, 300)}`);
      const dupArgs = await ctx.call(
        'io.kv',
        bytesInput('{"abi_version":1,"name":"kv.put","args":{"key":"k","key":"k2","value":{"constructor":1}}}'),
      );
      expect(
        JSON.stringify(expectSuccess(dupArgs)).includes('"status":"ok"'),
        'kv.put with a duplicate key and a constructor member was not served',
      );
      const got = await ctx.call('io.kv', bytesInput('{"abi_version":1,"name":"kv.get","args":{"key":"k2"}}'));
      expect(
        JSON.stringify(expectSuccess(got)).includes('"constructor":1'),
        `the duplicate key did not keep its last value: ${JSON.stringify(got.output).slice(0, 300)}`,
      );
    },
  },
  {
    id: 'io.cli-json-bounds',
    title:
      'helix call refuses deep, inexact and non-UTF-8 input as one envelope, with pointers and quotes cut to 512 characters and kept Unicode text',
    category: 'io',
    abi: ['ABI-JSON-001', 'ABI-JSON-003', 'ABI-JSON-007'],
    engines: ['helix'],
    expected:
      'exit 2 and exactly one envelope line each: I-REQ-JSON-DEPTH at /input/a…/a (64) for 1,600 levels given as --input text; I-REQ-JSON-NUMBER quoting 9007199254740993 as written, and a 701-digit literal cut with …; I-REQ-JSON for an --input-file that is not UTF-8; for a member name of 600 characters ending in a lone surrogate, a pointer of at most 512 characters ending in "…" and holding no lone surrogate; no stack trace on stderr',
    packs: () => [{ id: 'io.echo', module: echoModule() }],
    async run(ctx) {
      const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
      const plugins = await ctx.pluginsDir();
      const exec = promisify(execFile);
      let homes = 0;
      const helixCall = async (source: string[]): Promise<{ code: number; envelope: ResponseEnvelope }> => {
        // A home of its own per process, so the processes can run side by side.
        const home = path.join(ctx.env.dir, `cli-home-${(homes += 1)}`);
        const r = await exec(process.execPath, [cli, 'call', 'io.echo', '--plugins', plugins, '--home', home, '--compact', ...source], {
          maxBuffer: 64 << 20,
          timeout: 30_000,
        }).then(
          (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => e,
        );
        const lines = r.stdout.trim().split('\n');
        expect(lines.length === 1, `helix call printed ${lines.length} lines: ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`);
        expect(!/\n\s+at /.test(r.stderr), `a stack trace on stderr: ${r.stderr.slice(0, 400)}`);
        return { code: r.code, envelope: JSON.parse(lines[0]!) as ResponseEnvelope };
      };
      const latin1 = path.join(ctx.env.dir, 'latin1.json');
      writeFileSync(latin1, Buffer.from([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]));
      const [deep, number, notUtf8, longName, longValue] = await Promise.all([
        helixCall(['--input', nestedObjects(1600)]),
        helixCall(['--input', '{"n":9007199254740993}']),
        helixCall(['--input-file', latin1]),
        helixCall(['--input', `{"${'k'.repeat(600)}\\ud800":1}`]),
        helixCall(['--input', `{"k":[${'1,'.repeat(10)}1${'0'.repeat(700)}]}`]),
      ]);
      for (const r of [deep, number, notUtf8, longName, longValue]) expect(r.code === 2, `exit ${r.code} for ${r.envelope.error?.code}`);
      expectRefused(deep.envelope, 'I-REQ-JSON-DEPTH', { pointer: aPointer('/input', 64), max_depth: 64 });
      expectRefused(number.envelope, 'I-REQ-JSON-NUMBER', { pointer: '/input/n' });
      expect(
        number.envelope.error!.message.includes('9007199254740993'),
        `the message does not quote the literal as written: ${number.envelope.error!.message}`,
      );
      expectRefused(notUtf8.envelope, 'I-REQ-JSON');
      expectRefused(longName.envelope, 'I-REQ-JSON-VALUE');
      const pointer = String(longName.envelope.error!.details.pointer);
      expect(
        pointer.length <= 512 && pointer.endsWith('…') && !hasLoneSurrogate(longName.envelope.error),
        `the pointer is ${pointer.length} characters: ${JSON.stringify(pointer.slice(-40))}`,
      );
      expectRefused(longValue.envelope, 'I-REQ-JSON-NUMBER', { pointer: '/input/k/10' });
      expect(
        longValue.envelope.error!.message.length < 1400 && longValue.envelope.error!.message.includes('…'),
        `a 701-digit literal is not cut in the message: ${longValue.envelope.error!.message.length} characters`,
      );
      ctx.observe('long_name_pointer_chars', pointer.length);
      ctx.observe('depth', deep.envelope.error);
    },
  },
  {
    id: 'io.not-json-data',
    title: 'host.call never throws for values that are not JSON data: cycles, shared nodes, BigInt, getters, Proxies, holes',
    category: 'io',
    abi: ['ABI-JSON-005', 'ABI-RESP-001'],
    engines: ['helix'],
    expected:
      'invalid_request I-REQ-JSON-VALUE naming the pointer for each; a request that is a Proxy whose every trap throws is I-REQ-JSON-VALUE at ""; host.call resolves every time',
    packs: () => [{ id: 'io.echo', module: echoModule() }],
    async run(ctx) {
      const host = await ctx.host();
      const cyclic: Record<string, unknown> = { name: 'loop' };
      cyclic.self = cyclic;
      let bomb: unknown = [];
      for (let i = 0; i < 60; i += 1) bomb = [bomb, bomb];
      const revocable = Proxy.revocable({}, {});
      revocable.revoke();
      const cases: Array<[string, unknown, string]> = [
        [
          'getter that throws',
          {
            get boom() {
              throw new Error('no reading me');
            },
          },
          '/input/boom',
        ],
        ['revoked Proxy', revocable.proxy, '/input'],
        ['cycle', cyclic, '/input/self'],
        ['2^60 shared nodes', { bomb }, `/input/bomb${'/0'.repeat(59)}/1`],
        ['BigInt', { big: 10n }, '/input/big'],
        ['undefined', { u: undefined }, '/input/u'],
        ['function', { f: () => 1 }, '/input/f'],
        ['Date', { when: new Date(0) }, '/input/when'],
        ['Map', { m: new Map([[1, 2]]) }, '/input/m'],
        ['typed array', { t: new Uint8Array(4) }, '/input/t'],
        ['hole', { list: [1, , 3] }, '/input/list/1'],
        ['symbol key', { [Symbol('s')]: 1 }, '/input'],
      ];
      for (const [label, input, pointer] of cases) {
        let r;
        try {
          r = await ctx.call('io.echo', input);
        } catch (e) {
          throw new CheckFailure(`${label}: host.call threw ${(e as Error).message}`);
        }
        try {
          expectRefused(r, 'I-REQ-JSON-VALUE', { pointer });
        } catch (e) {
          throw new CheckFailure(`${label}: ${(e as Error).message}`);
        }
        ctx.observe(label, r.error?.message);
      }
      const hostile = new Proxy(
        {},
        {
          get: () => {
            throw new Error('get');
          },
          getPrototypeOf: () => {
            throw new Error('proto');
          },
          ownKeys: () => {
            throw new Error('keys');
          },
        },
      );
      const whole = await host.call(hostile);
      expectRefused(whole as never, 'I-REQ-JSON-VALUE', { pointer: '' });
    },
  },
  {
    id: 'io.response-envelope',
    title: 'Every outcome, hostile or not, is exactly one response envelope with metrics, provenance and a full error',
    category: 'io',
    abi: ['ABI-RESP-001'],
    engines: BOTH,
    expected:
      'for success, invalid_request, terminal_error and retryable_error: status in the four, metrics (duration_ms, fuel_used, memory_peak_pages), provenance (tool_id, exact tool_version, the module digest sha256 of its bytes) and, when not success, an error with a taxonomy code, message, details and hint',
    packs: (engine) => [
      ioPack(
        engine,
        'io.bytes',
        engine.guests.bytes('output'),
        {},
        { outputSchema: OPEN, inputSchema: { type: 'object', required: ['hex'] } },
      ),
    ],
    async run(ctx) {
      const bytes = await wat2wasm(ctx.engine.guests.bytes('output'), 'bytes.wat');
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      const wrap = (v: string): string => (ctx.engine.name === 'extism' ? v : okEnvelope(v));
      const errorText =
        ctx.engine.name === 'extism'
          ? '{"code":"R-UPSTREAM-X","message":"m"}'
          : '{"status":"error","error":{"code":"R-UPSTREAM-X","message":"m"}}';
      const outcomes = [
        await ctx.call('io.bytes', bytesInput(wrap('{"ok":1}'))),
        await ctx.call('io.bytes', { nothex: 1 }),
        await ctx.call('io.bytes', bytesInput('not json')),
        ctx.engine.name === 'extism' ? undefined : await ctx.call('io.bytes', bytesInput(errorText)),
        await ctx.call('io.unknown.tool', {}),
      ].filter((r) => r !== undefined);
      const statuses = new Set<string>();
      for (const r of outcomes) {
        statuses.add(r.status);
        expect(['success', 'retryable_error', 'terminal_error', 'invalid_request'].includes(r.status), `status ${r.status}`);
        expect(
          typeof r.metrics.duration_ms === 'number' &&
            Number.isInteger(r.metrics.fuel_used) &&
            Number.isInteger(r.metrics.memory_peak_pages),
          `metrics incomplete: ${JSON.stringify(r.metrics)}`,
        );
        expect(
          typeof r.provenance.tool_id === 'string' && typeof r.provenance.tool_version === 'string',
          `provenance incomplete: ${JSON.stringify(r.provenance)}`,
        );
        if (r.status !== 'success') {
          expect(
            r.error !== undefined &&
              /^[A-Z]+-[A-Z]+-/.test(r.error.code) &&
              r.error.message.length > 0 &&
              typeof r.error.details === 'object' &&
              typeof r.error.hint === 'string' &&
              r.error.hint.length > 0,
            `the error is incomplete: ${JSON.stringify(r.error)}`,
          );
        } else expect(r.error === undefined, 'a success carries an error');
      }
      for (const r of outcomes.slice(0, 3)) {
        expect(r.provenance.tool_id === 'io.bytes' && r.provenance.tool_version === '1.0.0', `provenance ${JSON.stringify(r.provenance)}`);
        expect(
          r.provenance.digest === digest && typeof digest === 'string' && digest.startsWith('sha256:'),
          `provenance digest ${r.provenance.digest} is not the module's ${digest}`,
        );
      }
      const need =
        ctx.engine.name === 'extism'
          ? ['success', 'invalid_request', 'terminal_error']
          : ['success', 'invalid_request', 'terminal_error', 'retryable_error'];
      for (const s of need) expect(statuses.has(s), `no ${s} among the outcomes`);
      ctx.observe('statuses', [...statuses]);
    },
  },
  {
    id: 'io.tool-version',
    title: 'tool_version picks the newest version in range, and a range across majors is refused',
    category: 'io',
    abi: ['ABI-RESP-002'],
    engines: ['helix'],
    expected:
      "'*' and '>=1.0.0' with 1.0.0, 1.2.0 and 2.0.0 loaded: C-CONTRACT-VERSION-AMBIGUOUS; '^1' runs 1.2.0; '1.0.0' runs 1.0.0; '^3' is refused naming no version; a non-semver range is refused; nothing runs on a refusal",
    packs: () => [
      { id: 'io.versioned', dirName: 'v100', module: numberModule('(i64.const 100)'), manifest: { version: '1.0.0' } },
      { id: 'io.versioned', dirName: 'v120', module: numberModule('(i64.const 120)'), manifest: { version: '1.2.0' } },
      { id: 'io.versioned', dirName: 'v200', module: numberModule('(i64.const 200)'), manifest: { version: '2.0.0' } },
    ],
    async run(ctx) {
      const call = (range: string | undefined) =>
        ctx.call('io.versioned', { range: range ?? null }, range === undefined ? {} : { request: { tool_version: range } });
      for (const range of [undefined, '*', '>=1.0.0']) {
        const r = await call(range);
        expectOutcome(r, 'terminal_error', 'C-CONTRACT-VERSION-AMBIGUOUS');
        expect(r.run_id === null, 'an ambiguous call became a run');
      }
      const v1 = await call('^1');
      expect(expectSuccess(v1).value === 120 && v1.provenance.tool_version === '1.2.0', `^1 ran ${v1.provenance.tool_version}`);
      const exact = await call('1.0.0');
      expect(expectSuccess(exact).value === 100 && exact.provenance.tool_version === '1.0.0', `1.0.0 ran ${exact.provenance.tool_version}`);
      const v2 = await call('2');
      expect(expectSuccess(v2).value === 200, `2 ran ${v2.provenance.tool_version}`);
      const none = await call('^3');
      expect(none.status !== 'success' && none.run_id === null, `^3 answered ${none.status}`);
      const junk = await call('not a range ;rm -rf');
      expect(junk.status !== 'success' && junk.run_id === null, `a non-semver range answered ${junk.status}`);
      ctx.observe('no_version', none.error);
      ctx.observe('junk_range', junk.error);
    },
  },
  {
    id: 'io.request-validation',
    title: 'A malformed request envelope or an input against inputSchema lists every violation, and nothing runs',
    category: 'io',
    abi: ['ABI-RESP-003'],
    engines: ['helix'],
    expected:
      'I-REQ-JSON-DEPTH first for a bad envelope whose input is 100 levels deep; I-REQ-ENVELOPE listing the unknown member and the bad tool_id type; I-REQ-INPUT listing all three input violations; an input that is an array is refused; no run is made (the guest would trap if it ran)',
    packs: () => [
      {
        id: 'io.strict',
        module: numberModule('unreachable'),
        inputSchema: {
          type: 'object',
          required: ['n', 'name'],
          additionalProperties: false,
          properties: { n: { type: 'integer', minimum: 0 }, name: { type: 'string' } },
        },
      },
    ],
    async run(ctx) {
      const host = await ctx.host();
      // The whole request is checked as JSON data first: a bad envelope with deep input is I-REQ-JSON-DEPTH.
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 100; i++) deep = { a: deep };
      const first = await host.call({ tool_id: 5, input: deep, sudo: true });
      expectRefused(first as never, 'I-REQ-JSON-DEPTH');
      const env = await host.call({ tool_id: 5, input: {}, sudo: true });
      expectRefused(env as never, 'I-REQ-ENVELOPE');
      const envDetails = JSON.stringify(env.error!.details);
      expect(envDetails.includes('sudo') && envDetails.includes('tool_id'), `not every envelope violation is listed: ${envDetails}`);
      const input = await ctx.call('io.strict', { n: -1, extra: 'x' });
      expectRefused(input, 'I-REQ-INPUT');
      const details = JSON.stringify(input.error!.details);
      for (const word of ['n', 'name', 'extra']) expect(details.includes(`${word}`), `I-REQ-INPUT does not list ${word}: ${details}`);
      const violations = (input.error!.details as { violations?: unknown[] }).violations;
      expect(Array.isArray(violations) && violations.length >= 3, `fewer than three violations listed: ${details}`);
      const arr = await host.call({ tool_id: 'io.strict', input: [1, 2] });
      expect(arr.status === 'invalid_request' && arr.run_id === null, `an array input answered ${arr.status}`);
      ctx.observe('envelope', env.error);
      ctx.observe('input', input.error);
    },
  },
  {
    id: 'io.extism-kernel',
    title: 'The Extism kernel as a hostile plugin uses it: wrong lengths, missing blocks, filling its memory',
    category: 'io',
    abi: ['ABI-EXTISM-011', 'ABI-EXTISM-009'],
    engines: ['extism'],
    expected:
      'output_set with a shorter length outputs the whole block; output_set past the block is S-TOOL-TRAP "length longer than target block"; a load from no block reads 0 as an i32; a kernel error caught by the plugin is not a decision (success); uncaught it is S-TOOL-TRAP with the kernel message in details.trap; filling the kernel memory makes alloc return 0 at the cap, so the plugin goes on and ends without output (S-TOOL-OUTPUT-JSON, never S-TOOL-WORKER-LOST)',
    packs: (engine) => [
      // The block holds {"a":1} (7 bytes); output_set is told 3.
      ioPack(
        engine,
        'io.short_len',
        extismWat('(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 3)) (i32.const 0)', {
          data: watString('{"a":1}'),
        }),
      ),
      ioPack(
        engine,
        'io.long_len',
        extismWat('(call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 4000)) (i32.const 0)', {
          data: watString('{"a":1}'),
        }),
      ),
      ioPack(
        engine,
        'io.load_nothing',
        `(module ${KERNEL}
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\\"v\\":0}")
  ${EMIT}
  (func (export "run") (result i32)
    (i32.store8 (i32.const 5) (i32.add (i32.const 48) (call $load_u8 (i64.const 0x0123000000000000))))
    (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
    (i32.const 0)))`,
      ),
      ioPack(engine, 'io.kernel_caught', KERNEL_ERROR_CAUGHT),
      ioPack(engine, 'io.kernel_uncaught', KERNEL_ERROR_UNCAUGHT),
      ioPack(engine, 'io.fill', FILLING_PLUGIN, { limits: { ...IO_LIMITS, maxMemoryPages: 16 } }),
    ],
    async run(ctx) {
      const short = expectSuccess(await ctx.call('io.short_len', {}));
      expect(JSON.stringify(short) === '{"a":1}', `output_set with a shorter length gave ${JSON.stringify(short)}`);
      const long = await ctx.call('io.long_len', {});
      await expectGuestFault(ctx, long, 'S-TOOL-TRAP', { trap: 'length longer than target block' });
      ctx.observe('long_len', long.error);
      const loaded = expectSuccess(await ctx.call('io.load_nothing', {}));
      expect(JSON.stringify(loaded) === '{"v":0}', `a load from no block read ${JSON.stringify(loaded)}`);
      expect(
        JSON.stringify(expectSuccess(await ctx.call('io.kernel_caught', {}))) === '{}',
        'the caught kernel error did not let the plugin go on',
      );
      const uncaught = await ctx.call('io.kernel_uncaught', {});
      await expectGuestFault(ctx, uncaught, 'S-TOOL-TRAP');
      expect(
        typeof uncaught.error!.details.trap === 'string' && String(uncaught.error!.details.trap).length > 0,
        `no kernel message in details.trap: ${JSON.stringify(uncaught.error!.details)}`,
      );
      ctx.observe('kernel_trap', uncaught.error!.details.trap);
      const fill = await ctx.call('io.fill', {});
      // The plugin leaves its loop only when alloc answers 0, and then returns without an output: no output is not JSON.
      await expectGuestFault(ctx, fill, 'S-TOOL-OUTPUT-JSON');
      ctx.observe('fill', fill.error);
    },
  },
  {
    id: 'io.extism-kernel-as-reference',
    title: 'Plugins misusing the Extism kernel end on Helix as they end on @extism/extism itself',
    category: 'io',
    abi: ['ABI-EXTISM-011', 'ABI-EXTISM-007', 'ABI-EXTISM-008'],
    engines: ['extism'],
    expected: `for each of ${Object.keys(KERNEL_ABUSE).join(', ')}: the reference's output is Helix's success (or S-TOOL-OUTPUT-JSON when it is no JSON), its kernel failure is Helix's S-TOOL-TRAP with the same message in details.trap, its plugin error Helix's S-TOOL-EXTISM-ERROR or the tool's own error`,
    packs: (engine) => Object.entries(KERNEL_ABUSE).map(([name, body]) => ioPack(engine, `io.k_${name}`, kernelAbuse(body))),
    async run(ctx) {
      const seen: Record<string, string> = {};
      for (const [name, body] of Object.entries(KERNEL_ABUSE)) {
        const bytes = await wat2wasm(kernelAbuse(body), `${name}.wat`);
        const ref = await referenceCall(bytes, new TextEncoder().encode('{}'), IO_LIMITS.maxMemoryPages);
        const r = await ctx.call(`io.k_${name}`, {});
        const where = `${name}: the reference gave ${JSON.stringify(ref.kind === 'output' ? { output: ref.bytes === null ? null : new TextDecoder().decode(ref.bytes) } : ref)}, Helix ${r.status} ${r.error?.code ?? JSON.stringify(r.output)}`;
        if (ref.kind === 'failure') {
          expect(r.error?.code === 'S-TOOL-TRAP' && r.error.details.trap === ref.message, where);
        } else if (ref.kind === 'plugin-error') {
          let parsed: unknown;
          try {
            parsed = JSON.parse(ref.text);
          } catch {
            parsed = undefined;
          }
          if (typeof parsed === 'object' && parsed !== null && 'code' in parsed)
            expect(r.error?.code === (parsed as { code: string }).code, where);
          else expect(r.error?.code === 'S-TOOL-EXTISM-ERROR' && r.error.details.plugin_error === ref.text, where);
        } else {
          let json: unknown;
          let isJson = true;
          try {
            json = JSON.parse(new TextDecoder().decode(ref.bytes ?? new Uint8Array(0)));
          } catch {
            isJson = false;
          }
          if (isJson) expect(r.status === 'success' && JSON.stringify(r.output) === JSON.stringify(json), where);
          else expect(r.error?.code === 'S-TOOL-OUTPUT-JSON', where);
        }
        seen[name] =
          `${ref.kind === 'failure' ? `kernel failure "${ref.message}"` : ref.kind} -> ${r.status}${r.error === undefined ? '' : ` ${r.error.code}`}`;
      }
      ctx.observe('outcomes', seen);
    },
  },
  {
    id: 'io.extism-input-over-kernel-memory',
    title:
      "An input larger than an Extism plugin's capped kernel memory ends the call before any plugin code runs, and does not take the worker down",
    category: 'io',
    abi: ['ABI-EXTISM-009'],
    engines: ['extism'],
    expected:
      'with maxMemoryPages 16 (1 MiB) and maxInputBytes 4 MB: a 1.2 MB input is terminal_error S-TOOL-TRAP naming input_bytes and max_memory_pages 16 (not S-TOOL-WORKER-LOST, which a retry could never cure); a 0.9 MB input then succeeds on the same host',
    packs: () => [
      {
        id: 'io.extism_length',
        // Outputs {"n":<input length mod 10>}: it reads the input's length, so the input must be placed.
        module: extismWat(
          `(i32.store8 (i32.const 5) (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (call $input_length) (i64.const 10)))))
   (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
   (i32.const 0)`,
          { data: '{\\"n\\":0}' },
        ),
        manifest: { abi: 'extism/v1', entrypoint: 'run', limits: { ...IO_LIMITS, maxInputBytes: 4_000_000, maxMemoryPages: 16 } },
      },
    ],
    async run(ctx) {
      const big = { pad: 'y'.repeat(1_200_000) };
      const r = await ctx.call('io.extism_length', big);
      expectOutcome(r, 'terminal_error', 'S-TOOL-TRAP');
      expectDetails(r, { max_memory_pages: 16, input_bytes: JSON.stringify(big).length });
      ctx.observe('refused', { code: r.error?.code, message: r.error?.message, details: r.error?.details });
      const fits = { pad: 'y'.repeat(900_000) };
      const ok = expectSuccess(await ctx.call('io.extism_length', fits));
      expect(ok.n === JSON.stringify(fits).length % 10, `the plugin saw another input length: ${JSON.stringify(ok)}`);
    },
  },
  {
    id: 'io.extism-limits',
    title: 'An extism/v1 plugin is held to fuel, memory and the deadline as a helix/v1 guest is',
    category: 'io',
    abi: ['ABI-EXTISM-009'],
    engines: ['extism'],
    expected:
      'S-TOOL-FUEL-EXHAUSTED with fuel_used at least the 2,000,000 budget; S-TOOL-TRAP with memory_pages 16 = max_memory_pages for growth without end; R-TIMEOUT-001 at a 300 ms deadline for a spin with unbounded fuel, within 5 s',
    packs: (engine) => {
      const spin = extismWat('(loop $l (br $l)) (i32.const 0)');
      return [
        ioPack(engine, 'io.spin_fuel', spin, { limits: { ...IO_LIMITS, fuel: 2_000_000 } }),
        ioPack(engine, 'io.spin_time', spin, { timeoutMs: 300, limits: { ...IO_LIMITS, fuel: 1e13 } }),
        ioPack(engine, 'io.grow', extismWat('(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))) unreachable'), {
          limits: { ...IO_LIMITS, maxMemoryPages: 16 },
        }),
      ];
    },
    async run(ctx) {
      const fuel = await ctx.call('io.spin_fuel', {});
      await expectGuestFault(ctx, fuel, 'S-TOOL-FUEL-EXHAUSTED');
      expect(fuel.metrics.fuel_used >= 2_000_000, `fuel_used ${fuel.metrics.fuel_used}`);
      const grow = await ctx.call('io.grow', {});
      await expectGuestFault(ctx, grow, 'S-TOOL-TRAP', { memory_pages: 16, max_memory_pages: 16 });
      const t0 = performance.now();
      const time = await ctx.call('io.spin_time', { after: 'warm' });
      const ms = performance.now() - t0;
      expectOutcome(time, 'retryable_error', 'R-TIMEOUT-001');
      expect(ms < 5000, `the deadline of 300 ms took ${Math.round(ms)} ms`);
      ctx.observe('timeout_ms', Math.round(ms));
    },
  },
  {
    id: 'io.extism-recorded',
    title: 'extism/v1 runs are recorded, replayed and verified, their module record naming the ABI',
    category: 'io',
    abi: ['ABI-EXTISM-010'],
    engines: ['extism'],
    expected:
      'a success is recorded succeeded, the same call replays it (replayed true, same run), verifyRun re-executes it and matches, and the store module record of its digest says extism/v1; a failed run is not replayed',
    packs: (engine) => [ioPack(engine, 'io.echo', EXTISM_ECHO), ioPack(engine, 'io.ret7', extismWat('(i32.const 7)'))],
    async run(ctx) {
      const input = { run: 'recorded', n: 42 };
      const first = await ctx.call('io.echo', input);
      expectSuccess(first);
      const run = await runOf(ctx, first);
      expect(run?.status === 'succeeded', `the run is ${run?.status}`);
      const again = await ctx.call('io.echo', input);
      expect(again.replayed === true && again.run_id === first.run_id, `the same call was not replayed (${again.replayed})`);
      const store = hostStore(await ctx.host());
      const report = await verifyRun(store, first.run_id!, 30_000);
      expect(report.match && report.checks.every((c) => c.ok), `verify did not match: ${JSON.stringify(report).slice(0, 600)}`);
      const record = readModuleRecord(store, first.provenance.digest!) as unknown as Record<string, unknown> | undefined;
      expect(
        record !== undefined && JSON.stringify(record).includes('extism/v1'),
        `the module record does not name extism/v1: ${JSON.stringify(record).slice(0, 300)}`,
      );
      const f1 = await ctx.call('io.ret7', {});
      const f2 = await ctx.call('io.ret7', {});
      expect(f1.status === 'terminal_error' && f2.replayed === false, 'a failed extism/v1 run was replayed');
      ctx.observe(
        'verify',
        report.checks.map((c) => c.check),
      );
    },
  },
];
