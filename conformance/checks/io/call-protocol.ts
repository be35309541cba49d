// io checks of the helix/v1 call protocol: where the host puts the input (alloc, once), where it
// reads the output (a packed pointer and length inside memory), the order of the deallocs, and a
// fresh instance for every call (ABI-CALL-001, ABI-CALL-003..005).
import { expect, expectSuccess, type Check } from '../../check.js';
import { abiPrelude, echoModule, watString } from '../../kit/guest-wat.js';
import { expectGuestFault, ioPack } from '../../kit/io-support.js';
import { BOTH } from './shared.js';

/** A helix/v1 module whose execute returns the packed i64 `packed` (a WAT literal) without writing anything. */
const packedResultModule = (packed: string): string =>
  `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (i64.const ${packed})))`;

/** A helix/v1 echo guest whose alloc answers `ret` (a WAT expression) instead of a place in memory. */
const garbageAllocModule = (ret: string): string => echoModule().replace('(local $p i32)', `(local $p i32) (return ${ret})`);

/** The checks of this file, in the report's order. */
export const callProtocolChecks: readonly Check[] = [
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
    packs: (engine) => [ioPack(engine, 'io.counter', engine.guests.stateCounter.module)],
    async run(ctx) {
      const outs: unknown[] = [];
      const runs = new Set<string | null>();
      for (let i = 0; i < 3; i++) {
        const r = await ctx.call('io.counter', { i });
        outs.push(expectSuccess(r));
        runs.add(r.run_id);
      }
      const want = ctx.engine.guests.stateCounter.fresh;
      for (const o of outs)
        expect(JSON.stringify(o) === JSON.stringify(want), `a call saw state of an earlier one: ${JSON.stringify(outs)}`);
      expect(runs.size === 3, 'the three calls were not three runs');
      ctx.observe('outputs', outs);
    },
  },
];
