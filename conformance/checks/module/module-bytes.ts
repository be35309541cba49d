// Conformance checks of module shape: the bytes themselves. What is not WebAssembly, what the
// manifest's digest does not name, a 64-bit memory, and a start function, which runs inside a
// call, metered, never at load.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, expectOutcome, type Check } from '../../check.js';
import { expectLine, refusedWith } from '../../kit/refusals.js';
import { DEFAULT_LIMITS, digestOf } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';

/** The checks of this file, in the report's order. */
export const moduleByteChecks: readonly Check[] = [
  {
    id: 'module.not-webassembly',
    title: 'Bad magic, a truncated module, a function body cut short and a GC-proposal module are refused',
    category: 'module',
    abi: ['ABI-MODULE-001', 'ABI-LOAD-001', 'ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with one ABI-MODULE-001 violation per toolpack (four), each saying why the module cannot be decoded',
    async packs(engine) {
      const good = await wat2wasm(engine.guests.bare());
      const manifest = { ...engine.manifest };
      // The code section is the last one: cutting the last bytes cuts a function body.
      const cutBody = good.slice(0, good.length - 3);
      const packs = [
        { id: 'module.elf', module: new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 1, 0, 0, 0, ...good.slice(8)]), manifest },
        { id: 'module.truncated', module: good.slice(0, 5), manifest },
        { id: 'module.cut_body', module: cutBody, manifest },
      ];
      // A GC-proposal type (a struct, form 0x5f), written by hand: wabt cannot write it.
      packs.push({ id: 'module.gc', module: GC_MODULE, manifest });
      return packs;
    },
    async run(ctx) {
      const lines = await refusedWith(ctx);
      for (const id of ['module_elf', 'module_truncated', 'module_cut_body', 'module_gc']) {
        expectLine(lines, `for ${id}`, new RegExp(id), /ABI-MODULE-001/);
      }
    },
  },
  {
    id: 'module.digest-mismatch',
    title: 'A module swapped after its manifest was written (digest mismatch) is refused',
    category: 'module',
    abi: ['ABI-MODULE-002', 'ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected: "P-PRECOND-MANIFEST-INVALID at the digest field, D-DATA-DIGEST-MISMATCH naming the module's real digest and the manifest's",
    async packs(engine) {
      const decoy = await wat2wasm(engine.guests.bare());
      const evil = engine.guests.bare('(loop $l (br $l))');
      return [engine.pack('module.swapped', evil, { digest: digestOf(decoy) })];
    },
    async run(ctx) {
      const lines = await refusedWith(ctx);
      const dir = path.join(await ctx.toolpacksDir(), 'module.swapped');
      const real = digestOf(readFileSync(path.join(dir, 'tool.wasm')));
      expectLine(lines, 'at digest naming both digests', /digest: D-DATA-DIGEST-MISMATCH/, new RegExp(real.replace(':', '.')));
      ctx.observe('module_digest', real);
    },
  },
  {
    id: 'module.memory64',
    title: 'A 64-bit memory is refused on both ABIs',
    category: 'module',
    abi: ['ABI-MEMORY-001', 'ABI-EXTISM-001'],
    engines: ['helix', 'extism'],
    expected: 'P-PRECOND-MANIFEST-INVALID: ABI-MEMORY-001 memory 0 is 64-bit',
    packs: (engine) => [engine.pack('module.wide', engine.guests.memory64)],
    async run(ctx) {
      const lines = await refusedWith(ctx);
      expectLine(lines, 'for memory64', /module_wide/, /ABI-MEMORY-001/, /64-bit/);
    },
  },
  {
    id: 'module.start-function',
    title: 'A start function that spins or traps runs inside the call, metered, never at load',
    category: 'module',
    abi: ['ABI-EXTISM-005', 'ABI-CALL-002'],
    engines: ['helix', 'extism'],
    expected:
      'the host starts (the loader runs no guest code); a call of the spinning start ends S-TOOL-FUEL-EXHAUSTED with fuel_used at least the budget; a trapping start ends S-TOOL-TRAP',
    packs: (engine) => {
      const limits = { ...DEFAULT_LIMITS, fuel: 2_000_000 };
      const spin = '(start $init) (func $init (loop $l (br $l)))';
      const trap = '(start $init) (func $init unreachable)';
      return [
        engine.pack('module.start_spin', engine.guests.bare('', { extra: spin }), { limits, timeoutMs: 30_000 }),
        engine.pack('module.start_trap', engine.guests.bare('', { extra: trap }), { limits }),
      ];
    },
    async run(ctx) {
      const t0 = performance.now();
      await ctx.host();
      ctx.observe('host_start_ms', Math.round(performance.now() - t0));
      const spin = await ctx.call('module.start_spin', {});
      expectOutcome(spin, 'terminal_error', 'S-TOOL-FUEL-EXHAUSTED');
      expect(spin.metrics.fuel_used >= 2_000_000, `fuel_used ${spin.metrics.fuel_used} is below the budget`);
      const trap = await ctx.call('module.start_trap', {});
      expectOutcome(trap, 'terminal_error', 'S-TOOL-TRAP');
      ctx.observe('trap_details', trap.error?.details);
    },
  },
];

/** A module whose type section holds one GC-proposal struct type (form 0x5f), which Node 20 does not accept. */
const GC_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x5f, 0x01, 0x7f, 0x00]);
