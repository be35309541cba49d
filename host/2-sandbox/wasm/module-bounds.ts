// Bounds on what a module can make the host and the engine allocate: entry counts within the
// engine's limits, refused while decoding (ABI-ALLOC-006); memories' and tables' initial sizes
// within a bound they share, and every defined one given a maximum such that all of them together
// can never grow past it (ABI-ALLOC-001..004).

import { MemoryCapError, TableCeilingError } from './errors.js';
import type { MemoryDesc, ParsedModule, SectionSpan, TableDesc } from './parsed-module.js';
import type { Reader } from './reader.js';
import { Writer } from './writer.js';

/**
 * Most entries of each kind a module may have, imports included: V8's limits (Node 20), so the
 * decoder refuses only what the engine would, before it decodes, keeps and instruments them.
 */
export const ENGINE_LIMITS = {
  types: 1_000_000,
  functions: 1_000_000,
  imports: 100_000,
  exports: 100_000,
  globals: 1_000_000,
  tables: 100_000,
  memories: 100_000,
  locals: 50_000,
} as const;

/**
 * Reads a section's entry count; `have` entries of the kind are already known (imported ones),
 * and a total past the engine's limit is refused at the count's offset.
 */
export function readCount(r: Reader, kind: keyof typeof ENGINE_LIMITS, have = 0): number {
  const at = r.pos;
  const count = r.u32();
  const limit = ENGINE_LIMITS[kind];
  if (have + count > limit) r.fail(`${have + count} ${kind}, more than the engine's limit of ${limit}`, at);
  return count;
}

/** Largest maximum a 32-bit memory may declare (4 GiB). */
const MEMORY32_MAX_PAGES = 65536;

/** Largest size a 32-bit table may declare. */
const TABLE32_MAX_ELEMENTS = 0xffff_ffff;

/** A memory or table's limits, and the most it may ever hold whatever the bound. */
interface Sized {
  readonly initial: number;
  readonly maximum: number | null;
  readonly limit: number;
}

/**
 * Throws a MemoryCapError or TableCeilingError naming the first defined memory or table at which
 * the initial sizes, summed in index order, pass `memoryCap` pages or `tableCeiling` elements.
 */
export function checkInitialSizes(m: ParsedModule, memoryCap: number, tableCeiling: number): void {
  let pages = 0;
  m.memories.forEach((mem, i) => {
    if (mem.imported) return;
    pages += mem.initial;
    if (pages > memoryCap) throw new MemoryCapError(i, mem.initial, memoryCap, pages);
  });
  let elements = 0;
  m.tables.forEach((table, i) => {
    if (table.imported) return;
    elements += table.initial;
    if (elements > tableCeiling) throw new TableCeilingError(i, table.initial, tableCeiling, elements);
  });
}

/**
 * New maxima for entries that share `total`: each keeps its initial size and gets a share of the
 * room left (total minus all initial sizes), never more than it declared or than its `limit`.
 * The room is shared evenly, and what an entry does not want is shared among the others, so
 * one memory alone may grow to the whole cap and the maxima never add up to more than `total`.
 * A maximum below its initial size (an invalid module) is kept, for the engine to refuse.
 */
export function shareRoom(entries: readonly Sized[], total: number): number[] {
  const invalid = (e: Sized) => e.maximum !== null && e.maximum < e.initial;
  const wants = entries.map((e) => (invalid(e) ? 0 : Math.max(0, Math.min(e.maximum ?? Infinity, e.limit) - e.initial)));
  const extra = entries.map(() => 0);
  let room = total - entries.reduce((sum, e) => sum + e.initial, 0);
  let left = entries.length;
  // Smallest wants first, so that what they leave is shared among the larger ones.
  const order = entries.map((_, i) => i).sort((a, b) => wants[a]! - wants[b]! || a - b);
  for (const i of order) {
    extra[i] = Math.min(wants[i]!, Math.floor(room / left));
    room -= extra[i]!;
    left -= 1;
  }
  // The remainders of the even shares, in index order.
  for (let i = 0; i < entries.length && room > 0; i++) {
    const more = Math.min(wants[i]! - extra[i]!, room);
    extra[i] = extra[i]! + more;
    room -= more;
  }
  return entries.map((e, i) => (invalid(e) ? e.maximum! : e.initial + extra[i]!));
}

/** The memory section with every defined memory's maximum rewritten so that all fit `cap` pages. */
export function memorySection(m: ParsedModule, s: SectionSpan, cap: number): Writer {
  const defined = m.memories.filter((mem) => !mem.imported);
  const maxima = shareRoom(
    defined.map((mem) => ({ ...mem, limit: mem.memory64 ? Infinity : MEMORY32_MAX_PAGES })),
    cap,
  );
  return rewriteLimits(m, s, defined, maxima);
}

/** The table section with every defined table's maximum rewritten so that all fit `ceiling` elements. */
export function tableSection(m: ParsedModule, s: SectionSpan, ceiling: number): Writer {
  const defined = m.tables.filter((table) => !table.imported);
  const maxima = shareRoom(
    defined.map((table) => ({ ...table, limit: table.is64 ? Infinity : TABLE32_MAX_ELEMENTS })),
    ceiling,
  );
  return rewriteLimits(m, s, defined, maxima);
}

/**
 * The section's content copied byte for byte, except each entry's limits, written again with
 * the same flags (a maximum now always present), its initial size and its new maximum. A u64
 * size (memory64, table64) has the same LEB128 encoding as a u32 one of the same value.
 */
function rewriteLimits(m: ParsedModule, s: SectionSpan, entries: readonly (MemoryDesc | TableDesc)[], maxima: readonly number[]): Writer {
  const w = new Writer(s.end - s.contentStart + 16 * entries.length);
  let cursor = s.contentStart;
  entries.forEach((entry, i) => {
    w.bytes(m.bytes.subarray(cursor, entry.limitsStart));
    w.u8(m.bytes[entry.limitsStart]! | 0x01)
      .u32(entry.initial)
      .u32(maxima[i]!);
    cursor = entry.limitsEnd;
  });
  return w.bytes(m.bytes.subarray(cursor, s.end));
}
