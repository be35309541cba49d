// instrumentModule: rewrites a module for the sandbox (fuel counter and metering, memory cap,
// table ceiling, start function turned into an export, mutable globals exported for recycling),
// copying every section it does not need to change byte for byte.

import { MAX_TABLE_ELEMENTS } from '../../../abi/constants.js';
import { FUEL_EXPORT, GLOBAL_EXPORT_PREFIX, RESERVED_EXPORT_PREFIX, START_EXPORT } from './costs.js';
import { moduleInfo } from './decode.js';
import { WasmDecodeError } from './errors.js';
import { rewriteBody } from './fuel-rewrite.js';
import { checkInitialSizes, ENGINE_LIMITS, memorySection, tableSection } from './module-bounds.js';
import { parseModule, SectionId, sectionRank } from './module-parser.js';
import type { ParsedModule, SectionSpan } from './parsed-module.js';
import { Reader } from './reader.js';
import type { InstrumentOptions, InstrumentResult } from './types.js';
import { Writer } from './writer.js';

/**
 * Rewrites `bytes` so that it runs metered under Helix (see InstrumentResult). Throws a
 * WasmDecodeError when the module does not decode or already uses a `__helix_` export name, a
 * MemoryCapError when the defined memories' initial sizes together are over
 * `options.maxMemoryPages`, and a TableCeilingError when the defined tables' initial sizes
 * together are over `options.maxTableElements`.
 */
export function instrumentModule(bytes: Uint8Array, options: InstrumentOptions): InstrumentResult {
  const cap = options.maxMemoryPages;
  const ceiling = options.maxTableElements ?? MAX_TABLE_ELEMENTS;
  for (const [name, value] of [
    ['maxMemoryPages', cap],
    ['maxTableElements', ceiling],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new RangeError(`options.${name} must be a non-negative integer, got ${String(value)}`);
  }
  const m = parseModule(bytes);
  for (const e of m.exports) {
    if (e.name.startsWith(RESERVED_EXPORT_PREFIX)) {
      throw new WasmDecodeError(e.offset, `reserved export name "${e.name}" (the ${RESERVED_EXPORT_PREFIX} prefix belongs to the host)`);
    }
  }
  checkInitialSizes(m, cap, ceiling);
  checkExportCount(m);

  const fuelGlobal = m.globals.length;
  const globalExports: string[] = [];
  m.globals.forEach((g, i) => {
    if (g.mutable && !g.imported) globalExports.push(`${GLOBAL_EXPORT_PREFIX}${i}`);
  });
  const added = new Writer();
  let addedCount = 1;
  added.name(FUEL_EXPORT).u8(3).u32(fuelGlobal);
  if (m.start !== null) {
    added.name(START_EXPORT).u8(0).u32(m.start);
    addedCount++;
  }
  for (const name of globalExports) {
    added
      .name(name)
      .u8(3)
      .u32(Number(name.slice(GLOBAL_EXPORT_PREFIX.length)));
    addedCount++;
  }

  const out = new Writer(bytes.length + 1024);
  out.bytes(bytes.subarray(0, 8));
  let wroteGlobals = false;
  let wroteExports = false;
  const ensure = (rank: number) => {
    if (!wroteGlobals && rank > sectionRank[SectionId.global]!) {
      section(out, SectionId.global, new Writer().u32(1).bytes(fuelGlobalEntry));
      wroteGlobals = true;
    }
    if (!wroteExports && rank > sectionRank[SectionId.export]!) {
      section(out, SectionId.export, new Writer().u32(addedCount).bytes(added.finish()));
      wroteExports = true;
    }
  };
  for (const s of m.sections) {
    if (s.id !== SectionId.custom) ensure(sectionRank[s.id]!);
    if (s.id === SectionId.memory) section(out, s.id, memorySection(m, s, cap));
    else if (s.id === SectionId.table) section(out, s.id, tableSection(m, s, ceiling));
    else if (s.id === SectionId.global) {
      section(out, s.id, appendEntries(m, s, 1, fuelGlobalEntry));
      wroteGlobals = true;
    } else if (s.id === SectionId.export) {
      section(out, s.id, appendEntries(m, s, addedCount, added.finish()));
      wroteExports = true;
    } else if (s.id === SectionId.code) section(out, s.id, codeSection(m, fuelGlobal));
    else if (s.id !== SectionId.start) out.bytes(bytes.subarray(s.start, s.end));
  }
  ensure(Infinity);

  return {
    bytes: out.finish(),
    info: moduleInfo(m),
    recyclable: isRecyclable(m),
    globalExports,
    hasStart: m.start !== null,
  };
}

/**
 * The exports the instrumenter adds (the fuel counter, the start function, one per mutable
 * defined global) must keep the module within the engine's export limit: refused here, before
 * they are built, rather than by the engine after (ABI-ALLOC-006).
 */
function checkExportCount(m: ParsedModule): void {
  const mutable = m.globals.filter((g) => g.mutable && !g.imported).length;
  const total = m.exports.length + 1 + (m.start === null ? 0 : 1) + mutable;
  if (total > ENGINE_LIMITS.exports) {
    const at = m.sections.find((s) => s.id === SectionId.global)?.start ?? 8;
    throw new WasmDecodeError(
      at,
      `${mutable} mutable globals: with the module's ${m.exports.length} exports the instrumented module would have ${total}, more than the engine's limit of ${ENGINE_LIMITS.exports} exports`,
    );
  }
}

/** `(global (mut i64) (i64.const 0))`. */
const fuelGlobalEntry = Uint8Array.of(0x7e, 0x01, 0x42, 0x00, 0x0b);

function section(out: Writer, id: number, content: Writer): void {
  out.u8(id).u32(content.length).bytes(content.finish());
}

/** A vector section with `extra` more entries appended after the original ones. */
function appendEntries(m: ParsedModule, s: SectionSpan, extra: number, entries: Uint8Array): Writer {
  const r = new Reader(m.bytes, s.contentStart, s.end);
  const count = r.u32();
  return new Writer(s.end - s.contentStart + entries.length + 8)
    .u32(count + extra)
    .bytes(m.bytes.subarray(r.pos, s.end))
    .bytes(entries);
}

function codeSection(m: ParsedModule, fuelGlobal: number): Writer {
  const w = new Writer(m.bytes.length);
  w.u32(m.bodies.length);
  for (let i = 0; i < m.bodies.length; i++) rewriteBody(m, i, fuelGlobal, w);
  return w;
}

/**
 * Whether restoring memory contents and the exported mutable globals makes a used instance
 * indistinguishable from a fresh one. An instance's state is its memories, globals, tables and
 * the dropped-or-not flag of each data and element segment, plus whatever it shares with the
 * outside. Memory and mutable globals the host restores (immutable globals cannot change).
 * Tables can change only through table.set/grow/fill/copy/init, or from outside when exported
 * or imported; segment flags only through data.drop and elem.drop. Imported memories, tables
 * and globals, and shared memories, hold state that other parties change. A v128 or exnref
 * global cannot be read or written from JavaScript, so it could not be restored.
 */
function isRecyclable(m: ParsedModule): boolean {
  if (m.mutatesTables || m.dropsData) return false;
  if (m.memories.some((mem) => mem.shared)) return false;
  if (m.imports.some((i) => i.kind === 'memory' || i.kind === 'table' || i.kind === 'global')) return false;
  if (m.exports.some((e) => e.kind === 'table')) return false;
  return !m.globals.some((g) => g.mutable && (g.type === 'v128' || g.type === 'exnref' || g.type.includes('exn')));
}
