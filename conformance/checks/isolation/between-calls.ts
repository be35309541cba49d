// Isolation checks between calls of one tool: what a call leaves in memory, globals, a table, a
// dropped data segment (or an Extism variable) is gone in the next call, on a recycled instance or
// a fresh one (ABI-CALL-001, ABI-EXTISM-006).
import { expect, expectSuccess, type Check } from '../../check.js';
import { numberResultModule } from '../../kit/guest-wat.js';
import { describeFlags, plantPack } from './shared.js';

/** The checks of this file, in the report's order. */
export const betweenCallChecks: readonly Check[] = [
  {
    id: 'isolation.memory-and-globals-between-calls',
    title: 'A secret planted in memory, a global (and an Extism variable) by one call is gone in the next call of the same tool',
    category: 'isolation',
    abi: ['ABI-CALL-001', 'ABI-EXTISM-006'],
    engines: ['helix', 'extism'],
    expected:
      'each of 8 calls (each planting its own input in memory at 60,000, setting a mutable global, an Extism variable on extism, and growing memory on the second helix tool) finds nothing of the call before: flags 0, alloc giving the same input pointer every time',
    // The growing plant where the engine's kit has one (helix/v1).
    packs: (engine) => [plantPack(engine, 'iso.plant'), plantPack(engine, 'iso.plant_grow', true)].filter((p) => p !== undefined),
    async run(ctx) {
      const tools = ['iso.plant', ...(ctx.engine.guests.plant(true) === undefined ? [] : ['iso.plant_grow'])];
      for (const tool of tools) {
        const seen: Array<{ flags: number; ptr?: number }> = [];
        for (let i = 0; i < 8; i++) {
          const r = await ctx.call(tool, { secret: `SECRET-${tool}-${i}-${'s'.repeat(i)}` });
          const f = ctx.engine.guests.planted(expectSuccess(r));
          seen.push(f);
          expect(f.flags === 0, `${tool} call ${i + 1} found ${describeFlags(f.flags)} of the call before`);
        }
        ctx.observe(tool, seen);
        // Where alloc placed the input, when the ABI has the guest place it (helix/v1).
        if (seen[0]?.ptr !== undefined)
          expect(
            new Set(seen.map((s) => s.ptr)).size === 1,
            `${tool}: alloc gave different input pointers across calls: ${seen.map((s) => s.ptr).join(', ')}`,
          );
      }
      const stats = await (await ctx.host()).engineStats();
      ctx.observe('engine_stats', stats);
    },
  },
  {
    id: 'isolation.table-edit-between-calls',
    title: 'A call that rewires a table entry to its own function does not leave it rewired for the next call',
    category: 'isolation',
    abi: ['ABI-CALL-001'],
    engines: ['helix'],
    expected:
      'each of 5 calls reads table slot 0 through call_indirect (0 from the original function) before setting it to a function answering 42: every call answers 0',
    packs: () => [
      {
        id: 'iso.table',
        module: numberResultModule('(call_indirect (type $ret) (i32.const 0)) (table.set $t (i32.const 0) (ref.func $evil))', {
          extra:
            '(type $ret (func (result i64))) (table $t 1 funcref) (elem (i32.const 0) func $zero) (elem declare func $evil) (func $zero (result i64) (i64.const 0)) (func $evil (result i64) (i64.const 42))',
        }),
      },
    ],
    async run(ctx) {
      const values: unknown[] = [];
      for (let i = 0; i < 5; i++) {
        const out = expectSuccess(await ctx.call('iso.table', { i }));
        values.push(out.value);
        expect(out.value === 0, `call ${i + 1} found the table entry the call before set (answered ${String(out.value)})`);
      }
      ctx.observe('values', values);
    },
  },
  {
    id: 'isolation.data-drop-between-calls',
    title: 'A call that drops its passive data segment does not leave it dropped for the next call',
    category: 'isolation',
    abi: ['ABI-CALL-001'],
    engines: ['helix'],
    expected:
      'each of 5 calls copies the segment with memory.init then data.drop; every call succeeds and reads "S" (83), never a trap from a segment an earlier call dropped',
    packs: () => [
      {
        id: 'iso.segment',
        module: numberResultModule(
          '(memory.init $seg (i32.const 50000) (i32.const 0) (i32.const 14)) (data.drop $seg) (i64.load8_u (i32.const 50000))',
          {
            extra: '(data $seg "SECRET-SEGMENT")',
          },
        ),
      },
    ],
    async run(ctx) {
      for (let i = 0; i < 5; i++) {
        const out = expectSuccess(await ctx.call('iso.segment', { i }));
        expect(out.value === 83, `call ${i + 1} answered ${String(out.value)}, not 83`);
      }
    },
  },
];
