// The metering shim of an Extism plugin: a tiny module, generated here, that Extism loads as the
// manifest's "main" module beside the instrumented plugin. Extism's JavaScript SDK can only call
// exports of "main" and read what they pass to `output_set`, and in worker mode the plugin's
// instance lives in Extism's own worker, out of the host's reach. The shim imports the plugin's
// fuel counter (`__helix_fuel`, a mutable global the instrumenter exports), its memory, its
// former start function (`__helix_start`) and its entry function. It re-exports the entry
// through a wrapper that sets the counter to the call's budget, runs the start function, calls
// the entry and keeps its return code; and it exports `__helix_report`, which outputs the
// counter, the return code and the memory size. Because it reads the live global, the report is
// right after a trap too (fuel exhaustion is a trap with the counter below zero), and it adds no
// instruction to the plugin's own code. Nothing of the plugin runs at instantiation: Extism's
// worker turns an instantiation failure into an uncaught exception of the host process.
import { MEMORY_EXPORT } from '../../abi/index.js';
import { FUEL_EXPORT, START_EXPORT } from '../wasm/index.js';
import { Writer } from '../wasm/writer.js';

/** The name the instrumented plugin has in the Extism manifest; the shim imports from it. */
export const PLUGIN_MODULE_NAME = 'helix:plugin';

/** The shim export that outputs the report (see decodeReport). */
export const REPORT_EXPORT = '__helix_report';

/** Bytes of the report: remaining fuel (i64), entry return code (i64, -1 if it never returned), memory pages (i64). */
export const REPORT_BYTES = 24;

/** What `__helix_report` tells after a call. */
export interface ShimReport {
  /** The fuel counter; negative when the budget ran out. */
  readonly remaining: bigint;
  /** The entry function's i32 result, or null when it did not return (trap, abort). */
  readonly returnCode: number | null;
  readonly memoryPages: number;
}

/** Decodes the report's little-endian words; null when the bytes are not a report. */
export function decodeReport(bytes: Uint8Array): ShimReport | null {
  if (bytes.length !== REPORT_BYTES) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rc = view.getBigInt64(8, true);
  return { remaining: view.getBigInt64(0, true), returnCode: rc < 0n ? null : Number(BigInt.asIntN(32, rc)), memoryPages: Number(view.getBigInt64(16, true)) };
}

const I32 = 0x7f;
const I64 = 0x7e;
const FUNC = 0x60;
const EXTISM_ENV = 'extism:host/env';

/** The shim for a plugin whose entry is `entrypoint` (`() -> i32`), metered with `fuel`. */
export function buildShim(entrypoint: string, fuel: number, hasStart: boolean): Uint8Array {
  const out = new Writer(512).bytes(Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00));
  const section = (id: number, body: Writer) => out.u8(id).u32(body.length).bytes(body.finish());
  // Types: 0 () -> i32 (entry), 1 () -> () (report, start), 2 (i64) -> i64 (alloc), 3 (i64, i64) -> () (store_u64, output_set).
  section(1, new Writer().u32(4).u8(FUNC).u32(0).u32(1).u8(I32).u8(FUNC).u32(0).u32(0).u8(FUNC).u32(1).u8(I64).u32(1).u8(I64).u8(FUNC).u32(2).u8(I64).u8(I64).u32(0));
  // Imports: funcs 0 entry, 1 alloc, 2 store_u64, 3 output_set, [4 start]; global 0 the fuel counter; memory 0.
  const imports = new Writer()
    .u32(hasStart ? 7 : 6)
    .name(PLUGIN_MODULE_NAME).name(entrypoint).u8(0).u32(0)
    .name(EXTISM_ENV).name('alloc').u8(0).u32(2)
    .name(EXTISM_ENV).name('store_u64').u8(0).u32(3)
    .name(EXTISM_ENV).name('output_set').u8(0).u32(3);
  if (hasStart) imports.name(PLUGIN_MODULE_NAME).name(START_EXPORT).u8(0).u32(1);
  imports.name(PLUGIN_MODULE_NAME).name(FUEL_EXPORT).u8(3).u8(I64).u8(1).name(PLUGIN_MODULE_NAME).name(MEMORY_EXPORT).u8(2).u8(0).u32(0);
  section(2, imports);
  const imported = hasStart ? 5 : 4;
  // The entry wrapper and the report.
  section(3, new Writer().u32(2).u32(0).u32(1));
  // Global 1: the entry's return code, -1 until it returns.
  section(6, new Writer().u32(1).u8(I64).u8(1).u8(0x42).s64(-1n).u8(0x0b));
  section(7, new Writer().u32(2).name(entrypoint).u8(0).u32(imported).name(REPORT_EXPORT).u8(0).u32(imported + 1));
  // (local i32) fuel = budget; [call $start]; rc = call $entry; global 1 = rc; return rc
  const wrapper = new Writer().u32(1).u32(1).u8(I32).u8(0x42).s64(BigInt(fuel)).u8(0x24).u32(0);
  if (hasStart) wrapper.u8(0x10).u32(4);
  wrapper.bytes(Uint8Array.of(0x10, 0x00, 0x22, 0x00, 0xad, 0x24, 0x01, 0x20, 0x00, 0x0b));
  // (local i64) ptr = alloc(24); store_u64(ptr, fuel); store_u64(ptr+8, rc);
  // store_u64(ptr+16, memory.size); output_set(ptr, 24)
  const report = new Writer()
    .u32(1).u32(1).u8(I64)
    .bytes(Uint8Array.of(0x42, REPORT_BYTES, 0x10, 0x01, 0x21, 0x00))
    .bytes(Uint8Array.of(0x20, 0x00, 0x23, 0x00, 0x10, 0x02))
    .bytes(Uint8Array.of(0x20, 0x00, 0x42, 0x08, 0x7c, 0x23, 0x01, 0x10, 0x02))
    .bytes(Uint8Array.of(0x20, 0x00, 0x42, 0x10, 0x7c, 0x3f, 0x00, 0xad, 0x10, 0x02))
    .bytes(Uint8Array.of(0x20, 0x00, 0x42, REPORT_BYTES, 0x10, 0x03, 0x0b));
  section(10, new Writer().u32(2).u32(wrapper.length).bytes(wrapper.finish()).u32(report.length).bytes(report.finish()));
  return out.finish();
}
